import { describe, expect, it } from 'vitest';
import {
  Downsampler24kTo8k,
  WavChunker,
  Upsampler8kTo24k,
  WAV_HEADER_BYTES,
  downsample24kTo8k,
  parseWavHeader,
  upsample8kTo24k,
  wavChunk,
  wavHeader,
} from '../../src/calls/media/audio/pcm.js';
import { MessageReader, encodeMessage, uuidFromBytes, uuidToBytes } from '../../src/calls/media/transports/audiosocket/protocol.js';

const sine = (count: number, rate: number, hz: number, amplitude = 10_000, phase = 0) => {
  const out = Buffer.alloc(count * 2);
  for (let i = 0; i < count; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * (i + phase)) / rate)), i * 2);
  return out;
};
const samples = (buf: Buffer) => Array.from({ length: buf.length >> 1 }, (_, i) => buf.readInt16LE(i * 2));
const rms = (values: number[]) => Math.sqrt(values.reduce((sum, v) => sum + v * v, 0) / values.length);

describe('WAV chunks', () => {
  it('writes the canonical 44-byte header of 24 kHz mono PCM16', () => {
    const header = wavHeader(4_800);
    expect(header.length).toBe(44);
    expect(header.toString('ascii', 0, 4)).toBe('RIFF');
    expect(header.readUInt32LE(4)).toBe(36 + 4_800);
    expect(header.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(header.readUInt32LE(16)).toBe(16);
    expect(header.readUInt16LE(20)).toBe(1);
    expect(header.readUInt16LE(22)).toBe(1);
    expect(header.readUInt32LE(24)).toBe(24_000);
    expect(header.readUInt32LE(28)).toBe(48_000);
    expect(header.readUInt16LE(32)).toBe(2);
    expect(header.readUInt16LE(34)).toBe(16);
    expect(header.toString('ascii', 36, 40)).toBe('data');
    expect(header.readUInt32LE(40)).toBe(4_800);
  });

  it('wraps samples into a complete file that parses back', () => {
    const pcm = sine(100, 24_000, 440);
    const wav = wavChunk(pcm);
    expect(parseWavHeader(wav)).toEqual({
      riffSize: 36 + 200,
      format: 1,
      channels: 1,
      sampleRate: 24_000,
      byteRate: 48_000,
      blockAlign: 2,
      bitsPerSample: 16,
      dataBytes: 200,
    });
    expect(wav.subarray(WAV_HEADER_BYTES).equals(pcm)).toBe(true);
    expect(parseWavHeader(Buffer.from('not a wav file at all, not even close to one....'))).toBeNull();
  });

  it('wraps each piece of audio in WAV chunks at once, cutting pieces over the maximum, carrying odd bytes', () => {
    const chunks: Buffer[] = [];
    const chunker = new WavChunker((chunk) => chunks.push(chunk), 4_800);
    const stream = sine(24_000 / 2 + 123, 24_000, 300); // 512 ms and a bit
    const sizes: number[] = [];
    for (let offset = 0, i = 0; offset < stream.length; i++) {
      const size = [960, 1_001, 3, 7_000, 480][i % 5];
      const before = chunks.length;
      chunker.push(stream.subarray(offset, offset + size));
      sizes.push(...chunks.slice(before).map((c) => parseWavHeader(c)!.dataBytes));
      offset += size;
    }
    // 960 | 1000 (odd byte carried) | 4 (carry + 3) | 4800 + 2200 | 480 | ...
    expect(sizes.slice(0, 6)).toEqual([960, 1_000, 4, 4_800, 2_200, 480]);
    expect(sizes.every((n) => n > 0 && n <= 4_800 && n % 2 === 0)).toBe(true);
    for (const chunk of chunks) expect(parseWavHeader(chunk)!.riffSize).toBe(chunk.length - 8);
    const joined = Buffer.concat(chunks.map((chunk) => chunk.subarray(WAV_HEADER_BYTES)));
    expect(joined.equals(stream)).toBe(true);
    expect(() => new WavChunker(() => {}, 4_801)).toThrow(RangeError);
  });
});

describe('8 kHz <-> 24 kHz resampling', () => {
  it('upsamples by three, keeping each input sample and interpolating between them', () => {
    const input = Buffer.alloc(8);
    [0, 300, -300, 3].forEach((v, i) => input.writeInt16LE(v, i * 2));
    const out = samples(upsample8kTo24k(input));
    // The last input sample waits for its successor.
    expect(out).toEqual([0, 100, 200, 300, 100, -100, -300, -199, -98]);
  });

  it('streams: any split of the input gives the same output as one piece', () => {
    const input = sine(800, 8_000, 440);
    const whole = upsample8kTo24k(input);
    const up = new Upsampler8kTo24k();
    const parts: Buffer[] = [];
    for (let offset = 0; offset < input.length; offset += 37) parts.push(up.process(input.subarray(offset, offset + 37)));
    expect(Buffer.concat(parts).equals(whole)).toBe(true);

    const high = sine(2_400, 24_000, 440);
    const down = new Downsampler24kTo8k();
    const pieces: Buffer[] = [];
    for (let offset = 0; offset < high.length; offset += 101) pieces.push(down.process(high.subarray(offset, offset + 101)));
    expect(Buffer.concat(pieces).equals(downsample24kTo8k(high))).toBe(true);
    expect(downsample24kTo8k(high).length).toBe(high.length / 3);
  });

  it('downsampling keeps the telephone band and removes what would alias', () => {
    const pass = samples(downsample24kTo8k(sine(24_000, 24_000, 1_000))).slice(100);
    expect(rms(pass) / (10_000 / Math.SQRT2)).toBeGreaterThan(0.97);
    // 7 kHz would fold to 1 kHz at 8 kHz: it must be attenuated strongly.
    const stop = samples(downsample24kTo8k(sine(24_000, 24_000, 7_000))).slice(100);
    expect(rms(stop) / (10_000 / Math.SQRT2)).toBeLessThan(0.01);
  });

  it('an 8 kHz voice goes up and back down nearly unchanged, five samples later', () => {
    const input = sine(4_000, 8_000, 400);
    const roundTrip = samples(new Downsampler24kTo8k().process(new Upsampler8kTo24k().process(input)));
    const original = samples(input);
    const delay = 5;
    const errors = roundTrip.slice(50).map((value, i) => value - original[i + 50 - delay]);
    expect(rms(errors)).toBeLessThan(100); // under 1.5% of the signal
  });
});

describe('AudioSocket messages', () => {
  it('reads messages across arbitrary TCP segment boundaries', () => {
    const wire = Buffer.concat([
      encodeMessage(0x01, uuidToBytes('0f8fad5b-d9cb-469f-a165-70867728950e')),
      encodeMessage(0x10, Buffer.alloc(320, 7)),
      encodeMessage(0x00),
    ]);
    const reader = new MessageReader();
    const got = [];
    for (let offset = 0; offset < wire.length; offset += 5) got.push(...reader.push(wire.subarray(offset, offset + 5)));
    expect(got.map((m) => [m.kind, m.payload.length])).toEqual([
      [0x01, 16],
      [0x10, 320],
      [0x00, 0],
    ]);
    expect(uuidFromBytes(got[0].payload)).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(got[1].payload.every((b) => b === 7)).toBe(true);
  });
});
