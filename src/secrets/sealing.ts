// AES-256-GCM sealing of short secrets kept at rest (idempotent answers, telephony auth tokens): a
// random 12-byte nonce, the 16-byte tag, then the ciphertext, base64. A wrong key or a changed byte
// makes opening throw.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export function sealText(text: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

export function openText(stored: string, key: Buffer): string {
  const bytes = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
