// The messages of the media bridge (redisBridge.ts) and how they travel on an instance's channel.
//
// Audio (`in`: a relayed source's voice for the room; `out`: what the room sends a relayed sink) is 50
// messages a second per relayed socket, so it travels as bytes, not as base64 inside JSON (a third more
// bytes and a parse per frame):
//
//   [op tag: 1 byte][relay id length: 1 byte][relay id: UTF-8, 1-255 bytes][audio bytes, as they are]
//
// Everything else is rare and stays JSON. Both share the channel, so one connection keeps a relay's
// messages in order: a JSON message is an object, whose text starts with `{`, and the tags are control
// bytes no JSON text may start with (not even as whitespace), so the first byte tells them apart.
// Several messages published as one (what one turn of the event loop sends an instance) are a batch:
//
//   [0x03][length of the first: 4 bytes, big-endian][the first, as above][length of the second]...
import type { Side } from '../../../side.js';
import type { Credential, EndReason, MediaSink } from '../../endpoints.js';
import type { TextFrame } from '../../protocol.js';

/** What the room's instance needs to stand in for an endpoint of another instance. */
export interface EndpointDescription {
  side: Side;
  credential: Credential;
  kind: string;
  sourceKey?: string;
  format?: MediaSink['format'];
  /** A signalling peer (the call page's signalling socket). */
  signalling?: true;
}

export type ToRoom =
  | { op: 'open'; relay: string; from: string; call: string; endpoint: EndpointDescription }
  | { op: 'in'; relay: string; pcm: Buffer }
  | { op: 'sigin'; relay: string; text: string }
  | { op: 'gone'; relay: string };
export type ToSocket =
  | { op: 'out'; relay: string; data: Buffer }
  | { op: 'text'; relay: string; frame: TextFrame }
  | { op: 'sigout'; relay: string; text: string }
  | { op: 'stale' | 'turn'; relay: string }
  | { op: 'end'; relay: string; reason: EndReason };
export type BridgeMessage = ToRoom | ToSocket;

type AudioMessage = Extract<BridgeMessage, { op: 'in' | 'out' }>;
type ControlMessage = Exclude<BridgeMessage, AudioMessage>;

const IN = 0x01;
const OUT = 0x02;
const BATCH = 0x03;
const JSON_OBJECT = 0x7b; // `{`
const HEADER_BYTES = 2;
const LENGTH_BYTES = 4;
const MAX_RELAY_BYTES = 0xff;
const CONTROL_OPS: ReadonlySet<string> = new Set<ControlMessage['op']>(['open', 'sigin', 'gone', 'text', 'sigout', 'stale', 'turn', 'end']);

/** The message as published: audio as bytes (its audio copied once, after the header), the rest as JSON text. */
export function encodeBridgeMessage(message: BridgeMessage): Buffer | string {
  if (message.op === 'in') return encodeAudio(IN, message.relay, message.pcm);
  if (message.op === 'out') return encodeAudio(OUT, message.relay, message.data);
  return JSON.stringify(message);
}

function encodeAudio(tag: number, relay: string, audio: Buffer): Buffer {
  const relayBytes = Buffer.byteLength(relay);
  // Relay ids are made by the bridge (`{instance id}.{hex}`): one that does not fit is a bug, not input.
  if (relayBytes === 0 || relayBytes > MAX_RELAY_BYTES) throw new Error(`relay id ${JSON.stringify(relay)} is not 1-${MAX_RELAY_BYTES} bytes`);
  const encoded = Buffer.allocUnsafe(HEADER_BYTES + relayBytes + audio.length);
  encoded[0] = tag;
  encoded[1] = relayBytes;
  encoded.write(relay, HEADER_BYTES);
  audio.copy(encoded, HEADER_BYTES + relayBytes);
  return encoded;
}

/** Several encoded messages as one: [0x03] then each as [its length: 4 bytes, big-endian][it]. */
export function encodeBatch(messages: ReadonlyArray<Buffer | string>): Buffer {
  const parts = messages.map((message) => (typeof message === 'string' ? Buffer.from(message) : message));
  const batch = Buffer.allocUnsafe(1 + parts.reduce((bytes, part) => bytes + LENGTH_BYTES + part.length, 0));
  batch[0] = BATCH;
  let at = 1;
  for (const part of parts) {
    at = batch.writeUInt32BE(part.length, at);
    at += part.copy(batch, at);
  }
  return batch;
}

/**
 * The messages a published one carries, in order: one, or a batch's. What the bridge never sends (a
 * truncated header, an unknown first byte, JSON that is not a control message, a batch in a batch) is
 * dropped; a batch whose lengths run past its end keeps what came before. Audio is a view of `raw`,
 * not a copy.
 */
export function decodeBridgeMessages(raw: Buffer): BridgeMessage[] {
  if (raw[0] !== BATCH) {
    const message = decodeBridgeMessage(raw);
    return message ? [message] : [];
  }
  const messages: BridgeMessage[] = [];
  let at = 1;
  while (at + LENGTH_BYTES <= raw.length) {
    const end = at + LENGTH_BYTES + raw.readUInt32BE(at);
    if (end > raw.length) break;
    const message = decodeBridgeMessage(raw.subarray(at + LENGTH_BYTES, end));
    if (message) messages.push(message);
    at = end;
  }
  return messages;
}

/** One message (not a batch), or null for what the bridge never sends. */
function decodeBridgeMessage(raw: Buffer): BridgeMessage | null {
  if (raw.length === 0) return null;
  const tag = raw[0];
  if (tag === JSON_OBJECT) return decodeControl(raw);
  if ((tag !== IN && tag !== OUT) || raw.length < HEADER_BYTES) return null;
  const relayBytes = raw[1]!;
  const audioStart = HEADER_BYTES + relayBytes;
  if (relayBytes === 0 || raw.length < audioStart) return null;
  const relay = raw.toString('utf8', HEADER_BYTES, audioStart);
  const audio = raw.subarray(audioStart);
  return tag === IN ? { op: 'in', relay, pcm: audio } : { op: 'out', relay, data: audio };
}

function decodeControl(raw: Buffer): ControlMessage | null {
  let message: unknown;
  try {
    message = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof message !== 'object' || message === null) return null;
  const { op, relay } = message as { op?: unknown; relay?: unknown };
  // Audio in JSON (the encoding before this one) is not taken: its fields are text, not bytes.
  if (typeof op !== 'string' || !CONTROL_OPS.has(op) || typeof relay !== 'string') return null;
  return message as ControlMessage;
}
