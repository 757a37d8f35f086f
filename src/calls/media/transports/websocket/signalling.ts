// The call page's WebRTC signalling: what one side's signalling socket sends (offer, answer, ICE
// candidates, the page's own state) goes to the other side's signalling sockets of the same call, and
// each side is told whether the other has one open. The server never reads an SDP: it checks the shape
// and the size, and relays the frame as sent.
import type { Side } from '../../../side.js';
import { otherSide } from '../../../side.js';
import { CLOSE, SIGNAL_BUFFER_CAP_BYTES, SIGNAL_MAX_FRAME_BYTES, SIGNAL_RELAYED_TYPES, type CloseCode, type PeerFrame } from '../../protocol.js';
import type { SignalSocket } from './endpoints.js';

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

export class SignalRelay {
  /** Open signalling sockets by call. */
  private readonly calls = new Map<string, Set<SignalSocket>>();

  /** A socket joins its call's signalling: it learns whether the other side is there, the other side that it is. */
  add(socket: SignalSocket): void {
    let sockets = this.calls.get(socket.callId);
    if (!sockets) this.calls.set(socket.callId, (sockets = new Set()));
    const firstOfSide = this.count(sockets, socket.side) === 0;
    sockets.add(socket);
    socket.send(presence(this.count(sockets, otherSide(socket.side)) > 0), SIGNAL_BUFFER_CAP_BYTES);
    if (firstOfSide) this.tell(sockets, otherSide(socket.side), presence(true));
  }

  remove(socket: SignalSocket): void {
    const sockets = this.calls.get(socket.callId);
    if (!sockets?.delete(socket)) return;
    if (!sockets.size) this.calls.delete(socket.callId);
    else if (this.count(sockets, socket.side) === 0) this.tell(sockets, otherSide(socket.side), presence(false));
  }

  /** Passes a checked frame from `from` to the other side's sockets. */
  relay(from: SignalSocket, text: string): void {
    const sockets = this.calls.get(from.callId);
    if (sockets) this.tell(sockets, otherSide(from.side), text);
  }

  get size(): number {
    let total = 0;
    for (const sockets of this.calls.values()) total += sockets.size;
    return total;
  }

  private count(sockets: Set<SignalSocket>, side: Side): number {
    let count = 0;
    for (const socket of sockets) if (socket.side === side && !socket.isGone) count++;
    return count;
  }

  private tell(sockets: Set<SignalSocket>, side: Side, text: string): void {
    for (const socket of sockets) if (socket.side === side) socket.send(text, SIGNAL_BUFFER_CAP_BYTES);
  }
}

const presence = (present: boolean) => JSON.stringify({ type: 'peer', present } satisfies PeerFrame);
