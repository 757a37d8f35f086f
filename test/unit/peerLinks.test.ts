// The media bridge's direct links between instances (peerLinks.ts): frames taken apart whatever the
// chunks, a link proven with the deployment's key both ways before anything crosses, its frames held
// until the sender's fence, and one write per payload, as written, on the wire.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { LINK_HEADER_BYTES, LinkFrames, PeerLinks, sealFrame } from '../../src/calls/media/transports/bridge/peerLinks.js';
import { waitUntil } from '../support/waiting.js';

const frameOf = (payload: Buffer) => sealFrame(Buffer.concat([Buffer.alloc(LINK_HEADER_BYTES), payload]));

describe('frames on a link', () => {
  const payloads = [Buffer.from('first'), Buffer.alloc(0), Buffer.from(Array.from({ length: 3_000 }, (_, i) => i % 251)), Buffer.from('last')];
  const wire = Buffer.concat(payloads.map(frameOf));
  const hex = (buffers: Buffer[]) => buffers.map((buffer) => buffer.toString('hex'));

  it('are [length: 4 bytes, big-endian][payload]', () => {
    expect(frameOf(Buffer.from('abc')).equals(Buffer.from([0, 0, 0, 3, 0x61, 0x62, 0x63]))).toBe(true);
  });

  it('come out whole and in order, whatever the chunks (every split point, and a byte at a time)', () => {
    for (let split = 0; split <= wire.length; split += 7) {
      const frames = new LinkFrames(1 << 20);
      const out: Buffer[] = [];
      frames.push(wire.subarray(0, split), (p) => out.push(Buffer.from(p)));
      frames.push(wire.subarray(split), (p) => out.push(Buffer.from(p)));
      expect(hex(out), `split at ${split}`).toEqual(hex(payloads));
    }
    const frames = new LinkFrames(1 << 20);
    const out: Buffer[] = [];
    for (const byte of wire) frames.push(Buffer.from([byte]), (p) => out.push(Buffer.from(p)));
    expect(hex(out)).toEqual(hex(payloads));
  });

  it('refuse a length over the limit (the stream cannot be read further)', () => {
    const frames = new LinkFrames(100);
    expect(() => frames.push(frameOf(Buffer.alloc(101)), () => {})).toThrow(/over the limit/);
  });
});

const SECRETS_KEY = Buffer.alloc(32, 7);
const silent = pino({ level: 'silent' });

describe('a link between two instances (real sockets)', () => {
  const started: PeerLinks[] = [];
  afterEach(async () => {
    for (const links of started.splice(0)) await links.close();
  });

  async function start(instanceId: string, key = SECRETS_KEY) {
    const received: Buffer[] = [];
    const fences: Array<{ instance: string; link: string }> = [];
    const links = await PeerLinks.start({
      instanceId,
      secretsKey: key,
      listenHost: '127.0.0.1',
      port: 0,
      advertisedHost: '127.0.0.1',
      logger: silent,
      receive: (payload) => received.push(Buffer.from(payload)),
      linked: (instance, link) => fences.push({ instance, link }),
    });
    started.push(links);
    return { links, received, fences };
  }

  it('is proven, then carries each payload as one frame, held until the fence and in order', async () => {
    const a = await start('inst_a');
    const b = await start('inst_b');
    expect(a.links.write('inst_b', frameOf(Buffer.from('none yet')))).toBe(false);
    expect(a.links.mayDial('inst_b')).toBe(true);
    a.links.dial('inst_b', b.links.address);
    expect(a.links.mayDial('inst_b')).toBe(false);
    await waitUntil(() => a.fences.length === 1, 'the link proven');
    expect(a.fences[0]!.instance).toBe('inst_b');
    const sent = [Buffer.from([0x01, 1, 0x72, 9, 9]), Buffer.from('{"op":"gone","relay":"r"}'), Buffer.alloc(70_000, 3)];
    // As the bridge encodes them: the frame's first bytes left free for its length.
    for (const payload of sent) expect(a.links.write('inst_b', Buffer.concat([Buffer.alloc(LINK_HEADER_BYTES), payload]))).toBe(true);
    // Nothing is taken before the fence (what was published before it must come first).
    await new Promise((resolve) => setImmediate(resolve));
    expect(b.received).toEqual([]);
    b.links.fenced('inst_other', a.fences[0]!.link); // a fence from another instance releases nothing
    b.links.fenced('inst_a', a.fences[0]!.link);
    await waitUntil(() => b.received.length === sent.length, 'every payload');
    expect(b.received).toEqual(sent);
    // After the fence, frames are taken as they come.
    a.links.write('inst_b', frameOf(Buffer.from('after')));
    await waitUntil(() => b.received.length === sent.length + 1, 'the later payload');
    expect(b.received.at(-1)!.toString()).toBe('after');
  });

  it('is refused to an instance without the same key, and to one that answers for another instance', async () => {
    const a = await start('inst_a');
    const stranger = await start('inst_b', Buffer.alloc(32, 8));
    a.links.dial('inst_b', stranger.links.address);
    await waitUntil(() => a.links.mayDial('inst_b', Date.now() + 60_000), 'the link given up');
    expect(a.fences).toEqual([]);
    expect(a.links.write('inst_b', frameOf(Buffer.from('x')))).toBe(false);
    // The right key, but the instance listening there is not the one dialled.
    const other = await start('inst_c');
    a.links.dial('inst_d', other.links.address);
    await waitUntil(() => a.links.mayDial('inst_d', Date.now() + 60_000), 'the link given up');
    expect(a.fences).toEqual([]);
  });

  it('proves nothing to a client that does not hold the key, and takes nothing from it', async () => {
    const b = await start('inst_b');
    const socket = net.connect(b.links.address.port, '127.0.0.1');
    const got: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => got.push(chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    await waitUntil(() => Buffer.concat(got).length >= LINK_HEADER_BYTES + 32, 'the challenge');
    // The challenge: 32 random bytes in a frame.
    expect(Buffer.concat(got).readUInt32BE(0)).toBe(32);
    const hello = Buffer.from(JSON.stringify({ from: 'inst_x', to: 'inst_b', link: 'l', nonce: '00'.repeat(32) }));
    socket.write(frameOf(Buffer.concat([Buffer.alloc(32), hello])));
    socket.write(frameOf(Buffer.from('{"op":"gone","relay":"r"}')));
    await closed;
    expect(Buffer.concat(got).length).toBe(LINK_HEADER_BYTES + 32);
    expect(b.received).toEqual([]);
  });

  it('ends when the other instance stops: nothing more is written on it, and it may be dialled again', async () => {
    const a = await start('inst_a');
    const b = await start('inst_b');
    a.links.dial('inst_b', b.links.address);
    await waitUntil(() => a.fences.length === 1, 'the link proven');
    await b.links.close();
    await waitUntil(() => !a.links.write('inst_b', frameOf(Buffer.from('x'))), 'the link gone');
    expect(a.links.mayDial('inst_b', Date.now() + 60_000)).toBe(true);
  });
});
