// Several instances, one call (docs/several-instances.md): a call's room lives on one instance; a socket of that call
// (browser stream, listen or signalling, AudioSocket line, Twilio stream) that reached another instance
// is relayed to it through Redis, as LiveKit's nodes relay to the node hosting a room. The socket stays
// where it landed; what the room would do with it (feed its voice in, send it what its side hears,
// end it) crosses Redis as small messages. A signalling socket's frames cross too: a call's signalling
// peers all meet on the room's instance, where a relayed one is its stand-in (joins, is told presence,
// has the other side's frames passed to it); its frames are checked where it landed.
//
// Where a room lives: the key `{prefix}room:{call}` names the instance holding it, with a lease the
// holder renews while the room is open. An instance is alive while its key `{prefix}instance:{id}` is
// (renewed likewise): a room whose holder is gone is taken over by the next instance that needs it, and
// the relayed sockets of the lost instance's calls reconnect and land in the new room.
//
// Redis may go away. Rooms then stay where they are: a socket for a call whose room is here joins it
// (the plane does not ask), one for any other call is refused until Redis is back (RoomsUnreachable),
// and relayed sockets hear nothing meanwhile. When it is back, perhaps empty, each instance at once
// takes its leases again (a lapsed lease of its own is claimed anew unless another instance took it),
// and judges no other instance dead before that one has had the time to reconnect and renew its own.
//
// Messages (on `{prefix}media:{instance}`, the channel of the instance they are for; bridgeMessages.ts):
//   to the room's instance:   open {relay, from, call, endpoint}, in {relay, pcm}, sigin {relay, text},
//                             gone {relay}
//   to the socket's instance: out {relay, data}, text {relay, frame}, sigout {relay, text}, stale {relay},
//                             turn {relay}, end {relay, reason}
// Audio (`in`, `out`) travels as its bytes behind a small binary header, the rest as JSON; a signalling
// frame (`sigin`: the socket's, `sigout`: for it, the other side's or presence) is its text as sent. What
// the bridge sends an instance within BATCH_WINDOW_MS goes as one payload, in order (a batch when there
// are several), on the direct link to it (peerLinks.ts) or, without one, as one Redis message: a
// write and the other instance's read then carry several frames. The link, or one publishing
// connection per instance and one subscribed connection, keep each relay's messages in order, and what arrives before the room has
// taken the endpoint waits for it (PendingInlet): each frame reaches the room once, after the `open` it
// follows.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MISSED_HEARTBEATS } from '../../../../deployment/instances.js';
import { connected, RECONNECT_AT_MOST_EVERY_MS } from '../../../../deployment/redis.js';
import type { CallRow } from '../../../calls.js';
import type { Side } from '../../../side.js';
import { EndpointState, isSignalPeer, isSink, isSource, type CallEndpoint, type Credential, type EndReason } from '../../endpoints.js';
import { PendingInlet, type Inlet } from '../../inlet.js';
import { RoomsUnreachable, type MediaPlane, type RemoteRooms, type Transport } from '../../plane.js';
import type { TextFrame } from '../../protocol.js';
import { decodeBridgeMessages, encodeBridgeMessages, type BridgeMessage, type EndpointDescription, type ToRoom, type ToSocket } from './bridgeMessages.js';
import { LINK_HEADER_BYTES, PeerLinks, type PeerAddress, type PeerLinksOptions } from './peerLinks.js';

/**
 * How long a message waits for others to the same instance. A relayed frame costs a write and a read
 * of its own otherwise (what 50 calls' frames come to, one per turn of the event loop, when the loop is
 * not busy); 2 ms puts about five in each at 50 calls (docs/performance.md, "Relayed calls under load").
 */
const BATCH_WINDOW_MS = 2;

/** Deletes the key only while it still holds `value` (a lease is given up only by its holder). */
const DELETE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
/** Renews the lease while it holds `value`, or takes it again when it lapsed (Redis lost it, or renewing came late); 0 when another holds it. */
const RENEW_OR_CLAIM = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/**
 * An endpoint of another instance, in a room here: what the room does to it is sent there. It is a
 * source, a sink, a signalling peer, or neither exactly as the endpoint over there is.
 */
class RelayedEndpoint extends EndpointState {
  readonly side: Side;
  readonly credential: Credential;
  readonly kind: string;

  constructor(
    description: EndpointDescription,
    private readonly send: (message: ToSocket) => void,
    private readonly relay: string,
    readonly callId: string,
  ) {
    super();
    this.side = description.side;
    this.credential = description.credential;
    this.kind = description.kind;
    // The room and the signalling tell kinds apart by these properties: only what the original has.
    if (description.sourceKey !== undefined) Object.assign(this, { sourceKey: description.sourceKey });
    if (description.format !== undefined) Object.assign(this, { format: description.format });
    if (description.signalling) Object.assign(this, { signal: (text: string) => this.send({ op: 'sigout', relay, text }) });
  }

  audio(data: Buffer): void {
    this.send({ op: 'out', relay: this.relay, data });
  }

  text(frame: TextFrame): void {
    this.send({ op: 'text', relay: this.relay, frame });
  }

  otherLanguageChanged(): void {
    this.send({ op: 'stale', relay: this.relay });
  }

  turnStarted(): void {
    this.send({ op: 'turn', relay: this.relay });
  }

  protected close(reason: EndReason): void {
    this.send({ op: 'end', relay: this.relay, reason });
  }
}

/** A relayed endpoint hosted here, and its input (audio, signalling frames), which waits until the room takes it. */
interface HostedEntry {
  endpoint: RelayedEndpoint;
  /** The instance whose socket it stands for. */
  from: string;
  input: PendingInlet;
}

export interface RedisBridgeOptions {
  commands: Redis;
  /** A connection for this bridge alone: its messages come as Buffers (`messageBuffer`), audio among them. */
  subscriber: Redis;
  prefix: string;
  instanceId: string;
  /** How often this instance's leases are renewed; one that missed MISSED_HEARTBEATS renewals is dead. */
  renewEveryMs: number;
  logger: Logger;
  /** Direct links to the other instances (peerLinks.ts); without, every message goes through Redis. */
  links?: Pick<PeerLinksOptions, 'secretsKey' | 'listenHost' | 'port' | 'advertisedHost'>;
}

/** Where an instance's lease says its links are accepted; null when it says nothing (no links, or a version without). */
export function peerAddressOf(lease: string | null): PeerAddress | null {
  if (!lease?.startsWith('{')) return null;
  try {
    const { link } = JSON.parse(lease) as { link?: { host?: unknown; port?: unknown } };
    return typeof link?.host === 'string' && Number.isInteger(link.port) ? { host: link.host, port: link.port as number } : null;
  } catch {
    return null;
  }
}

export class RedisMediaBridge implements RemoteRooms, Transport {
  /** Endpoints of this instance relayed to a room elsewhere, by relay id. */
  private readonly relayed = new Map<string, { endpoint: CallEndpoint; instance: string }>();
  /** Endpoints of other instances in rooms here, by relay id, and what their audio is fed into. */
  private readonly hosted = new Map<string, HostedEntry>();
  private readonly channel: string;
  private readonly channelBytes: Buffer;
  /** What is sent within this batch window, by instance: one payload per instance once it is over. */
  private outbox = new Map<string, BridgeMessage[]>();
  private flushing: NodeJS.Timeout | null = null;
  private links: PeerLinks | null = null;
  /** The value of this instance's lease: where its links are accepted. */
  private lease = '1';
  private readonly leaseMs: number;
  private renewal: NodeJS.Timeout | null = null;
  /** When Redis last came back (-Infinity: it has answered since start); others are judged dead only well after. */
  private reachableSince = -Infinity;
  /** Renewing, or sending through Redis, failed while Redis seemed reachable: each said once until it works again. */
  private renewFailing = false;
  private sendFailing = false;
  private closed = false;
  private relaysOpened = 0;
  private relaysHosted = 0;
  private sentOnLinks = 0;
  private sentThroughRedis = 0;

  private constructor(
    private readonly plane: MediaPlane,
    private readonly options: RedisBridgeOptions,
  ) {
    this.channel = this.channelOf(options.instanceId);
    this.channelBytes = Buffer.from(this.channel);
    this.leaseMs = options.renewEveryMs * MISSED_HEARTBEATS;
  }

  static async start(plane: MediaPlane, options: RedisBridgeOptions): Promise<RedisMediaBridge> {
    const bridge = new RedisMediaBridge(plane, options);
    if (options.links) {
      bridge.links = await PeerLinks.start({
        ...options.links,
        instanceId: options.instanceId,
        logger: options.logger,
        receive: (payload) => bridge.receive(payload),
        linked: (instance, link) => bridge.linked(instance, link),
      });
      bridge.lease = JSON.stringify({ link: bridge.links.address });
    }
    options.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      if (channel.equals(bridge.channelBytes)) bridge.receive(message);
    });
    await options.subscriber.subscribe(bridge.channel);
    options.subscriber.on('ready', bridge.subscribeAgain);
    options.commands.on('ready', bridge.reachableAgain);
    await bridge.renew();
    bridge.renewal = setInterval(() => void bridge.renew(), options.renewEveryMs);
    bridge.renewal.unref();
    plane.useRemoteRooms(bridge);
    plane.addTransport(bridge);
    return bridge;
  }

  private channelOf(instance: string): string {
    return `${this.options.prefix}media:${instance}`;
  }

  private roomKey(callId: string): string {
    return `${this.options.prefix}room:${callId}`;
  }

  private instanceKey(instance: string): string {
    return `${this.options.prefix}instance:${instance}`;
  }

  /** Redis is back (perhaps empty): the leases are taken again at once, before another instance could take a room of this one's. */
  /** The media subscriber reconnected: subscribed again here (src/deployment/redis.ts: never by ioredis). */
  private readonly subscribeAgain = (): void => {
    if (this.closed) return;
    // Dropped again before Redis answered: its next 'ready' tries again.
    this.options.subscriber.subscribe(this.channel).catch((err: unknown) => this.options.logger.debug({ err }, 'media bridge: subscribing again failed'));
  };

  private readonly reachableAgain = (): void => {
    this.reachableSince = Date.now();
    void this.renew();
  };

  /** Redis is away (told once, src/deployment/redis.ts): what fails meanwhile is expected. */
  private get unreachable(): boolean {
    return !connected(this.options.commands);
  }

  /**
   * This instance is alive and holds the rooms it has. Another instance that is no longer alive died
   * without a word: endpoints it relayed here leave their rooms, which do not wait for them, and the
   * sockets here relayed to its rooms end as at its shutdown, so their clients reconnect and the next
   * socket of the call takes the room over. Right after Redis came back, an instance's lease may be
   * missing only because it has not reconnected and renewed it yet: none is judged before it had the
   * time to (a reconnection attempt, then a lease).
   */
  private async renew(): Promise<void> {
    const { commands, instanceId } = this.options;
    try {
      await commands.set(this.instanceKey(instanceId), this.lease, 'PX', this.leaseMs);
      await Promise.all(this.plane.roomIds().map((callId) => commands.eval(RENEW_OR_CLAIM, 1, this.roomKey(callId), instanceId, this.leaseMs)));
      this.renewFailing = false;
      if (Date.now() - this.reachableSince < this.leaseMs + RECONNECT_AT_MOST_EVERY_MS) return;
      const senders = [...this.hosted.values()].map((entry) => entry.from);
      const holders = [...this.relayed.values()].map((link) => link.instance);
      const others = new Set([...senders, ...holders]);
      for (const other of others) {
        if ((await commands.exists(this.instanceKey(other))) === 1) continue;
        for (const entry of [...this.hosted.values()]) if (entry.from === other) entry.endpoint.detach();
        for (const [relay, link] of [...this.relayed]) {
          if (link.instance !== other) continue;
          this.relayed.delete(relay);
          link.endpoint.end('shutting_down');
        }
      }
    } catch (err) {
      if (this.unreachable || this.renewFailing) return;
      this.renewFailing = true;
      this.options.logger.warn({ err }, 'media bridge: renewing leases in Redis failed');
    }
  }

  async locate(callId: string): Promise<string | null> {
    if (this.unreachable) throw new RoomsUnreachable();
    try {
      return await this.settleRoom(callId);
    } catch (err) {
      if (this.unreachable) throw new RoomsUnreachable({ cause: err });
      throw err;
    }
  }

  private async settleRoom(callId: string): Promise<string | null> {
    const { commands, instanceId } = this.options;
    const key = this.roomKey(callId);
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await commands.set(key, instanceId, 'PX', this.leaseMs, 'NX')) === 'OK') return null;
      const holder = await commands.get(key);
      if (holder === null) continue; // let go meanwhile: try to take it
      if (holder === instanceId) return null;
      if ((await commands.exists(this.instanceKey(holder))) === 1) return holder;
      // The holder is gone: its lease is taken over (only if it still names that holder).
      await commands.eval(DELETE_IF, 1, key, holder);
    }
    throw new Error(`could not settle where the room of ${callId} lives`);
  }

  release(callId: string): void {
    this.options.commands.eval(DELETE_IF, 1, this.roomKey(callId), this.options.instanceId).catch((err: unknown) => {
      if (!this.unreachable) this.options.logger.warn({ err, call_id: callId }, 'media bridge: letting a room lease go failed (it lapses by itself)');
    });
  }

  async heldElsewhere(callId: string): Promise<boolean> {
    const { commands, instanceId } = this.options;
    if (this.unreachable) throw new RoomsUnreachable();
    try {
      const holder = await commands.get(this.roomKey(callId));
      if (holder === null || holder === instanceId) return false;
      return (await commands.exists(this.instanceKey(holder))) === 1;
    } catch (err) {
      if (this.unreachable) throw new RoomsUnreachable({ cause: err });
      throw err;
    }
  }

  relay(instance: string, call: CallRow, endpoint: CallEndpoint): Inlet {
    const relay = `${this.options.instanceId}.${randomBytes(6).toString('hex')}`;
    this.relayed.set(relay, { endpoint, instance });
    this.relaysOpened++;
    const description: EndpointDescription = {
      side: endpoint.side,
      credential: endpoint.credential,
      kind: endpoint.kind,
      ...(isSource(endpoint) && { sourceKey: endpoint.sourceKey }),
      ...(isSink(endpoint) && { format: endpoint.format }),
      ...(isSignalPeer(endpoint) && { signalling: true as const }),
    };
    this.send(instance, { op: 'open', relay, from: this.options.instanceId, call: call.id, endpoint: description });
    endpoint.whenGone(() => {
      if (this.relayed.delete(relay)) this.send(instance, { op: 'gone', relay });
    });
    return {
      audio: (pcm) => {
        if (this.relayed.has(relay)) this.send(instance, { op: 'in', relay, pcm });
      },
      signal: (text) => {
        if (this.relayed.has(relay)) this.send(instance, { op: 'sigin', relay, text });
      },
    };
  }

  /** Queues the message for `instance`, sent with the others of this batch window once it is over. */
  private send(instance: string, message: BridgeMessage): void {
    this.flushing ??= setTimeout(this.flush, BATCH_WINDOW_MS);
    const waiting = this.outbox.get(instance);
    if (waiting) waiting.push(message);
    else this.outbox.set(instance, [message]);
  }

  /** Each instance's messages of this window as one payload: on the direct link when it is open, else through Redis. */
  private readonly flush = (): void => {
    if (this.flushing) clearTimeout(this.flushing);
    this.flushing = null;
    const outbox = this.outbox;
    this.outbox = new Map();
    for (const [instance, messages] of outbox) {
      const frame = encodeBridgeMessages(messages, LINK_HEADER_BYTES);
      if (this.links?.write(instance, frame)) {
        this.sentOnLinks++;
        continue;
      }
      this.dial(instance);
      this.publish(instance, frame.subarray(LINK_HEADER_BYTES), messages.length);
    }
  };

  private publish(instance: string, payload: Buffer, messages: number, failed?: () => void): void {
    this.sentThroughRedis++;
    this.options.commands.publish(this.channelOf(instance), payload).then(
      () => {
        this.sendFailing = false;
      },
      (err: unknown) => {
        failed?.();
        if (this.unreachable || this.sendFailing) return;
        this.sendFailing = true;
        this.options.logger.warn({ err, messages }, 'media bridge: messages through Redis are being lost');
      },
    );
  }

  /** Dials `instance` at the address its lease gives, unless a link to it is open, being made, or failed just now. */
  private dial(instance: string): void {
    const links = this.links;
    if (!links?.mayDial(instance)) return;
    links.dialing(instance);
    this.options.commands.get(this.instanceKey(instance)).then(
      (lease) => {
        const address = peerAddressOf(lease);
        if (address) links.dial(instance, address);
      },
      () => undefined,
    );
  }

  /**
   * The link to `instance` is proven. What waits for it goes through Redis now, then the fence, so
   * the instance takes the link's frames after them; a fence Redis refuses drops the link.
   */
  private linked(instance: string, link: string): void {
    const waiting = this.outbox.get(instance);
    if (waiting) {
      this.outbox.delete(instance);
      this.publish(instance, encodeBridgeMessages(waiting), waiting.length);
    }
    this.publish(instance, encodeBridgeMessages([{ op: 'linked', from: this.options.instanceId, link }]), 1, () => this.links?.drop(instance, link));
  }

  private receive(raw: Buffer): void {
    for (const message of decodeBridgeMessages(raw)) this.take(message);
  }

  private take(message: BridgeMessage): void {
    switch (message.op) {
      case 'open':
        return void this.host(message).catch((err) => {
          this.options.logger.error({ err, call_id: message.call }, 'media bridge: could not take a relayed endpoint');
          this.send(message.from, { op: 'end', relay: message.relay, reason: 'shutting_down' });
        });
      case 'in':
        return this.hosted.get(message.relay)?.input.audio(message.pcm);
      case 'sigin':
        return this.hosted.get(message.relay)?.input.signal(message.text);
      case 'gone':
        return this.hosted.get(message.relay)?.endpoint.detach();
      case 'linked':
        return this.links?.fenced(message.from, message.link);
      default:
        return this.toSocket(message);
    }
  }

  /** Another instance's endpoint joins the room here (the call's room is this instance's). */
  private async host(message: Extract<ToRoom, { op: 'open' }>): Promise<void> {
    const reply = (answer: ToSocket) => this.send(message.from, answer);
    const endpoint = new RelayedEndpoint(message.endpoint, reply, message.relay, message.call);
    // Registered before the call is read: input and a `gone` that overtake the read find it.
    const entry: HostedEntry = { endpoint, from: message.from, input: new PendingInlet() };
    this.hosted.set(message.relay, entry);
    endpoint.whenGone(() => this.hosted.delete(message.relay));
    const call = await this.plane.deps.calls.findCall(message.call);
    if (endpoint.isGone) return;
    if (!call || call.status !== 'open' || this.plane.closing) {
      endpoint.end(call && call.status === 'open' ? 'shutting_down' : 'call_ended');
      return;
    }
    this.relaysHosted++;
    entry.input.settle(this.plane.enterRelayed(call, endpoint));
  }

  /** What the room elsewhere does to an endpoint of this instance. */
  private toSocket(message: ToSocket): void {
    const link = this.relayed.get(message.relay);
    if (!link) return;
    const { endpoint } = link;
    switch (message.op) {
      case 'out':
        if (isSink(endpoint)) endpoint.audio(message.data);
        return;
      case 'text':
        if (isSink(endpoint)) endpoint.text?.(message.frame);
        return;
      case 'sigout':
        if (isSignalPeer(endpoint)) endpoint.signal(message.text);
        return;
      case 'stale':
        if (isSink(endpoint)) endpoint.otherLanguageChanged?.();
        return;
      case 'turn':
        if (isSink(endpoint)) endpoint.turnStarted?.();
        return;
      case 'end':
        // Ended by the room: no `gone` goes back.
        this.relayed.delete(message.relay);
        endpoint.end(message.reason);
        return;
    }
  }

  readonly name = 'bridge';

  /**
   * Endpoints of this instance relayed to rooms elsewhere, and of others hosted here, since start; and
   * the direct links to other instances open now, and the payloads (one per instance and turn) sent on
   * them and through Redis.
   */
  stats() {
    const { relaysOpened, relaysHosted, sentOnLinks, sentThroughRedis } = this;
    return { relaysOpened, relaysHosted, linksOpen: this.links?.open ?? 0, sentOnLinks, sentThroughRedis };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.renewal) clearInterval(this.renewal);
    this.options.commands.off('ready', this.reachableAgain);
    this.options.subscriber.off('ready', this.subscribeAgain);
    this.flush();
    await this.links?.close();
    // Relayed sockets of this instance are closed by their own transports; rooms here end theirs.
    await this.options.subscriber.unsubscribe(this.channel).catch(() => undefined);
    await this.options.commands.del(this.instanceKey(this.options.instanceId)).catch(() => undefined);
  }
}
