// PCM16 helpers for the media plane: WAV chunk headers, a chunker that wraps audio in WAV chunks of at
// most 100 ms as it comes, and streaming 8 kHz <-> 24 kHz resamplers for AudioSocket (telephone) lines.

export const WAV_HEADER_BYTES = 44;

/** The size-independent part of each header, by format: every chunk copies one instead of rebuilding it. */
const headerTemplates = new Map<number, Buffer>();

function headerTemplate(sampleRate: number, channels: number): Buffer {
  const key = sampleRate * 65_536 + channels;
  let template = headerTemplates.get(key);
  if (!template) {
    const blockAlign = channels * 2;
    template = Buffer.alloc(WAV_HEADER_BYTES);
    template.write('RIFF', 0, 'ascii');
    template.write('WAVE', 8, 'ascii');
    template.write('fmt ', 12, 'ascii');
    template.writeUInt32LE(16, 16);
    template.writeUInt16LE(1, 20);
    template.writeUInt16LE(channels, 22);
    template.writeUInt32LE(sampleRate, 24);
    template.writeUInt32LE(sampleRate * blockAlign, 28);
    template.writeUInt16LE(blockAlign, 32);
    template.writeUInt16LE(16, 34);
    template.write('data', 36, 'ascii');
    headerTemplates.set(key, template);
  }
  return template;
}

/** The 44-byte RIFF/WAVE header of a PCM16 file holding `dataBytes` bytes of samples. */
export function writeWavHeader(target: Buffer, dataBytes: number, sampleRate = 24_000, channels = 1, offset = 0): void {
  headerTemplate(sampleRate, channels).copy(target, offset);
  target.writeUInt32LE(36 + dataBytes, offset + 4);
  target.writeUInt32LE(dataBytes, offset + 40);
}

export function wavHeader(dataBytes: number, sampleRate = 24_000, channels = 1): Buffer {
  const header = Buffer.allocUnsafe(WAV_HEADER_BYTES);
  writeWavHeader(header, dataBytes, sampleRate, channels);
  return header;
}

/** A complete WAV file (header + samples) around PCM16 samples. */
export function wavChunk(pcm: Buffer, sampleRate = 24_000): Buffer {
  const out = Buffer.allocUnsafe(WAV_HEADER_BYTES + pcm.length);
  writeWavHeader(out, pcm.length, sampleRate);
  pcm.copy(out, WAV_HEADER_BYTES);
  return out;
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  byteRate: number;
  blockAlign: number;
  format: number;
  riffSize: number;
  dataBytes: number;
}

/** Reads a canonical 44-byte header (as written above); null when it is not one. */
export function parseWavHeader(buf: Buffer): WavInfo | null {
  if (buf.length < WAV_HEADER_BYTES) return null;
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null;
  if (buf.toString('ascii', 12, 16) !== 'fmt ' || buf.toString('ascii', 36, 40) !== 'data') return null;
  return {
    riffSize: buf.readUInt32LE(4),
    format: buf.readUInt16LE(20),
    channels: buf.readUInt16LE(22),
    sampleRate: buf.readUInt32LE(24),
    byteRate: buf.readUInt32LE(28),
    blockAlign: buf.readUInt16LE(32),
    bitsPerSample: buf.readUInt16LE(34),
    dataBytes: buf.readUInt32LE(40),
  };
}

/**
 * Turns PCM16 pieces (any length, in order) into WAV chunks as they come: each piece leaves at once, cut
 * into chunks of at most `maxChunkBytes` bytes of samples, so a chunk never waits for later audio. A
 * stray odd byte is carried to the next piece so every chunk holds whole samples. Chunks are freshly
 * allocated, so a receiver may keep them.
 */
export class WavChunker {
  private carry: number | null = null;

  constructor(
    private readonly onChunk: (wav: Buffer) => void,
    private readonly maxChunkBytes = 4_800,
    private readonly sampleRate = 24_000,
  ) {
    if (maxChunkBytes <= 0 || maxChunkBytes % 2) throw new RangeError('maxChunkBytes must be a positive even number');
  }

  push(pcm: Buffer): void {
    let source = pcm;
    if (this.carry !== null) {
      source = Buffer.concat([Buffer.from([this.carry]), pcm]);
      this.carry = null;
    }
    const whole = source.length - (source.length % 2);
    if (whole < source.length) this.carry = source[whole];
    for (let offset = 0; offset < whole; offset += this.maxChunkBytes) {
      const end = Math.min(whole, offset + this.maxChunkBytes);
      const chunk = Buffer.allocUnsafe(WAV_HEADER_BYTES + end - offset);
      writeWavHeader(chunk, end - offset, this.sampleRate);
      source.copy(chunk, WAV_HEADER_BYTES, offset, end);
      this.onChunk(chunk);
    }
  }
}

/** Carries a stray odd byte from one call to the next, so arbitrary byte splits stay sample-aligned. */
class SampleReader {
  private carry: number | null = null;

  samples(buf: Buffer): Int16Array {
    let source = buf;
    if (this.carry !== null) {
      source = Buffer.concat([Buffer.from([this.carry]), buf]);
      this.carry = null;
    }
    const count = source.length >> 1;
    if (source.length % 2) this.carry = source[source.length - 1];
    const out = new Int16Array(count);
    for (let i = 0; i < count; i++) out[i] = source.readInt16LE(i * 2);
    return out;
  }
}

const clamp16 = (value: number) => (value > 32767 ? 32767 : value < -32768 ? -32768 : Math.round(value));

/**
 * 8 kHz -> 24 kHz, streaming, by linear interpolation: input sample n becomes output sample 3n exactly
 * and two interpolated samples follow it. The output lags the input by one 8 kHz sample (the next
 * input is needed to interpolate towards), which is 125 µs.
 */
export class Upsampler8kTo24k {
  private readonly reader = new SampleReader();
  private previous: number | null = null;

  process(pcm8k: Buffer): Buffer {
    const input = this.reader.samples(pcm8k);
    const outCount = (this.previous === null ? input.length - 1 : input.length) * 3;
    if (outCount <= 0) {
      if (input.length) this.previous = input[input.length - 1];
      return Buffer.alloc(0);
    }
    const out = Buffer.allocUnsafe(outCount * 2);
    let o = 0;
    let i = 0;
    let prev = this.previous;
    if (prev === null) {
      prev = input[0];
      i = 1;
    }
    for (; i < input.length; i++) {
      const next = input[i];
      const step = (next - prev) / 3;
      out.writeInt16LE(prev, o);
      out.writeInt16LE(clamp16(prev + step), o + 2);
      out.writeInt16LE(clamp16(prev + 2 * step), o + 4);
      o += 6;
      prev = next;
    }
    this.previous = prev;
    return out;
  }
}

/** Windowed-sinc low-pass taps (Blackman window), unity gain at DC. */
function lowPassTaps(count: number, cutoff: number): Float64Array {
  const taps = new Float64Array(count);
  const middle = (count - 1) / 2;
  let sum = 0;
  for (let n = 0; n < count; n++) {
    const x = n - middle;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * n) / (count - 1)) + 0.08 * Math.cos((4 * Math.PI * n) / (count - 1));
    taps[n] = sinc * window;
    sum += taps[n];
  }
  for (let n = 0; n < count; n++) taps[n] /= sum;
  return taps;
}

/** 31 taps, cut-off 3.6 kHz at 24 kHz: passes the telephone band, stops what would alias above 4 kHz. */
const DECIMATION_TAPS = lowPassTaps(31, 3_600 / 24_000);

/**
 * 24 kHz -> 8 kHz, streaming: a linear-phase low-pass filter, then every third sample. The filter
 * delays the signal by 15 input samples (5 output samples, 625 µs).
 */
export class Downsampler24kTo8k {
  private readonly reader = new SampleReader();
  private readonly taps = DECIMATION_TAPS;
  private readonly history = new Float64Array(DECIMATION_TAPS.length - 1);
  /** Input samples seen modulo 3: sample positions 0, 3, 6, ... produce an output sample. */
  private phase = 0;

  process(pcm24k: Buffer): Buffer {
    const input = this.reader.samples(pcm24k);
    const historyLength = this.history.length;
    const work = new Float64Array(historyLength + input.length);
    work.set(this.history);
    for (let i = 0; i < input.length; i++) work[historyLength + i] = input[i];
    const first = (3 - this.phase) % 3;
    const outCount = first < input.length ? Math.floor((input.length - 1 - first) / 3) + 1 : 0;
    const out = Buffer.allocUnsafe(outCount * 2);
    const taps = this.taps;
    let o = 0;
    for (let i = first; i < input.length; i += 3) {
      const end = historyLength + i;
      let acc = 0;
      for (let k = 0; k < taps.length; k++) acc += taps[k] * work[end - k];
      out.writeInt16LE(clamp16(acc), o);
      o += 2;
    }
    this.phase = (this.phase + input.length) % 3;
    if (work.length >= historyLength) this.history.set(work.subarray(work.length - historyLength));
    return out;
  }
}

/** One-shot conversions (a fresh resampler each call: no state carried between calls). */
export const upsample8kTo24k = (pcm8k: Buffer) => new Upsampler8kTo24k().process(pcm8k);
export const downsample24kTo8k = (pcm24k: Buffer) => new Downsampler24kTo8k().process(pcm24k);
