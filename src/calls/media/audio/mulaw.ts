// G.711 mu-law, the telephone codec Twilio Media Streams carry (8 kHz, one byte a sample), to and from
// PCM16 little-endian. The classic segment encoder (Sun's g711.c, also ITU-T G.191's reference): bias
// 0x84, clip at 32635, bits inverted on the wire. Both directions are table lookups, built once.

const BIAS = 0x84;
const CLIP = 32_635;

function encodeSample(value: number): number {
  let sample = value;
  const sign = sample < 0 ? 0x80 : 0;
  if (sign) sample = -sample;
  if (sample > CLIP) sample = CLIP;
  sample += BIAS;
  // The segment is the position of the highest set bit above bit 7 (0..7).
  const exponent = Math.max(0, 31 - Math.clz32(sample) - 7);
  const mantissa = (sample >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function decodeByte(byte: number): number {
  const inverted = ~byte & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const magnitude = ((((inverted & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return inverted & 0x80 ? -magnitude : magnitude;
}

/** Every mu-law byte's PCM16 value. */
const DECODE = Int16Array.from({ length: 256 }, (_, byte) => decodeByte(byte));
/** Every PCM16 value's mu-law byte, indexed by the sample as an unsigned 16-bit number. */
const ENCODE = Uint8Array.from({ length: 65_536 }, (_, index) => encodeSample(index < 32_768 ? index : index - 65_536));

/** mu-law bytes -> PCM16 LE (two bytes a sample). */
export function mulawToPcm16(mulaw: Buffer): Buffer {
  const out = Buffer.allocUnsafe(mulaw.length * 2);
  for (let i = 0; i < mulaw.length; i++) out.writeInt16LE(DECODE[mulaw[i]], i * 2);
  return out;
}

/** PCM16 LE -> mu-law bytes; a stray odd last byte is ignored (callers hand whole samples). */
export function pcm16ToMulaw(pcm: Buffer): Buffer {
  const count = pcm.length >> 1;
  const out = Buffer.allocUnsafe(count);
  for (let i = 0; i < count; i++) out[i] = ENCODE[pcm.readUInt16LE(i * 2)];
  return out;
}

/** The mu-law byte of digital silence. */
export const MULAW_SILENCE = 0xff;
