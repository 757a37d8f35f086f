// The messages of the media bridge (redisBridge.ts) and how they travel on an instance's channel.
//
// Audio (`in`: a relayed source's voice for the room; `out`: what the room sends a relayed sink) is 50
// messages a second per relayed socket, so it travels as bytes, not as base64 inside JSON (a third more
// bytes and a parse per frame):
//
//   [op tag: 1 byte][relay id length: 1 byte][relay id: UTF-8, 1-255 bytes][audio bytes, as they are]
//
// Everything else is rare and stays JSON. Both share the channel (or the direct link between two
// instances, peerLinks.ts, which carries these same payloads), so one connection keeps a relay's
// messages in order: a JSON message is an object, whose text starts with `{`, and the tags are control
// bytes no JSON text may start with (not even as whitespace), so the first byte tells them apart.
// Several messages sent as one (what the bridge sends an instance within a couple of milliseconds) are a batch:
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
/**
 * Published on Redis by an instance whose direct link (peerLinks.ts) to this one is up: what it sends
 * from now on goes on that link, whose frames wait until this is read, after all it published before.
 */
export interface LinkFence {
  op: 'linked';
  from: string;
  link: string;
}
export type BridgeMessage = ToRoom | ToSocket | LinkFence;

type AudioMessage = Extract<BridgeMessage, { op: 'in' | 'out' }>;
type ControlMessage = Exclude<BridgeMessage, AudioMessage>;

const IN = 0x01;
const OUT = 0x02;
const BATCH = 0x03;
const JSON_OBJECT = 0x7b; // `{`
const HEADER_BYTES = 2;
const LENGTH_BYTES = 4;
const MAX_RELAY_BYTES = 0xff;
const CONTROL_OPS: ReadonlySet<string> = new Set<ControlMessage['op']>(['open', 'sigin', 'gone', 'text', 'sigout', 'stale', 'turn', 'end', 'linked']);

/**
 * Messages as one payload, as published or written on a peer link: one message as it is, several as a
 * batch. Each audio frame is copied once, straight into place (no buffer per message): `reserve` bytes
 * are left at the start for the caller's own header (a peer link's frame length).
 */
export function encodeBridgeMessages(messages: readonly BridgeMessage[], reserve = 0): Buffer {
  // Two passes, sizes then bytes: the only thing kept between them is a control message's JSON text.
  const texts: Array<string | undefined> = [];
  let body = messages.length === 1 ? 0 : 1 + LENGTH_BYTES * messages.length;
  for (const message of messages) {
    if (isAudio(message)) {
      const relayBytes = Buffer.byteLength(message.relay);
      // Relay ids are made by the bridge (`{instance id}.{hex}`): one that does not fit is a bug, not input.
      if (relayBytes === 0 || relayBytes > MAX_RELAY_BYTES) throw new Error(`relay id ${JSON.stringify(message.relay)} is not 1-${MAX_RELAY_BYTES} bytes`);
      body += HEADER_BYTES + relayBytes + audioOf(message).length;
      texts.push(undefined);
    } else {
      const text = JSON.stringify(message);
      body += Buffer.byteLength(text);
      texts.push(text);
    }
  }
  const payload = Buffer.allocUnsafe(reserve + body);
  let at = reserve;
  if (messages.length !== 1) payload[at++] = BATCH;
  messages.forEach((message, i) => {
    const lengthAt = at;
    if (messages.length !== 1) at += LENGTH_BYTES;
    const text = texts[i];
    if (text !== undefined) at += payload.write(text, at);
    else if (isAudio(message)) {
      payload[at] = message.op === 'in' ? IN : OUT;
      const relayBytes = payload.write(message.relay, at + HEADER_BYTES);
      payload[at + 1] = relayBytes;
      at += HEADER_BYTES + relayBytes;
      at += audioOf(message).copy(payload, at);
    }
    if (messages.length !== 1) payload.writeUInt32BE(at - lengthAt - LENGTH_BYTES, lengthAt);
  });
  return payload;
}

const isAudio = (message: BridgeMessage): message is AudioMessage => message.op === 'in' || message.op === 'out';
const audioOf = (message: AudioMessage): Buffer => (message.op === 'in' ? message.pcm : message.data);

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
  const { op, relay, from, link } = message as { op?: unknown; relay?: unknown; from?: unknown; link?: unknown };
  if (op === 'linked') return typeof from === 'string' && typeof link === 'string' ? (message as LinkFence) : null;
  // Audio in JSON (the encoding before this one) is not taken: its fields are text, not bytes.
  if (typeof op !== 'string' || !CONTROL_OPS.has(op) || typeof relay !== 'string') return null;
  return message as ControlMessage;
}
