// The media plane: one room per open call, the transports that bring endpoints into rooms, call
// signals from the bus routed to the rooms, the clock that drives mixing and billing, and shutdown.
// Transports plug in (./transport.ts; they are listed in ./transports/index.ts) and the plane counts
// and closes them by name, whatever they are. Wire contract of the WebSockets: ./protocol.ts.
import type { Logger } from 'pino';
import type { Interpreters } from './interpreter.js';
import type { EventBus } from '../../events/bus.js';
import type { BusEvent } from '../../events/types.js';
import type { CallRow } from '../calls.js';
import type { CallRecords, CallStore, Funding } from './callStore.js';
import { isSignalPeer, type CallEndpoint, type EndReason } from './endpoints.js';
import { NO_INLET, PendingInlet, type Inlet } from './inlet.js';
import { CallRoom, type RoomSettings } from './room/room.js';
import { SignalRelay } from './signalling.js';
import type { Side } from '../side.js';
import type { MediaStatsSnapshot } from '../mediaStats.js';

export interface MediaPlaneOptions {
  /** How often accumulated interpretation time is charged; default 5000 ms. */
  billingIntervalMs?: number;
  /** The clock of mixing and billing; default Date.now. */
  now?: () => number;
}

export interface MediaDeps {
  /** Calls' rows and what rooms announce (call.balance_exhausted). */
  calls: CallStore;
  /** The prepaid balance live calls spend. */
  funding: Funding;
  /** Where calls' utterances go (their transcripts). */
  records: CallRecords;
  events: EventBus;
  logger: Logger;
  /** Decides per call mode: echo (test) or interpret, and with which engine (live). */
  engines: Interpreters;
  /** An interpretation latency (ms) of a speaker's direction, for the metrics' histogram. */
  onLatency?(speaker: Side, ms: number): void;
}

/** Counters of the plane: its rooms and their endpoints, interpreters, and each transport's own. */
export interface MediaStats {
  rooms: number;
  /** Endpoints in the rooms here, by kind (each transport names its own: `stream`, `line`, ...). */
  endpoints: Record<string, number>;
  /** Interpreters connected upstream now, and their reconnects since start (rooms closed since included). */
  interpreters: number;
  interpreterReconnects: number;
  /** What each transport counts of its connections (closed ones included), by the transport's name. */
  transports: Record<string, TransportCounters>;
}

export type TransportCounters = Readonly<Record<string, number>>;

/**
 * What the plane knows of a transport: its name and counters, and that it closes at shutdown. The
 * plug-in contract (upgrade routes, listeners, metrics) is ./transport.ts.
 */
export interface Transport {
  readonly name: string;
  /** The transport's own counters (closed connections included). */
  stats(): TransportCounters;
  /** Stop taking connections and close the ones still open. */
  close(): Promise<void>;
}

/** Re-reads the call once an endpoint is in its room: why the endpoint must go after all, if it must. */
export type Recheck = (call: CallRow) => EndReason | null;

/**
 * Where the rooms of a deployment of several instances live (docs/several-instances.md): a call's room is on one
 * instance, and an endpoint that reached another is relayed to it. Implemented by the bridge transport
 * (./transports/bridge/); without one, every room is here.
 */
export interface RemoteRooms {
  /** The instance whose room the call has (null: this one, which now holds it); RoomsUnreachable while that cannot be known. */
  locate(callId: string): Promise<string | null>;
  /** Relays an endpoint of this instance to the call's room on `instance`: what its input is passed to. */
  relay(instance: string, call: CallRow, endpoint: CallEndpoint): Inlet;
  /** A room here has emptied: another instance may hold the call's next room. */
  release(callId: string): void;
  /**
   * Whether another instance, alive, holds the call's room (this one holding it without a room here
   * counts as no); RoomsUnreachable while that cannot be known.
   */
  heldElsewhere(callId: string): Promise<boolean>;
}

/**
 * Where rooms live cannot be known now (Redis is away, which was told once): an endpoint whose call has
 * no room here is refused as at shutdown, and its client reconnects.
 */
export class RoomsUnreachable extends Error {
  constructor(options?: ErrorOptions) {
    super('where rooms live cannot be known now', options);
    this.name = 'RoomsUnreachable';
  }
}

const TICK_MS = 20;
/** Shutdown waits this long at most for charges and interpreter closes still running. */
const DRAIN_MS = 10_000;

export class MediaPlane {
  private readonly rooms = new Map<string, CallRoom>();
  private readonly transports: Transport[] = [];
  /** The signalling of the calls whose rooms are here. */
  private readonly signalling = new SignalRelay();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly log: Logger;
  private readonly settings: RoomSettings;
  private readonly unsubscribe: () => void;
  readonly now: () => number;
  private ticker: NodeJS.Timeout | null = null;
  private closingDown = false;
  /** Interpreter reconnects of rooms that have closed (the open rooms report their own). */
  private reconnectsOfClosedRooms = 0;
  private draining = false;
  private remote: RemoteRooms | null = null;

  constructor(
    readonly deps: MediaDeps,
    options: MediaPlaneOptions = {},
  ) {
    this.log = deps.logger.child({ component: 'media' });
    // Date.now looked up at each call, not kept: a test that stops the clock (fake Date) stops mixing's too.
    this.now = options.now ?? (() => Date.now());
    this.settings = { billingIntervalMs: options.billingIntervalMs ?? 5_000 };
    this.unsubscribe = deps.events.subscribe((event) => this.onEvent(event));
  }

  get logger(): Logger {
    return this.log;
  }

  /** Taking no new endpoints: shutting down, or draining (open rooms go on, new sockets go elsewhere). */
  get closing(): boolean {
    return this.closingDown || this.draining;
  }

  /**
   * Drains: no new endpoints from now on; resolves when the last room has emptied or after `graceMs`,
   * whichever comes first (then close() ends what is left).
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const deadline = Date.now() + graceMs;
    while (this.rooms.size && Date.now() < deadline) await sleep(Math.min(100, deadline - Date.now()));
  }

  /** Changes settings for rooms from now on (tests make the billing clock fast). */
  configure(options: Pick<MediaPlaneOptions, 'billingIntervalMs'>): void {
    if (options.billingIntervalMs !== undefined) this.settings.billingIntervalMs = options.billingIntervalMs;
  }

  /** A transport the plane counts by its name and closes at shutdown; a name taken already throws. */
  addTransport(transport: Transport): void {
    if (this.transports.some((other) => other.name === transport.name)) throw new Error(`a media transport named ${transport.name} is there already`);
    this.transports.push(transport);
  }

  /** With several instances: where rooms live, and the relay to the others. */
  useRemoteRooms(remote: RemoteRooms): void {
    this.remote = remote;
  }

  /** The calls whose rooms are here. */
  roomIds(): string[] {
    return [...this.rooms.keys()];
  }

  /**
   * Puts an admitted endpoint into its call's room: here, or (several instances) relayed to the
   * instance that has the room. Returns what the endpoint's input (a source's audio, a signalling
   * peer's frames) is passed to; what it sends while the room is being located waits.
   */
  enter(call: CallRow, endpoint: CallEndpoint, recheck: Recheck): Inlet {
    const remote = this.remote;
    // A room here is this instance's to hold: its endpoints join it without asking (even while Redis is away).
    if (!remote || this.rooms.has(call.id)) return this.enterHere(call, endpoint, recheck);
    const inlet = new PendingInlet();
    this.track(
      (async () => {
        const instance = await remote.locate(call.id);
        if (endpoint.isGone || this.closingDown) return inlet.settle(null);
        inlet.settle(instance === null ? this.enterHere(call, endpoint, recheck) : remote.relay(instance, call, endpoint));
      })().catch((err) => {
        if (err instanceof RoomsUnreachable) this.log.debug({ call_id: call.id }, 'media: where the room of the call is cannot be known now');
        else this.log.error({ err, call_id: call.id }, 'media: could not find where the room of the call is');
        inlet.settle(null);
        endpoint.end('shutting_down');
      }),
    );
    return inlet;
  }

  /** An endpoint another instance relays here (it reached that instance; the room is here). */
  enterRelayed(call: CallRow, endpoint: CallEndpoint): Inlet {
    return this.enterHere(call, endpoint, () => null);
  }

  /**
   * Puts an endpoint into its call's room here. The call may have changed between admission and now (a
   * new link, the end): signals from now on reach the room, and a second read catches what happened
   * before. A signalling peer also joins the call's signalling here, where all of its peers meet.
   */
  private enterHere(call: CallRow, endpoint: CallEndpoint, recheck: Recheck): Inlet {
    const room = this.roomFor(call);
    const feed = room.add(endpoint);
    const signal = isSignalPeer(endpoint) ? this.signalling.join(endpoint) : null;
    this.track(
      (async () => {
        const row = await this.deps.calls.findCall(call.id);
        if (room.isDisposed || endpoint.isGone) return;
        if (!row || row.status !== 'open') return room.endCall();
        const reason = recheck(row);
        if (reason) return endpoint.end(reason);
        room.refreshCall(row);
      })(),
    );
    return { audio: feed ?? NO_INLET.audio, signal: signal ?? NO_INLET.signal };
  }

  private roomFor(call: CallRow): CallRoom {
    let room = this.rooms.get(call.id);
    if (!room) {
      room = new CallRoom(call, {
        calls: this.deps.calls,
        funding: this.deps.funding,
        records: this.deps.records,
        events: this.deps.events,
        engines: this.deps.engines,
        logger: this.log,
        settings: () => this.settings,
        now: this.now,
        track: (work) => this.track(work),
        onLatency: this.deps.onLatency,
        onEmpty: (empty) => {
          if (this.rooms.get(empty.id) === empty) {
            const { directions } = empty.stats();
            this.reconnectsOfClosedRooms += directions.agent.reconnects + directions.customer.reconnects;
            this.rooms.delete(empty.id);
            // Held until what the room handed to the call's record is kept: an instance that finds the
            // ended call's room held by no one says its transcript is ready, which must follow the last utterance.
            const remote = this.remote;
            if (remote) void empty.recorded.then(() => !this.rooms.has(empty.id) && remote.release(empty.id));
          }
          this.updateTicker();
        },
      });
      this.rooms.set(call.id, room);
      this.updateTicker();
    }
    return room;
  }

  private onEvent(event: BusEvent): void {
    if (!event.signal || !event.callId) return;
    const room = this.rooms.get(event.callId);
    if (!room && event.signal.type === 'ended') return this.track(this.endedWithoutRoom(event.callId));
    if (!room) return;
    try {
      room.signal(event.signal);
    } catch (err) {
      this.log.error({ err, signal: event.signal.type }, 'media: handling a call signal failed');
    }
  }

  /**
   * A call ended with no room of it here. With no room anywhere its utterances are stored already and
   * this instance says the transcript is ready (every instance hears the end; the first to mark it
   * says it, src/calls/transcripts.ts). A room open on another instance says so as it closes; when
   * that cannot be known (Redis away), housekeeping says it later (src/deployment/housekeeping.ts).
   */
  private async endedWithoutRoom(callId: string): Promise<void> {
    try {
      if (this.remote && (await this.remote.heldElsewhere(callId))) return;
    } catch (err) {
      if (err instanceof RoomsUnreachable) return this.log.debug({ call_id: callId }, 'media: whether another instance holds the room of the ended call cannot be known now');
      throw err;
    }
    await this.deps.records.ended(callId);
  }

  private updateTicker(): void {
    if (this.rooms.size && !this.ticker && !this.closingDown) {
      this.ticker = setInterval(() => {
        const now = this.now();
        for (const room of this.rooms.values()) room.tick(now);
      }, TICK_MS);
      this.ticker.unref();
    } else if (!this.rooms.size && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  /** Background work the plane waits for on shutdown (charges, interpreter closes, re-reads). */
  track(work: Promise<unknown>): void {
    const tracked = work.catch((err) => this.log.error({ err }, 'media: background work failed'));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  stats(): MediaStats {
    const stats: MediaStats = { rooms: this.rooms.size, endpoints: {}, interpreters: 0, interpreterReconnects: this.reconnectsOfClosedRooms, transports: {} };
    for (const transport of this.transports) stats.transports[transport.name] = transport.stats();
    for (const room of this.rooms.values()) {
      const roomStats = room.stats();
      for (const [kind, count] of Object.entries(roomStats.endpoints)) stats.endpoints[kind] = (stats.endpoints[kind] ?? 0) + count;
      for (const direction of [roomStats.directions.agent, roomStats.directions.customer]) {
        if (direction.interpreting) stats.interpreters++;
        stats.interpreterReconnects += direction.reconnects;
      }
    }
    return stats;
  }

  /** How the call went in its room here so far; undefined when its room is not here. */
  liveStats(callId: string): MediaStatsSnapshot | undefined {
    return this.rooms.get(callId)?.statsSnapshot();
  }

  /** The room of a call, for tests and diagnostics. */
  room(callId: string): CallRoom | undefined {
    return this.rooms.get(callId);
  }

  /**
   * Shutdown: every room ends its endpoints (sockets close with 1001, lines hang up), transports close
   * what is left, interpreters stop and what they used is charged; bounded waiting for all of it.
   */
  async close(): Promise<void> {
    if (this.closingDown) return;
    this.closingDown = true;
    this.unsubscribe();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    for (const room of [...this.rooms.values()]) room.closeEverything('shutting_down');
    this.rooms.clear();
    await Promise.all(this.transports.map((transport) => transport.close()));
    // Pending work may add more (a charge after an interpreter closed): drain until quiet.
    const deadline = Date.now() + DRAIN_MS;
    while (this.pending.size && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.pending]), sleep(Math.max(0, deadline - Date.now()))]);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function createMediaPlane(deps: MediaDeps, options?: MediaPlaneOptions): MediaPlane {
  return new MediaPlane(deps, options);
}
