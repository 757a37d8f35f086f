/*
 * Asterisk AudioSocket over TCP: every message is 1 byte kind, 2 bytes big-endian payload length, then
 * the payload.
 *
 *   0x00 hangup    (no payload)            either direction
 *   0x01 uuid      (16 raw bytes)          PBX -> server, the first message: the line id
 *                                          (`audiosocket_id` of POST /v1/calls/{id}/phone-line)
 *   0x03 dtmf      (1 ASCII byte)          PBX -> server; ignored
 *   0x10 audio     (signed linear 16-bit LE, 8 kHz mono; 20 ms = 320 bytes)   both directions
 *   0xff error     (application error code) server -> PBX before closing; PBX -> server ends the line
 *
 * What the server does:
 *   - A UUID that is the current agent_line_id or customer_line_id of an open, ready call: the line
 *     plays that side. Its audio is resampled to 24 kHz into the side's stream; what the side hears is
 *     resampled to 8 kHz and sent back paced in real time, one 320-byte frame per 20 ms (never an empty
 *     frame; the end of speech is padded with silence to a whole frame).
 *   - Otherwise an error frame (payload: one byte, LINE_ERROR below) and the connection closes.
 *   - A first message that is not a UUID: error BAD_FIRST_MESSAGE and close. A line that says nothing
 *     for 10 s after connecting is closed.
 *   - call.line_replaced for the side (a newer line id), the call ending, or shutdown: hangup, close.
 *   - Hangup or error from the PBX, or the connection closing: the line leaves the call (the call
 *     itself stays open).
 */

export const KIND = {
  hangup: 0x00,
  uuid: 0x01,
  dtmf: 0x03,
  audio: 0x10,
  error: 0xff,
} as const;

/** Application error codes sent as the payload of an error frame before the server closes a line. */
export const LINE_ERROR = {
  unknownLine: 0x10,
  callEnded: 0x11,
  notReady: 0x12,
  badFirstMessage: 0x13,
  shuttingDown: 0x14,
  /** Too many unknown line ids from this address in the last minute: retry later. */
  tooManyFailedAttempts: 0x15,
  internal: 0x1f,
} as const;

export const HEADER_BYTES = 3;
export const MAX_PAYLOAD_BYTES = 0xffff;
export const SAMPLE_RATE_8K = 8_000;
/** 20 ms of 8 kHz PCM16. */
export const FRAME_BYTES = 320;
export const FRAME_MS = 20;

export interface Message {
  kind: number;
  payload: Buffer;
}

export function encodeMessage(kind: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > MAX_PAYLOAD_BYTES) throw new RangeError(`AudioSocket payload too long: ${payload.length}`);
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out[0] = kind;
  out.writeUInt16BE(payload.length, 1);
  payload.copy(out, HEADER_BYTES);
  return out;
}

export const hangupMessage = () => encodeMessage(KIND.hangup);
export const errorMessage = (code: number) => encodeMessage(KIND.error, Buffer.from([code]));
export const audioMessage = (pcm8k: Buffer) => encodeMessage(KIND.audio, pcm8k);

/** 16 raw bytes <-> the canonical lowercase text form of a UUID. */
export function uuidFromBytes(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function uuidToBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}

/** Splits a TCP byte stream into messages, whatever the segment boundaries. */
export class MessageReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(data: Buffer): Message[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
    const messages: Message[] = [];
    let offset = 0;
    while (this.buffer.length - offset >= HEADER_BYTES) {
      const length = this.buffer.readUInt16BE(offset + 1);
      if (this.buffer.length - offset < HEADER_BYTES + length) break;
      messages.push({
        kind: this.buffer[offset],
        payload: this.buffer.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length),
      });
      offset += HEADER_BYTES + length;
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
    return messages;
  }
}
