// The media bridge's messages as they cross Redis: audio as its own bytes behind a small header, control
// messages as JSON on the same channel, told apart by their first byte, several as one batch in order;
// what the bridge never sends is dropped, never thrown on.
import { describe, expect, it } from 'vitest';
import { TEST_PROVENANCE } from '../../src/calls/media/protocol.js';
import { decodeBridgeMessages, encodeBridgeMessages, type BridgeMessage } from '../../src/calls/media/transports/bridge/bridgeMessages.js';

const RELAY = 'inst_01hzx3k9m2.5f3a9c0e7b21';
/** Every byte value, `{` and the audio tags among them, twice over: what a frame of PCM may hold. */
const AUDIO = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

const encodeOne = (message: BridgeMessage) => encodeBridgeMessages([message]);
/** A batch as the wire has it, built by hand from raw parts (what the bridge never sends among them). */
const rawBatch = (parts: Buffer[]) =>
  Buffer.concat([Buffer.from([0x03]), ...parts.flatMap((part) => [Buffer.from([0, 0, part.length >> 8, part.length & 0xff]), part])]);
/** The one message a published payload carries, or null when it carries none. */
const decodeOne = (raw: Buffer) => {
  const messages = decodeBridgeMessages(raw);
  expect(messages.length).toBeLessThanOrEqual(1);
  return messages[0] ?? null;
};
const roundTrip = (message: BridgeMessage) => decodeOne(encodeOne(message));

describe('audio on the bridge', () => {
  it('crosses as its own bytes after a header of the op and the relay id, and comes back as it went', () => {
    for (const [op, tag] of [
      ['in', 0x01],
      ['out', 0x02],
    ] as const) {
      const message: BridgeMessage = op === 'in' ? { op, relay: RELAY, pcm: AUDIO } : { op, relay: RELAY, data: AUDIO };
      const wire = encodeOne(message);
      expect(wire[0]).toBe(tag);
      expect(wire[1]).toBe(RELAY.length);
      expect(wire.subarray(2, 2 + RELAY.length).toString()).toBe(RELAY);
      expect(wire.subarray(2 + RELAY.length).equals(AUDIO)).toBe(true);
      expect(wire.length).toBe(2 + RELAY.length + AUDIO.length);
      expect(decodeOne(wire)).toEqual(message);
    }
  });

  it('keeps empty audio, a relay id of 255 bytes and one that is not ASCII', () => {
    expect(roundTrip({ op: 'in', relay: RELAY, pcm: Buffer.alloc(0) })).toEqual({ op: 'in', relay: RELAY, pcm: Buffer.alloc(0) });
    const longest = 'r'.repeat(255);
    expect(roundTrip({ op: 'out', relay: longest, data: AUDIO })).toEqual({ op: 'out', relay: longest, data: AUDIO });
    expect(roundTrip({ op: 'out', relay: 'caf\u00e9.1', data: AUDIO })).toEqual({ op: 'out', relay: 'caf\u00e9.1', data: AUDIO });
  });

  it('refuses to send a relay id that does not fit its length byte', () => {
    expect(() => encodeOne({ op: 'in', relay: 'r'.repeat(256), pcm: AUDIO })).toThrow(/relay id/);
    expect(() => encodeOne({ op: 'in', relay: '', pcm: AUDIO })).toThrow(/relay id/);
  });
});

describe('control messages on the same channel', () => {
  const controls: BridgeMessage[] = [
    { op: 'open', relay: RELAY, from: 'inst_a', call: 'call_1', endpoint: { side: 'agent', credential: 'link', kind: 'listen', format: 'wav' } },
    { op: 'sigin', relay: RELAY, text: '{"type":"offer","sdp":"v=0\\r\\n caf\u00e9"}' },
    { op: 'gone', relay: RELAY },
    { op: 'text', relay: RELAY, frame: TEST_PROVENANCE },
    { op: 'sigout', relay: RELAY, text: '{"type":"peer","present":true}' },
    { op: 'stale', relay: RELAY },
    { op: 'turn', relay: RELAY },
    { op: 'end', relay: RELAY, reason: 'call_ended' },
    { op: 'linked', from: 'inst_a', link: '5f3a9c0e7b21' },
  ];

  it('cross as JSON objects and come back as they went', () => {
    for (const message of controls) {
      expect(encodeOne(message).toString()).toBe(JSON.stringify(message));
      expect(roundTrip(message)).toEqual(message);
    }
  });

  it('are never taken for audio, nor audio for them, whatever the audio holds', () => {
    // Audio whose bytes are a control message's JSON text is still audio.
    const lookalike = Buffer.from(JSON.stringify(controls[2]));
    expect(roundTrip({ op: 'out', relay: RELAY, data: lookalike })).toEqual({ op: 'out', relay: RELAY, data: lookalike });
    // A relay id that starts with `{` stays in the header.
    expect(roundTrip({ op: 'in', relay: '{"op":"gone"}', pcm: AUDIO })).toEqual({ op: 'in', relay: '{"op":"gone"}', pcm: AUDIO });
    // Audio in JSON (base64 text, as it was sent before) is not taken as audio.
    expect(decodeBridgeMessages(Buffer.from(JSON.stringify({ op: 'in', relay: RELAY, pcm: AUDIO.toString('base64') })))).toEqual([]);
    expect(decodeBridgeMessages(Buffer.from(JSON.stringify({ op: 'out', relay: RELAY, data: AUDIO.toString('base64') })))).toEqual([]);
  });
});

describe('a batch (what one turn of the event loop sends an instance)', () => {
  const messages: BridgeMessage[] = [
    { op: 'open', relay: RELAY, from: 'inst_a', call: 'call_1', endpoint: { side: 'agent', credential: 'link', kind: 'stream', sourceKey: 'ws:a' } },
    { op: 'in', relay: RELAY, pcm: AUDIO },
    { op: 'sigin', relay: RELAY, text: '{"type":"state"}' },
    { op: 'in', relay: 'inst_b.2', pcm: Buffer.alloc(0) },
    { op: 'gone', relay: RELAY },
  ];
  const batch = () => encodeBridgeMessages(messages);

  it('carries each message, audio and JSON alike, in the order sent', () => {
    const raw = batch();
    expect(raw[0]).toBe(0x03);
    expect(decodeBridgeMessages(raw)).toEqual(messages);
    // Each is [its length: 4 bytes][it], as it would have been published alone.
    expect(raw.equals(rawBatch(messages.map(encodeOne)))).toBe(true);
  });

  it('leaves the bytes asked for free at the start, before the same payload', () => {
    const reserved = encodeBridgeMessages(messages, 4);
    expect(reserved.subarray(4).equals(batch())).toBe(true);
    const one = encodeBridgeMessages([messages[1]!], 4);
    expect(one.length).toBe(4 + encodeOne(messages[1]!).length);
    expect(one.subarray(4).equals(encodeOne(messages[1]!))).toBe(true);
  });

  it('keeps what came before a length that runs past its end, and skips what the bridge never sends', () => {
    const raw = batch();
    const cut = raw.subarray(0, raw.length - 3);
    expect(decodeBridgeMessages(cut)).toEqual(messages.slice(0, -1));
    const withJunk = rawBatch([encodeOne(messages[1]!), Buffer.from([0x07, 1, 0x61]), Buffer.from('{"op":"bogus","relay":"r"}'), encodeOne(messages[4]!)]);
    expect(decodeBridgeMessages(withJunk)).toEqual([messages[1], messages[4]]);
    // A batch inside a batch is not the bridge's.
    expect(decodeBridgeMessages(rawBatch([batch()]))).toEqual([]);
    expect(decodeBridgeMessages(Buffer.from([0x03]))).toEqual([]);
    expect(decodeBridgeMessages(Buffer.from([0x03, 0, 0]))).toEqual([]);
  });
});

describe('what the bridge never sends', () => {
  it('is dropped (null) without throwing', () => {
    const malformed = [
      Buffer.alloc(0),
      Buffer.from([0x01]), // a tag without the relay id's length
      Buffer.from([0x02, 0]), // an empty relay id
      Buffer.from([0x01, 10, 0x61, 0x62]), // a relay id longer than what follows
      Buffer.from([0x00, 1, 0x61]), // unknown tags
      Buffer.from([0x03, 1, 0x61]),
      Buffer.from([0xff, 1, 0x61]),
      Buffer.from(' {"op":"gone","relay":"r"}'), // JSON the bridge does not write (its own starts with `{`)
      Buffer.from('["gone","r"]'),
      Buffer.from('"gone"'),
      Buffer.from('null'),
      Buffer.from('{"op":"gone"'),
      Buffer.from('{}'),
      Buffer.from('{"op":"gone"}'),
      Buffer.from('{"op":"gone","relay":7}'),
      Buffer.from('{"op":7,"relay":"r"}'),
      Buffer.from('{"op":"bogus","relay":"r"}'),
      Buffer.from('{"op":"linked","from":"inst_a"}'), // a fence without its link
      Buffer.from('{"op":"linked","link":"l","from":7}'),
      Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), // `{`, bytes that are not UTF-8, `}`
    ];
    for (const raw of malformed) expect(decodeBridgeMessages(raw), raw.toString('hex')).toEqual([]);
  });

  it('never throws, whatever the bytes', () => {
    // A fixed sequence of pseudo-random buffers (a linear congruential generator), first bytes weighted to the tags.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let i = 0; i < 2_000; i++) {
      const bytes = Buffer.from(Array.from({ length: next() % 40 }, () => next() % 256));
      if (bytes.length > 0 && i % 2 === 0) bytes[0] = [0x01, 0x02, 0x03, 0x7b][i % 4]!;
      expect(() => decodeBridgeMessages(bytes)).not.toThrow();
    }
  });
});
