// The call page's signalling socket: what a page may send. A frame is checked here, on the instance the
// socket reached: it must be one of the page's own kinds (PEER_SIGNAL_TYPES), every key known and of
// its type, strings bounded (never is an SDP read). What passes goes on as the checked object written
// anew, so nothing but those keys reaches the other side (../../signalling.ts wraps it there).
import {
  CLOSE,
  PEER_SIGNAL_TYPES,
  SIGNAL_MAX_CANDIDATE_CHARS,
  SIGNAL_MAX_FRAME_BYTES,
  SIGNAL_MAX_ID_CHARS,
  SIGNAL_MAX_SDP_CHARS,
  SIGNAL_REFUSED,
  type CloseCode,
  type PeerSignalType,
} from '../../protocol.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown, min: number, max: number) => typeof value === 'string' && value.length >= min && value.length <= max;
const isBoolean = (value: unknown) => typeof value === 'boolean';
const orNull = (check: (value: unknown) => boolean) => (value: unknown) => value === null || check(value);
const absentOr = (check: (value: unknown) => boolean) => (value: unknown) => value === undefined || check(value);

/** Exactly these keys (absent ones passed as undefined), each passing its check. */
function hasShape(frame: Json, shape: Record<string, (value: unknown) => boolean>): boolean {
  for (const key of Object.keys(frame)) if (!Object.hasOwn(shape, key)) return false;
  return Object.entries(shape).every(([key, check]) => check(frame[key]));
}

const sdp = (value: unknown) => isString(value, 1, SIGNAL_MAX_SDP_CHARS);

const candidateInit = (value: unknown) =>
  isObject(value) &&
  hasShape(value, {
    candidate: absentOr((candidate) => isString(candidate, 0, SIGNAL_MAX_CANDIDATE_CHARS)),
    sdpMid: absentOr(orNull((mid) => isString(mid, 0, SIGNAL_MAX_ID_CHARS))),
    sdpMLineIndex: absentOr(orNull((index) => Number.isInteger(index) && (index as number) >= 0 && (index as number) <= 65_535)),
    usernameFragment: absentOr(orNull((ufrag) => isString(ufrag, 0, SIGNAL_MAX_ID_CHARS))),
  });

/** Each kind a page may send: its keys and what each holds (`type` aside). */
const SHAPES: Record<PeerSignalType, Record<string, (value: unknown) => boolean>> = {
  offer: { sdp },
  answer: { sdp },
  candidate: { candidate: orNull(candidateInit) },
  state: { muted: isBoolean, camera: isBoolean, speaking: isBoolean },
};

const isPeerSignalType = (type: unknown): type is PeerSignalType => (PEER_SIGNAL_TYPES as readonly unknown[]).includes(type);

/** A received frame: refused (the socket is closed with this code), or the checked frame's JSON text to relay. */
export function checkSignalFrame(data: Buffer, isBinary: boolean): { refused: CloseCode } | { relay: string } {
  if (isBinary) return { refused: CLOSE.signalBinary };
  if (data.length > SIGNAL_MAX_FRAME_BYTES) return { refused: CLOSE.signalTooBig };
  let frame: unknown;
  try {
    frame = JSON.parse(data.toString('utf8'));
  } catch {
    return { refused: SIGNAL_REFUSED.notPeerSignal };
  }
  if (!isObject(frame) || !isPeerSignalType(frame.type)) return { refused: SIGNAL_REFUSED.notPeerSignal };
  if (!hasShape(frame, { type: () => true, ...SHAPES[frame.type] })) return { refused: SIGNAL_REFUSED[frame.type] };
  return { relay: JSON.stringify(frame) };
}
