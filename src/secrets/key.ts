// The key that seals secrets at rest: SECRETS_KEY, or else a random key kept in DATA_DIR/secrets.key
// (mode 0600), made on first start. Several instances on one PostgreSQL must share one SECRETS_KEY;
// the server starts without it (every setting is optional) and warns.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';

export const SECRETS_KEY_FILE = 'secrets.key';

export async function resolveSecretsKey(config: Pick<Config, 'secretsKey' | 'dataDir'>): Promise<Buffer> {
  if (config.secretsKey) return config.secretsKey;
  const file = path.join(config.dataDir, SECRETS_KEY_FILE);
  await mkdir(config.dataDir, { recursive: true });
  try {
    // `wx`: never overwrite a key that exists (it opens the sealed tokens).
    await writeFile(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key; restore it, or set SECRETS_KEY`);
  return key;
}
