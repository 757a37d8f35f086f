// The call page's signalling socket: what it may send. A frame is checked here, on the instance the
// socket reached (its shape and size, never its SDP), and passed as sent to the call's signalling
// where the room is (../../signalling.ts).
import { CLOSE, SIGNAL_MAX_FRAME_BYTES, SIGNAL_RELAYED_TYPES, type CloseCode } from '../../protocol.js';

/** Why a received frame is refused (the socket is closed with this code), or null to relay it. */
export function signalFrameProblem(data: Buffer, isBinary: boolean): CloseCode | null {
  if (isBinary) return CLOSE.signalBinary;
  if (data.length > SIGNAL_MAX_FRAME_BYTES) return CLOSE.signalTooBig;
  let frame: unknown;
  try {
    frame = JSON.parse(data.toString('utf8'));
  } catch {
    return CLOSE.signalMalformed;
  }
  const type = frame && typeof frame === 'object' && !Array.isArray(frame) ? (frame as { type?: unknown }).type : undefined;
  return typeof type === 'string' && SIGNAL_RELAYED_TYPES.has(type) ? null : CLOSE.signalMalformed;
}
