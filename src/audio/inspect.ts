// Decides what an uploaded voice recording is, from its bytes, and measures how long it is.
//
// - Format: from the container itself (mediabunny's probes, which read magic numbers and parse the
//   headers); the declared MIME type and the filename play no part.
// - Duration: measured from the audio, never read from a duration header (Chromium's MediaRecorder writes
//   none, or a wrong one):
//   * Opus (WebM, MP4, Ogg): every packet is decoded with libopus (WASM) and the samples are counted, less the
//     pre-skip; in Ogg the last granule position (end trimming) caps it.
//   * everything else (AAC, MP3, Vorbis, PCM): every packet is demuxed and the timeline they cover is taken:
//     from the first presented packet to the end of the last one. The packets' own timestamps are used, not a
//     sum of their durations, because Chromium's fragmented MP4 gets the last duration of every fragment wrong.
// - Streams cut off at the end (a recording stopped abruptly, an upload of the chunks so far) are measured up
//   to the last complete block/page/fragment (see salvage.ts).
//
// Errors: no bytes or no audio packets -> 'empty'; bytes that are no known container, or a container/codec we
// do not take (Matroska that is not WebM, QuickTime, FLAC, ADTS, ADPCM WAV, ...) -> 'unsupported'; a known
// container that cannot be read (headers cut off or corrupt), audio the decoder refuses, or a WebM/MP4 whose
// demuxer stopped early (its packets cover less than half of the audio payload: corrupt data in the middle,
// which would otherwise pass as a shorter recording) -> 'broken'.

import type { InputAudioTrack, InputFormat } from 'mediabunny';
import { onFirstUse } from '../lib/onFirstUse.js';
import { countOpusSamples, PACKETS_PER_SLICE, parseOpusHead, yieldToEventLoop } from './opus.js';
import { scanMp4, scanOgg, scanWebm, type ScanResult } from './salvage.js';

export type AudioFormat = 'webm' | 'ogg' | 'mp4' | 'mp3' | 'wav';

export interface AudioInfo {
  format: AudioFormat;
  /** Canonical MIME type of the container, e.g. `audio/webm`. */
  mimeType: string;
  /** Measured from the audio itself, in seconds. */
  durationSeconds: number;
  /** mediabunny's codec name: `opus`, `aac`, `mp3`, `vorbis`, `pcm-s16`, ... */
  codec: string;
}

export type AudioErrorReason = 'unsupported' | 'broken' | 'empty';

export class AudioError extends Error {
  readonly reason: AudioErrorReason;

  constructor(reason: AudioErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AudioError';
    this.reason = reason;
  }
}

/** The longest voice message the API takes; callers compare `durationSeconds` with it. */
export const MAX_VOICE_SECONDS = 120;

export const CANONICAL_MIME_TYPES: Readonly<Record<AudioFormat, string>> = {
  webm: 'audio/webm',
  ogg: 'audio/ogg',
  mp4: 'audio/mp4',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};

const PCM_CODECS = new Set([
  'pcm-s16',
  'pcm-s16be',
  'pcm-s24',
  'pcm-s24be',
  'pcm-s32',
  'pcm-s32be',
  'pcm-f32',
  'pcm-f32be',
  'pcm-f64',
  'pcm-f64be',
  'pcm-u8',
  'pcm-s8',
  'ulaw',
  'alaw',
]);

/** Codecs taken in each container (what browsers record and speech-to-text services read). */
const ACCEPTED_CODECS: Readonly<Record<AudioFormat, (codec: string) => boolean>> = {
  webm: (codec) => codec === 'opus' || codec === 'vorbis',
  ogg: (codec) => codec === 'opus' || codec === 'vorbis',
  mp4: (codec) => codec === 'aac' || codec === 'opus' || codec === 'mp3',
  mp3: (codec) => codec === 'mp3',
  wav: (codec) => PCM_CODECS.has(codec),
};

/** The demuxer, loaded with the first voice message. */
const mediabunny = onFirstUse(async () => {
  const { BufferSource, EncodedPacketSink, Input, MATROSKA, MP3, MP4, OGG, QTFF, WAVE, WEBM } = await import('mediabunny');
  const ours = new Map<InputFormat, AudioFormat>([
    [WEBM, 'webm'],
    [MP4, 'mp4'],
    [OGG, 'ogg'],
    [MP3, 'mp3'],
    [WAVE, 'wav'],
  ]);
  return {
    BufferSource,
    EncodedPacketSink,
    Input,
    // Matroska (non-WebM) and QuickTime are probed too, only so that they are told apart and refused as
    // unsupported rather than mistaken for broken WebM/MP4.
    probedFormats: [WEBM, MATROSKA, MP4, QTFF, OGG, MP3, WAVE],
    ourFormat: (format: InputFormat): AudioFormat | null => ours.get(format) ?? null,
  };
});

/**
 * Magic numbers of the containers we take, used only to tell "broken" (a known container the demuxer cannot
 * read) from "unsupported" (something else).
 */
export function sniffContainer(data: Uint8Array): AudioFormat | null {
  const ascii = (from: number, to: number) => String.fromCharCode(...data.subarray(from, to));
  if (data.length >= 4 && data[0] === 0x1a && data[1] === 0x45 && data[2] === 0xdf && data[3] === 0xa3) return 'webm';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if ((ascii(0, 4) === 'RIFF' || ascii(0, 4) === 'RF64') && ascii(8, 12) === 'WAVE') return 'wav';
  if (['ftyp', 'styp', 'moov', 'moof'].includes(ascii(4, 8))) return 'mp4';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  // MPEG audio frame header: 11 sync bits, a valid version, a valid layer, a valid bitrate and sample rate.
  if (data.length >= 4 && data[0] === 0xff && (data[1]! & 0xe0) === 0xe0) {
    const version = (data[1]! >> 3) & 3;
    const layer = (data[1]! >> 1) & 3;
    const bitrate = data[2]! >> 4;
    const rate = (data[2]! >> 2) & 3;
    if (version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3) return 'mp3';
  }
  return null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Identifies the container and codec of `data` from its bytes and measures its duration.
 * `declaredMimeType` (what the client claimed) is deliberately not used for either.
 */
export async function inspectAudio(data: Buffer, declaredMimeType?: string): Promise<AudioInfo> {
  void declaredMimeType; // the bytes decide
  if (!data || data.length === 0) throw new AudioError('empty', 'The audio is empty (no bytes).');

  const sniffed = sniffContainer(data);
  const scan: ScanResult =
    sniffed === 'webm'
      ? scanWebm(data)
      : sniffed === 'ogg'
        ? scanOgg(data)
        : sniffed === 'mp4'
          ? scanMp4(data)
          : { data, discarded: 0, payloadBytes: null };
  const bytes = scan.data;

  const unreadable = (what: string, cause?: unknown) =>
    sniffed
      ? new AudioError('broken', `The ${sniffed} data cannot be read (${what}); it is truncated or corrupt.`, { cause })
      : new AudioError('unsupported', 'The data is not audio in a supported format (webm, ogg, mp4, mp3, wav).', { cause });

  const { Input, BufferSource, probedFormats, ourFormat } = await mediabunny();
  const input = new Input({ source: new BufferSource(bytes), formats: probedFormats });
  try {
    let inputFormat: InputFormat;
    try {
      inputFormat = await input.getFormat();
    } catch (error) {
      throw unreadable('no container header', error);
    }
    const format = ourFormat(inputFormat);
    if (!format) {
      throw new AudioError('unsupported', `${inputFormat.name} files are not supported (webm, ogg, mp4, mp3, wav are).`);
    }

    let track: InputAudioTrack | null;
    try {
      track = await input.getPrimaryAudioTrack();
    } catch (error) {
      // mediabunny refuses codecs it cannot demux while reading the track header, e.g. "Unsupported WAVE
      // codec (format tag 2)" for ADPCM: that is a format we do not take, not a damaged file.
      if (/\bunsupported\b/i.test(describe(error))) {
        throw new AudioError('unsupported', `The ${format} file's audio is not supported: ${describe(error)}`, { cause: error });
      }
      throw unreadable(`track header: ${describe(error)}`, error);
    }
    if (!track) {
      const others = await input.getTracks().catch(() => []);
      if (others.length > 0) throw new AudioError('unsupported', `The ${format} file has no audio track.`);
      throw unreadable('no audio track header');
    }

    let codec: string | null;
    try {
      codec = await track.getCodec();
    } catch (error) {
      throw unreadable(`codec header: ${describe(error)}`, error);
    }
    if (!codec || !ACCEPTED_CODECS[format](codec)) {
      throw new AudioError('unsupported', `The ${format} file's audio codec (${codec ?? 'unknown'}) is not supported.`);
    }

    const durationSeconds = await measure(track, codec, format, scan.payloadBytes);
    if (!(durationSeconds > 0)) throw new AudioError('empty', `The ${format} file holds no audio.`);
    return {
      format,
      mimeType: CANONICAL_MIME_TYPES[format],
      durationSeconds: Math.round(durationSeconds * 1e6) / 1e6,
      codec,
    };
  } catch (error) {
    if (error instanceof AudioError) throw error;
    throw unreadable(describe(error), error);
  } finally {
    input.dispose();
  }
}

/**
 * The demuxer stops without an error where corrupt data makes it lose its way; the packets it returned must
 * then account for at least this share of the audio payload, or the rest of the file went unread.
 */
const MIN_PAYLOAD_COVERAGE = 0.5;
/** Below this many payload bytes (an empty cluster or fragment header) the check says nothing. */
const MIN_CHECKED_PAYLOAD = 256;

async function measure(
  track: InputAudioTrack,
  codec: string,
  format: AudioFormat,
  payloadBytes: number | null,
): Promise<number> {
  const sink = new (await mediabunny()).EncodedPacketSink(track);
  const packets: Uint8Array[] = [];
  let count = 0;
  let packetBytes = 0;
  let firstTimestamp = Infinity;
  let end = -Infinity;
  for await (const packet of sink.packets()) {
    count++;
    // The demuxer's reads from memory resolve at once: without a pause, 10 MB of tiny packets would be
    // demuxed in one turn of the event loop.
    if (count % PACKETS_PER_SLICE === 0) await yieldToEventLoop();
    packetBytes += packet.data.byteLength;
    firstTimestamp = Math.min(firstTimestamp, packet.timestamp);
    end = Math.max(end, packet.timestamp + packet.duration);
    if (codec === 'opus') packets.push(packet.data);
  }
  if (payloadBytes !== null && payloadBytes > MIN_CHECKED_PAYLOAD && packetBytes < MIN_PAYLOAD_COVERAGE * payloadBytes) {
    throw new AudioError(
      'broken',
      `The ${format} data is corrupt: only ${packetBytes} of about ${payloadBytes} bytes of audio could be read.`,
    );
  }
  if (count === 0) return 0;

  if (codec === 'opus') {
    const config = await track.getDecoderConfig();
    const description = config?.description;
    const head = parseOpusHead(
      description
        ? ArrayBuffer.isView(description)
          ? new Uint8Array(description.buffer, description.byteOffset, description.byteLength)
          : new Uint8Array(description)
        : null,
    );
    const decoded = await countOpusSamples(packets, head);
    if (decoded.errors > 0) {
      throw new AudioError(
        'broken',
        `The Opus audio is corrupt: packet ${decoded.packets} could not be decoded (${decoded.firstError}).`,
      );
    }
    let seconds = Math.max(0, decoded.samples48k - (head?.preSkip ?? 0)) / 48000;
    // Ogg's last granule position says where the stream really ends (the encoder pads the last packet).
    if (format === 'ogg' && end > 0) seconds = Math.min(seconds, end - Math.max(0, firstTimestamp));
    return seconds;
  }

  // Timeline covered by the packets; what lies before 0 (encoder priming cut by an edit list) is not presented.
  return end - Math.max(0, firstTimestamp);
}
