// Direct links between instances for the media bridge (redisBridge.ts). Through Redis, each relayed
// frame costs its sender a publish and the reading of Redis's reply, and its receiver a read, on top
// of the work a frame on the room's own instance costs (docs/performance.md, "Relayed calls under
// load"). A TCP connection from one instance straight to another carries the same payloads with a write
// on one side and a read on the other, one of each per turn of the sender's event loop.
//
// Redis still says where a room is, and where an instance listens (its lease's value); a link carries
// one way, from the instance that dialled it, so each instance dials those it sends to. Only instances
// that share SECRETS_KEY link up: both prove they hold a key derived from it (HMAC over the other's
// random challenge; the key never crosses, nor reaches a log). The link is authenticated, not
// encrypted, as the Redis connection is: it belongs on the deployment's internal network.
//
// Order: what an instance published on Redis before its link was up must be taken before what it then
// writes on the link. So, once the link is proven, the sender publishes a fence (`linked`) after all it
// published before and sends everything after on the link; the receiver holds the link's frames until
// it reads that fence from Redis. When a link goes down the sender publishes on Redis again (what was
// in flight on the link is lost, as a frame is when an instance dies) and dials again a moment later.
//
// On the wire, each way: [length: 4 bytes, big-endian][payload]. The listener first sends a challenge
// (32 random bytes); the dialler answers [HMAC(key, "hello" challenge hello)][hello: JSON {from, to,
// link, nonce}]; the listener answers [HMAC(key, "accept" nonce link)], and from then on the dialler's
// frames are the bridge's payloads (bridgeMessages.ts).
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';

export const LINK_HEADER_BYTES = 4;
const CHALLENGE_BYTES = 32;
const MAC_BYTES = 32;
const MAX_HELLO_BYTES = 1_024;
/** A turn's messages to one instance: hundreds of frames under load, far below this. */
const MAX_FRAME_BYTES = 16 << 20;
/** Frames of a link whose fence has not come yet; a peer that sends this many without one is dropped. */
const MAX_UNFENCED_FRAMES = 10_000;
/** A peer that stops reading: its link is dropped (the bridge goes through Redis) rather than buffered without end. */
const MAX_UNSENT_BYTES = 32 << 20;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** After a link fails or ends, the same instance is dialled again no sooner than this. */
export const REDIAL_AFTER_MS = 1_000;

/** The key links are proven with, derived from SECRETS_KEY (so the key itself is used for nothing else). */
export function linkKey(secretsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'lia media peer link v1', 32));
}

/**
 * The host other instances dial when MEDIA_PEER_HOST is not set: the address listened on, when it is
 * one; when it is every address, this machine's first external IPv4 address (a container's, a pod's).
 */
export function defaultPeerHost(listenHost: string): string {
  if (!['0.0.0.0', '::', ''].includes(listenHost)) return listenHost;
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal);
  return external?.address ?? '127.0.0.1';
}

const mac = (key: Buffer, ...parts: Array<Buffer | string>) => {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
};

/**
 * Takes a byte stream apart into its frames ([length: 4 bytes, big-endian][payload]), whatever the
 * chunks: each whole frame is handed on in order, as a view of the bytes (one copy only when a frame
 * spans chunks). A length over the limit throws: the stream cannot be read further.
 */
export class LinkFrames {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes the first buffered frame takes, header included; 0 while its header is not whole. */
  private needed = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer, onFrame: (payload: Buffer) => void): void {
    let data = chunk;
    if (this.buffered > 0) {
      // What is buffered is the start of one frame: once it is whole, only it is copied.
      const before = this.buffered;
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.needed === 0 && this.buffered >= LINK_HEADER_BYTES) this.needed = this.frameBytes(Buffer.concat(this.chunks, LINK_HEADER_BYTES), 0);
      if (this.needed === 0 || this.buffered < this.needed) return;
      const fromChunk = this.needed - before;
      this.chunks[this.chunks.length - 1] = chunk.subarray(0, fromChunk);
      const frame = Buffer.concat(this.chunks, this.needed);
      this.chunks = [];
      this.buffered = 0;
      this.needed = 0;
      onFrame(frame.subarray(LINK_HEADER_BYTES));
      data = chunk.subarray(fromChunk);
    }
    let at = 0;
    while (data.length - at >= LINK_HEADER_BYTES) {
      const end = at + this.frameBytes(data, at);
      if (end > data.length) break;
      onFrame(data.subarray(at + LINK_HEADER_BYTES, end));
      at = end;
    }
    if (at < data.length) {
      this.chunks.push(data.subarray(at));
      this.buffered = data.length - at;
      if (this.buffered >= LINK_HEADER_BYTES) this.needed = this.frameBytes(data, at);
    }
  }

  private frameBytes(data: Buffer, at: number): number {
    const length = data.readUInt32BE(at);
    if (length > this.maxBytes) throw new Error(`a frame of ${length} bytes is over the limit of ${this.maxBytes}`);
    return LINK_HEADER_BYTES + length;
  }
}

/** A frame as written: its length in the first 4 bytes, which the caller left free. */
export function sealFrame(frame: Buffer): Buffer {
  frame.writeUInt32BE(frame.length - LINK_HEADER_BYTES, 0);
  return frame;
}

const frameOf = (payload: Buffer) => sealFrame(Buffer.concat([Buffer.alloc(LINK_HEADER_BYTES), payload]));

export interface PeerAddress {
  host: string;
  port: number;
}

export interface PeerLinksOptions {
  instanceId: string;
  secretsKey: Buffer;
  /** Where this instance listens for links (HOST), and on which port (0: any free one). */
  listenHost: string;
  port: number;
  /** The host other instances dial (advertised through Redis with the port listened on). */
  advertisedHost: string;
  logger: Logger;
  /** A payload a proven peer sent, in the order it sent them, from its fence on. */
  receive(payload: Buffer): void;
  /**
   * A link to `instance` is proven: the bridge publishes its fence on Redis here, after what it
   * published before. What the bridge sends to the instance once this returns goes on the link.
   */
  linked(instance: string, link: string): void;
}

interface Outbound {
  socket: net.Socket;
  link: string;
  open: boolean;
}

interface Inbound {
  from: string;
  socket: net.Socket;
  /** Frames held until the fence is read, null once it was. */
  unfenced: Buffer[] | null;
}

/** How many refused addresses are remembered to log each once. */
const REFUSED_REMEMBERED = 1_024;

export class PeerLinks {
  private readonly key: Buffer;
  private readonly server: net.Server;
  private readonly outbound = new Map<string, Outbound>();
  private readonly inbound = new Map<string, Inbound>();
  /**
   * Addresses already logged as not proving the key (a misconfigured instance retries every second), so each is
   * logged once; forgotten all at once past REFUSED_REMEMBERED, so that a scan from many addresses holds no memory.
   */
  private readonly refused = new Set<string>();
  /** Every accepted connection, proven or not, so closing does not wait on any. */
  private readonly accepted = new Set<net.Socket>();
  private readonly dialAfter = new Map<string, number>();
  private closed = false;
  address: PeerAddress = { host: '', port: 0 };

  private constructor(private readonly options: PeerLinksOptions) {
    this.key = linkKey(options.secretsKey);
    this.server = net.createServer((socket) => this.accept(socket));
  }

  static async start(options: PeerLinksOptions): Promise<PeerLinks> {
    const links = new PeerLinks(options);
    await new Promise<void>((resolve, reject) => {
      links.server.once('error', reject);
      links.server.listen(options.port, options.listenHost, () => {
        links.server.off('error', reject);
        resolve();
      });
    });
    links.address = { host: options.advertisedHost, port: (links.server.address() as net.AddressInfo).port };
    return links;
  }

  /** Links this instance dialled that are open now. */
  get open(): number {
    let open = 0;
    for (const outbound of this.outbound.values()) if (outbound.open) open++;
    return open;
  }

  /** Whether `instance` may be dialled now: no link to it, being made or open, and none failed just now. */
  mayDial(instance: string, now = Date.now()): boolean {
    return !this.closed && !this.outbound.has(instance) && (this.dialAfter.get(instance) ?? 0) <= now;
  }

  /** Holds the place of a dial whose address is being looked up, so one lookup runs at a time. */
  dialing(instance: string): void {
    this.dialAfter.set(instance, Date.now() + REDIAL_AFTER_MS);
  }

  /**
   * Writes a frame (LINK_HEADER_BYTES left free at its start) on the open link to `instance`; false when
   * there is none. A peer that stopped reading loses its link.
   */
  write(instance: string, frame: Buffer): boolean {
    const outbound = this.outbound.get(instance);
    // Destroyed but not yet closed (its 'close' comes on a later turn): what is written now would be lost.
    if (!outbound?.open || !outbound.socket.writable) return false;
    if (outbound.socket.writableLength > MAX_UNSENT_BYTES) {
      this.options.logger.warn({ instance }, 'media peer link: the other instance stopped reading; going through Redis');
      outbound.socket.destroy();
      return false;
    }
    outbound.socket.write(sealFrame(frame));
    return true;
  }

  /** The link `link` to `instance` could not be fenced (Redis refused the fence): it is dropped. */
  drop(instance: string, link: string): void {
    const outbound = this.outbound.get(instance);
    if (outbound?.link === link) outbound.socket.destroy();
  }

  dial(instance: string, address: PeerAddress): void {
    if (this.closed || this.outbound.has(instance)) return;
    const link = randomBytes(12).toString('hex');
    const nonce = randomBytes(CHALLENGE_BYTES);
    const socket = net.connect({ host: address.host, port: address.port });
    socket.setNoDelay(true);
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy(new Error('no answer to the handshake in time')));
    const outbound: Outbound = { socket, link, open: false };
    this.outbound.set(instance, outbound);
    const frames = new LinkFrames(MAX_HELLO_BYTES);
    let step: 'challenge' | 'proof' | 'open' = 'challenge';
    const onFrame = (payload: Buffer) => {
      if (step === 'challenge') {
        const hello = Buffer.from(JSON.stringify({ from: this.options.instanceId, to: instance, link, nonce: nonce.toString('hex') }));
        socket.write(frameOf(Buffer.concat([mac(this.key, 'hello', payload, hello), hello])));
        step = 'proof';
      } else if (step === 'proof') {
        const expected = mac(this.key, 'accept', nonce, link);
        if (payload.length !== MAC_BYTES || !timingSafeEqual(payload, expected)) throw new Error('the other instance did not prove the deployment\'s key');
        step = 'open';
        socket.setTimeout(0);
        socket.setKeepAlive(true, 10_000);
        this.options.linked(instance, link);
        outbound.open = true;
      } else {
        throw new Error('the other instance sent on a link that carries the other way');
      }
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        frames.push(chunk, onFrame);
      } catch (err) {
        socket.destroy(err as Error);
      }
    });
    socket.on('error', (err) => this.options.logger.debug({ err, instance }, 'media peer link: dialled link failed'));
    socket.on('close', () => {
      if (this.outbound.get(instance) === outbound) this.outbound.delete(instance);
      this.dialAfter.set(instance, Date.now() + REDIAL_AFTER_MS);
      if (outbound.open && !this.closed) this.options.logger.info({ instance }, 'media peer link: closed; going through Redis');
    });
  }

  private accept(socket: net.Socket): void {
    if (this.closed) return void socket.destroy();
    this.accepted.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy());
    const challenge = randomBytes(CHALLENGE_BYTES);
    socket.write(frameOf(challenge));
    let frames = new LinkFrames(MAX_HELLO_BYTES);
    let peer: (Inbound & { link: string }) | null = null;
    const onFrame = (payload: Buffer) => {
      if (peer) return this.take(peer, payload);
      const hello = this.proven(challenge, payload);
      if (!hello) {
        const remote = socket.remoteAddress ?? '';
        if (this.refused.has(remote)) throw new Error('not proven');
        if (this.refused.size >= REFUSED_REMEMBERED) this.refused.clear();
        this.refused.add(remote);
        this.options.logger.warn({ remote: socket.remoteAddress }, 'media peer link: refused a connection that did not prove the deployment\'s key');
        throw new Error('not proven');
      }
      peer = { from: hello.from, link: hello.link, socket, unfenced: [] };
      this.inbound.set(hello.link, peer);
      socket.setTimeout(0);
      socket.setKeepAlive(true, 10_000);
      frames = new LinkFrames(MAX_FRAME_BYTES);
      socket.write(frameOf(mac(this.key, 'accept', Buffer.from(hello.nonce, 'hex'), hello.link)));
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        frames.push(chunk, onFrame);
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', (err) => this.options.logger.debug({ err }, 'media peer link: accepted link failed'));
    socket.on('close', () => {
      this.accepted.delete(socket);
      if (peer && this.inbound.get(peer.link) === peer) this.inbound.delete(peer.link);
    });
  }

  /** The hello, if it proves the key against this challenge and is meant for this instance. */
  private proven(challenge: Buffer, payload: Buffer): { from: string; link: string; nonce: string } | null {
    if (payload.length <= MAC_BYTES) return null;
    const hello = payload.subarray(MAC_BYTES);
    if (!timingSafeEqual(payload.subarray(0, MAC_BYTES), mac(this.key, 'hello', challenge, hello))) return null;
    try {
      const { from, to, link, nonce } = JSON.parse(hello.toString('utf8')) as Record<string, unknown>;
      if (to !== this.options.instanceId || typeof from !== 'string' || typeof link !== 'string' || typeof nonce !== 'string') return null;
      if (!/^[0-9a-f]{64}$/.test(nonce) || this.inbound.has(link)) return null;
      return { from, link, nonce };
    } catch {
      return null;
    }
  }

  private take(peer: Inbound, payload: Buffer): void {
    if (!peer.unfenced) return this.options.receive(payload);
    if (peer.unfenced.length >= MAX_UNFENCED_FRAMES) throw new Error('no fence came');
    peer.unfenced.push(payload);
  }

  /** `from`'s fence for `link` was read from Redis: the link's frames are taken, those held first. */
  fenced(from: string, link: string): void {
    const peer = this.inbound.get(link);
    if (!peer || peer.from !== from || !peer.unfenced) return;
    const held = peer.unfenced;
    peer.unfenced = null;
    for (const payload of held) this.options.receive(payload);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closedServer = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const { socket } of this.outbound.values()) socket.end();
    for (const socket of this.accepted) socket.destroy();
    this.outbound.clear();
    await closedServer;
  }
}
