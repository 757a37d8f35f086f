import { describe, expect, it } from 'vitest';
import { downsample24kTo8k, upsample8kTo24k } from '../../src/calls/media/audio/pcm.js';
import { MULAW_SILENCE, mulawToPcm16, pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';

const pcm = (...values: number[]) => {
  const out = Buffer.alloc(values.length * 2);
  values.forEach((value, i) => out.writeInt16LE(value, i * 2));
  return out;
};
const samples = (buf: Buffer) => Array.from({ length: buf.length >> 1 }, (_, i) => buf.readInt16LE(i * 2));

describe('G.711 mu-law', () => {
  it('decodes the reference values of the G.711 table', () => {
    // Byte -> linear value as in ITU-T G.711 / Sun g711.c (bits inverted on the wire).
    const table: Array<[number, number]> = [
      [0xff, 0],
      [0x7f, 0],
      [0xfe, 8],
      [0x7e, -8],
      [0xf0, 120],
      [0xef, 132],
      [0xe0, 372],
      [0x8f, 16_764],
      [0x80, 32_124],
      [0x00, -32_124],
      [0x0f, -16_764],
    ];
    const decoded = samples(mulawToPcm16(Buffer.from(table.map(([byte]) => byte))));
    expect(decoded).toEqual(table.map(([, value]) => value));
  });

  it('encodes the reference values, clipping at full scale', () => {
    const encoded = pcm16ToMulaw(pcm(0, -1, 8, -8, 120, 16_764, 32_124, 32_767, -32_768, -32_124));
    expect([...encoded]).toEqual([0xff, 0x7f, 0xfe, 0x7e, 0xf0, 0x8f, 0x80, 0x80, 0x00, 0x00]);
    expect(MULAW_SILENCE).toBe(pcm16ToMulaw(pcm(0))[0]);
  });

  it('encodes every decoded value back to its byte (negative zero aside)', () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((byte) => byte !== 0x7f));
    expect([...pcm16ToMulaw(mulawToPcm16(bytes))]).toEqual([...bytes]);
  });

  it('keeps a linear value within half a quantisation step of the segment', () => {
    for (let value = -32_000; value <= 32_000; value += 7) {
      const back = samples(mulawToPcm16(pcm16ToMulaw(pcm(value))))[0];
      // Segment e has steps of 2^(e+3); the error is at most half a step plus the bias rounding.
      const step = 1 << (Math.max(0, 31 - Math.clz32(Math.abs(value) + 0x84) - 7) + 3);
      expect(Math.abs(back - value)).toBeLessThanOrEqual(step);
    }
  });

  it('carries a tone through 8 kHz mu-law and 24 kHz PCM both ways', () => {
    const tone8k = Buffer.alloc(1_600 * 2);
    for (let i = 0; i < 1_600; i++) tone8k.writeInt16LE(Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / 8_000)), i * 2);
    const phone = pcm16ToMulaw(tone8k);
    expect(phone.length).toBe(1_600);
    const wide = upsample8kTo24k(mulawToPcm16(phone));
    expect(wide.length).toBe((1_600 - 1) * 3 * 2);
    const back = pcm16ToMulaw(downsample24kTo8k(wide));
    const original = samples(mulawToPcm16(phone));
    const returned = samples(mulawToPcm16(back));
    // The downsampler's filter delays by 5 samples at 8 kHz; compare the aligned middle.
    let error = 0;
    let energy = 0;
    for (let i = 100; i < 1_400; i++) {
      error += (returned[i + 5] - original[i]) ** 2;
      energy += original[i] ** 2;
    }
    expect(error / energy).toBeLessThan(0.01);
  });
});
