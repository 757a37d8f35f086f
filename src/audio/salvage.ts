// A light walk over the top structure of WebM, Ogg and MP4 data, done before the demuxer reads it, for two jobs:
//
// 1. Recordings cut off at the end (tab closed, writer crashed) are prefixes of a stream. The demuxer
//    (mediabunny) drops the whole last WebM cluster when its last block runs past the end of the data, and it
//    throws on an Ogg page or MP4 `moof` that runs past the end. Cutting back to the last complete
//    block/page/box keeps all the audio that is there.
// 2. Knowing how many bytes the audio payload takes, the caller can tell when the demuxer gave up early on
//    corrupt data (it then returns fewer packets without an error, which would under-measure the duration).
//
// Anything that is not plainly "runs past the end" is left alone for the demuxer to judge.

/** A cut that throws away more than this is not a recording stopped mid-block: the structure lies. */
export const MAX_TRUNCATED_TAIL = 64 * 1024;

/**
 * Whether cutting at `cut` is a plain truncation: not too much thrown away, and no sign of more stream in
 * what would be thrown away (then the element that "runs past the end" is garbage, not a cut-off one).
 */
function isPlainTruncation(
  data: Buffer,
  cut: number,
  markers: readonly (string | Buffer)[],
  ownHeaderBytes: number,
): boolean {
  if (data.length - cut > MAX_TRUNCATED_TAIL) return false;
  // Search past the cut-off element's own header, which may itself hold such a marker.
  const tail = data.subarray(cut + ownHeaderBytes);
  return markers.every((marker) => tail.indexOf(marker) === -1);
}

const EBML_CLUSTER_ID = Buffer.from([0x1f, 0x43, 0xb6, 0x75]);

export interface ScanResult {
  /** The data to demux: the input, or the input cut back to its last complete element. */
  data: Buffer;
  /** Bytes thrown away at the end. */
  discarded: number;
  /** Bytes the audio packets are expected to take, about; null when unknown. */
  payloadBytes: number | null;
}

const EBML_SEGMENT = 0x18538067;
const EBML_CLUSTER = 0x1f43b675;

interface VarInt {
  length: number;
  /** null when every value bit is 1 ("unknown size"). */
  value: number | null;
}

function readVarInt(data: Uint8Array, pos: number, keepMarker: boolean): VarInt | null | 'short' {
  if (pos >= data.length) return 'short';
  const first = data[pos]!;
  if (first === 0) return null;
  const length = Math.clz32(first) - 23; // leading zero bits of the byte, plus one
  if (pos + length > data.length) return 'short';
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = (first & (0xff >> length)) === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const byte = data[pos + i]!;
    value = value * 256 + byte;
    if (byte !== 0xff) allOnes = false;
  }
  return { length, value: !keepMarker && allOnes ? null : value };
}

// Elements that can be the last, cut-off one of a stream (level 1, cluster children, global); a cut-off
// element with another ID is taken for garbage, not for a truncation.
const EBML_CUTTABLE_IDS = new Set([
  0x114d9b74, // SeekHead
  0x1549a966, // Info
  0x1654ae6b, // Tracks
  0x1c53bb6b, // Cues
  0x1941a469, // Attachments
  0x1043a770, // Chapters
  0x1254c367, // Tags
  0xe7, // Timestamp
  0xa7, // Position
  0xab, // PrevSize
  0xa3, // SimpleBlock
  0xa0, // BlockGroup
  0xec, // Void
  0xbf, // CRC-32
]);

/**
 * WebM/Matroska: walk the element headers, stepping into Segment and Cluster and over everything else. At the
 * first element that runs past the end, cut. A Segment or Cluster whose declared size runs past the end gets
 * its size field rewritten (same width) to what is left of it. (Live recordings, like Chromium's, declare
 * these sizes unknown; files written for download declare them.) The payload is everything from the first
 * Cluster on.
 */
export function scanWebm(data: Buffer): ScanResult {
  const limit = data.length;
  const sizeFieldsToShrink: { pos: number; length: number; dataStart: number }[] = [];
  let firstCluster: number | null = null;
  let pos = 0;
  let cut: number | null = null;
  walk: while (pos < limit) {
    const id = readVarInt(data, pos, true);
    if (id === 'short') {
      cut = pos;
      break;
    }
    if (id === null || id.length > 4) break; // not an element header: leave it to the demuxer
    const size = readVarInt(data, pos + id.length, false);
    if (size === 'short') {
      cut = pos;
      break;
    }
    if (size === null) break;
    const dataStart = pos + id.length + size.length;
    switch (id.value) {
      case EBML_SEGMENT:
      case EBML_CLUSTER:
        if (id.value === EBML_CLUSTER) firstCluster ??= pos;
        if (size.value !== null && dataStart + size.value > limit) {
          sizeFieldsToShrink.push({ pos: pos + id.length, length: size.length, dataStart });
        }
        pos = dataStart; // step inside
        continue walk;
    }
    if (size.value === null) break; // unknown size on an element we do not step into
    if (dataStart + size.value > limit) {
      if (EBML_CUTTABLE_IDS.has(id.value!)) cut = pos;
      break;
    }
    pos = dataStart + size.value;
  }
  const complete = cut === null && pos >= limit;
  // Too much to throw away, or something the walk does not understand: not a plain truncation. Demux it all
  // as it is and expect audio payload up to the end (a demuxer that stops early is then noticed).
  if (cut !== null && !isPlainTruncation(data, cut, [EBML_CLUSTER_ID], 1)) cut = null;
  const end = cut ?? limit;
  const payloadBytes = firstCluster === null ? null : Math.max(0, end - firstCluster);
  const resize = cut !== null || complete ? sizeFieldsToShrink : [];
  if (resize.length === 0) {
    return end === limit ? { data, discarded: 0, payloadBytes } : { data: data.subarray(0, end), discarded: limit - end, payloadBytes };
  }
  const out = Buffer.from(data.subarray(0, end));
  for (const field of resize) {
    // The new size is smaller than the declared one, so it fits the same width (and is never all ones).
    let value = Math.max(0, end - field.dataStart);
    for (let i = field.length - 1; i >= 0; i--) {
      out[field.pos + i] = value % 256;
      value = Math.floor(value / 256);
    }
    out[field.pos] = out[field.pos]! | (0x80 >> (field.length - 1));
  }
  return { data: out, discarded: limit - end, payloadBytes };
}

/** Ogg: walk the pages; cut before the first page that runs past the end. (Pages carry CRCs and the demuxer
 * resyncs on them, so no payload count is needed.) */
export function scanOgg(data: Buffer): ScanResult {
  const limit = data.length;
  const cutAt = (pos: number): ScanResult =>
    isPlainTruncation(data, pos, ['OggS'], 4)
      ? { data: data.subarray(0, pos), discarded: limit - pos, payloadBytes: null }
      : { data, discarded: 0, payloadBytes: null };
  let pos = 0;
  while (pos < limit) {
    if (pos + 27 > limit) return cutAt(pos);
    if (data.readUInt32BE(pos) !== 0x4f676753 /* OggS */) break; // not a page: leave it to the demuxer
    const segments = data[pos + 26]!;
    if (pos + 27 + segments > limit) return cutAt(pos);
    let size = 0;
    for (let i = 0; i < segments; i++) size += data[pos + 27 + i]!;
    const end = pos + 27 + segments + size;
    if (end > limit) return cutAt(pos);
    pos = end;
  }
  return { data, discarded: 0, payloadBytes: null };
}

/**
 * MP4: walk the top-level boxes; cut before the first box other than `mdat` that runs past the end (in a
 * fragmented recording, a `moof` cut in half). A cut `mdat` is left alone: the demuxer reads the samples in it
 * that are complete. The payload is what the `mdat` boxes hold.
 */
export function scanMp4(data: Buffer): ScanResult {
  const limit = data.length;
  let mdatBytes = 0;
  let pos = 0;
  let cut: number | null = null;
  let understood = true;
  while (pos < limit) {
    if (pos + 8 > limit) {
      cut = pos;
      break;
    }
    let size = data.readUInt32BE(pos);
    let header = 8;
    const type = data.toString('latin1', pos + 4, pos + 8);
    if (!/^[\x20-\x7e]{4}$/.test(type)) {
      understood = false; // not a box
      break;
    }
    if (size === 1) {
      if (pos + 16 > limit) {
        cut = pos;
        break;
      }
      size = Number(data.readBigUInt64BE(pos + 8));
      header = 16;
    } else if (size === 0) {
      size = limit - pos; // runs to the end of the file
    }
    if (size < header) {
      understood = false;
      break;
    }
    if (type === 'mdat') mdatBytes += Math.min(size, limit - pos) - header;
    if (pos + size > limit) {
      if (type !== 'mdat') cut = pos;
      break;
    }
    pos += size;
  }
  if (cut !== null && !isPlainTruncation(data, cut, ['moof', 'mdat', 'moov'], 8)) {
    cut = null;
    understood = false;
  }
  // When the walk stopped on something it does not understand, count the rest as payload, so that a demuxer
  // that stops early there is noticed.
  const payloadBytes = understood ? mdatBytes : mdatBytes + (limit - pos);
  if (cut === null) return { data, discarded: 0, payloadBytes };
  return { data: data.subarray(0, cut), discarded: limit - cut, payloadBytes };
}
