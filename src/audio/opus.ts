// Counts the samples of an Opus stream by really decoding every packet with libopus (WASM, `opus-decoder`).
//
// Why decode instead of trusting the container: Chromium's MediaRecorder writes Opus in WebM without block
// durations (the demuxer can only guess the last block of every cluster) and in fragmented MP4 with a wrong
// duration for the last sample of every fragment (1008 instead of 2880 ticks), so summing container durations
// under-counts by up to 39 ms per fragment. The decoder's sample count is the audio that is really there.


/** The parts of an OpusHead (RFC 7845 §5.1) the decoder needs. */
export interface OpusHead {
  channels: number;
  /** Samples at 48 kHz to drop from the start of the decoded output. */
  preSkip: number;
  mappingFamily: number;
  streamCount?: number;
  coupledStreamCount?: number;
  channelMappingTable?: number[];
}

/** Parses an OpusHead (as found in Ogg, in WebM CodecPrivate, or rebuilt from MP4's dOps by the demuxer). */
export function parseOpusHead(description: Uint8Array | null | undefined): OpusHead | null {
  if (!description || description.byteLength < 19) return null;
  const bytes = description;
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== 'OpusHead') return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head: OpusHead = {
    channels: bytes[9]!,
    preSkip: view.getUint16(10, true),
    mappingFamily: bytes[18]!,
  };
  if (head.mappingFamily !== 0) {
    if (bytes.byteLength < 21 + head.channels) return null;
    head.streamCount = bytes[19]!;
    head.coupledStreamCount = bytes[20]!;
    head.channelMappingTable = Array.from(bytes.subarray(21, 21 + head.channels));
  }
  return head;
}

export interface OpusCount {
  packets: number;
  /** Samples decoded, in units of 1/48000 s, before the pre-skip is removed. */
  samples48k: number;
  /** Packets libopus refused (decoding stops at the first). */
  errors: number;
  firstError?: string;
}

// The sample count does not depend on the output rate (Opus frames are multiples of 2.5 ms), and decoding at
// 8 kHz is about a quarter cheaper than at 48 kHz.
const DECODE_RATE = 8000;
export const PACKETS_PER_SLICE = 100;

/** Lets other requests run between slices of a long piece of work. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const MONO_INPUT_BYTES = 3840;

/**
 * Decodes every packet and counts the samples. Yields to the event loop every hundred packets so that a
 * long recording does not hold up other requests.
 */
export async function countOpusSamples(packets: readonly Uint8Array[], head: OpusHead | null): Promise<OpusCount> {
  const multistream = head !== null && head.mappingFamily !== 0;
  // The WASM decoder sizes its input buffer by channels (3,840 bytes each), so a mono stream with larger
  // packets (up to 7,650 bytes are valid) is decoded as stereo, which libopus does just as well (a bit slower).
  const largest = packets.reduce((max, packet) => Math.max(max, packet.byteLength), 0);
  const channels = multistream ? head.channels : head?.channels === 1 && largest <= MONO_INPUT_BYTES ? 1 : 2;
  // Loaded on the first voice message, not at start: most servers never decode one.
  const { OpusDecoder } = await import('opus-decoder');
  const decoder = new OpusDecoder({
    sampleRate: DECODE_RATE,
    channels,
    ...(multistream
      ? {
          streamCount: head.streamCount,
          coupledStreamCount: head.coupledStreamCount,
          channelMappingTable: head.channelMappingTable,
        }
      : {}),
  });
  await decoder.ready;
  const count: OpusCount = { packets: 0, samples48k: 0, errors: 0 };
  try {
    for (let i = 0; i < packets.length; i++) {
      const packet = packets[i]!;
      if (packet.byteLength === 0) continue;
      count.packets++;
      let samples: number;
      let error: string | undefined;
      try {
        const result = decoder.decodeFrame(packet);
        samples = result.samplesDecoded;
        error = result.errors[0]?.message;
      } catch (thrown) {
        samples = 0;
        error = thrown instanceof Error ? thrown.message : String(thrown);
      }
      count.samples48k += samples * (48000 / DECODE_RATE);
      if (error !== undefined) {
        // One bad packet makes the file broken; stop there (the decoder also logs every error to stderr).
        count.errors++;
        count.firstError = error;
        break;
      }
      if ((i + 1) % PACKETS_PER_SLICE === 0) await yieldToEventLoop();
    }
  } finally {
    decoder.free();
  }
  return count;
}
