// One open call's media: the endpoints transports bring (sources, sinks), each side's sources mixed
// into one voice, a direction per side carrying that voice to the side that hears it, and the call's
// billing while interpretation runs. Created on the call's first endpoint and dropped when its last
// one leaves (or the call ends).
import type { Logger } from 'pino';
import type { Interpreters } from '../interpreter.js';
import type { EventBus } from '../../../events/bus.js';
import type { CallSignal } from '../../../events/types.js';
import { languageOf, type CallRow } from '../../calls.js';
import type { CallRecords, CallStore, Funding, Utterance } from '../callStore.js';
import { otherSide, SIDES, type Side } from '../../side.js';
import { SideMixer } from '../audio/mixer.js';
import { isSignalPeer, isSink, isSource, type CallEndpoint, type Credential, type EndReason, type MediaSource } from '../endpoints.js';
import type { InterpreterFactory } from '../interpreter.js';
import { NOTICE, UNTRANSLATED_PROVENANCE, notice, type TextFrame } from '../protocol.js';
import { CallBilling, type Admission } from './billing.js';
import { Direction, type DirectionHost } from './direction.js';
import { SideFanOut } from './fanOut.js';
import { RoomStats } from './roomStats.js';
import type { MediaStatsSnapshot } from '../../mediaStats.js';

export interface RoomSettings {
  /** How often accumulated interpretation time is charged (whole seconds; the rest at the end). */
  billingIntervalMs: number;
}

export interface RoomDeps {
  calls: CallStore;
  funding: Funding;
  /** Where the call's utterances go (its transcript). */
  records: CallRecords;
  events: EventBus;
  /** Echo or interpret, and the live interpreter, asked as the call needs them (tests replace engines). */
  engines: Interpreters;
  logger: Logger;
  settings(): RoomSettings;
  /** The media plane's clock. */
  now(): number;
  /** Background work the plane waits for on shutdown (charges, interpreter closes, events). */
  track(work: Promise<unknown>): void;
  /** An interpretation latency (ms) of `speaker`'s direction (the metrics' histogram). */
  onLatency?(speaker: Side, ms: number): void;
  /** The room has no endpoint left, or the call ended: forget it. */
  onEmpty(room: CallRoom): void;
}

/** Feeds a source's audio (24 kHz PCM16) into its side's mix. */
export type AudioFeed = (pcm: Buffer) => void;

type Endpoint = CallEndpoint;

export class CallRoom implements DirectionHost {
  private readonly endpoints = new Set<Endpoint>();
  private readonly sources = new Set<MediaSource>();
  /** What each side hears. */
  private readonly hearing: Record<Side, SideFanOut> = { agent: new SideFanOut(), customer: new SideFanOut() };
  private readonly mixers: Record<Side, SideMixer>;
  private readonly directions: Record<Side, Direction>;
  private readonly billing: CallBilling | null;
  private mixKeys = 0;
  /** The prepaid balance ran out: interpretation is stopped for both sides until a top-up. */
  private runOut = false;
  private runOutAnnounced = false;
  private disposed = false;
  /** The call ended (not only this room emptied): its transcript is ready once the room has handed everything over. */
  private callEnded = false;
  private lastRecorded: Promise<void> = Promise.resolve();
  private readonly counted = new RoomStats();
  readonly log: Logger;
  /** Test calls echo each side's voice back to it; live calls interpret it for the other side. */
  readonly echoes: boolean;

  constructor(
    public call: CallRow,
    private readonly deps: RoomDeps,
  ) {
    this.log = deps.logger.child({ call_id: call.id });
    this.echoes = deps.engines.interpretation(call.mode).kind === 'echo';
    this.mixers = {
      agent: new SideMixer((pcm, now) => this.directions.agent.push(pcm, now)),
      customer: new SideMixer((pcm, now) => this.directions.customer.push(pcm, now)),
    };
    this.billing = this.isLive
      ? new CallBilling({
          funding: deps.funding,
          payer: { orgId: call.org_id, mode: call.mode },
          callId: call.id,
          intervalMs: () => deps.settings().billingIntervalMs,
          now: deps.now,
          track: deps.track,
          log: this.log,
          onRunOut: () => this.exhaust(),
        })
      : null;
    this.directions = { agent: this.direction('agent'), customer: this.direction('customer') };
  }

  private direction(speaker: Side): Direction {
    const hearer = otherSide(speaker);
    return new Direction(speaker, this, {
      echo: this.hearing[speaker].stream(),
      interpreted: this.hearing[hearer].stream(),
      untranslated: this.hearing[hearer].stream(),
    });
  }

  // ---- DirectionHost -----------------------------------------------------------------------------

  announce(speaker: Side, frame: TextFrame): void {
    this.hearing[otherSide(speaker)].text(frame);
    // Captions both ways: the speaker's call page shows how its words were rendered. The server tells it;
    // a page never passes on what it heard, so no page can put words in the other's mouth.
    if (frame.type !== 'caption') return;
    const text = JSON.stringify(frame);
    for (const endpoint of this.endpoints) if (endpoint.side === speaker && isSignalPeer(endpoint)) endpoint.signal(text);
  }

  languageOf(side: Side): string {
    return languageOf(this.call, side)!;
  }

  interpreterFactory(): InterpreterFactory {
    return this.deps.engines.interpretation('live').factory;
  }

  admitInterpretation(): Promise<Admission> {
    return this.billing!.admit();
  }

  interpretationFunded(): void {
    this.runOut = false;
  }

  interpretationRunOut(): void {
    this.exhaust();
  }

  interpretingChanged(): void {
    this.billing?.interpreting(this.directions.agent.interpreting || this.directions.customer.interpreting);
    for (const side of SIDES) this.counted.timed('interpreted_ms', side, this.directions[side].interpreting, this.deps.now());
  }

  track(work: Promise<unknown>): void {
    this.deps.track(work);
  }

  record(utterance: Utterance): void {
    this.keep(this.deps.records.utterance(this.call, utterance));
  }

  /** Hands work to the call's record, which keeps a call's in order: the newest settles after the others. */
  private keep(work: Promise<void>): void {
    this.lastRecorded = work;
    this.deps.track(work);
  }

  /** Settles once everything the room handed to the call's record so far is kept. */
  get recorded(): Promise<void> {
    return this.lastRecorded;
  }

  latency(speaker: Side, ms: number): void {
    this.counted.latency(speaker, ms);
    this.deps.onLatency?.(speaker, ms);
  }

  now(): number {
    return this.deps.now();
  }

  get id(): string {
    return this.call.id;
  }

  get isLive(): boolean {
    return this.call.mode === 'live';
  }


  get isDisposed(): boolean {
    return this.disposed;
  }

  // ---- endpoints -------------------------------------------------------------------------------

  /**
   * Adds what a transport brings. A source with the key of one already there replaces it; a sink is
   * greeted with what it hears (provenance, a standing problem). Returns the feed of a source's audio.
   */
  add(endpoint: Endpoint): AudioFeed | null {
    const { side } = endpoint;
    this.endpoints.add(endpoint);
    const source = isSource(endpoint) ? endpoint : null;
    const mixKey = source ? `${source.sourceKey}#${++this.mixKeys}` : '';
    if (source) {
      this.sources.add(source);
      this.mixers[side].add(mixKey, this.deps.now());
    }
    if (isSink(endpoint)) {
      this.hearing[side].add(endpoint);
      for (const frame of this.greeting(side)) endpoint.text?.(frame);
    }
    endpoint.whenGone(() => this.removed(endpoint, mixKey));
    if (!source) return null;
    for (const other of [...this.sources]) {
      if (other !== source && other.side === side && other.sourceKey === source.sourceKey) other.end('source_replaced');
    }
    this.sourcesChanged(side);
    const mixer = this.mixers[side];
    return (pcm) => {
      if (!this.disposed && !source.isGone) mixer.push(mixKey, pcm, this.deps.now());
    };
  }

  private removed(endpoint: Endpoint, mixKey: string): void {
    this.endpoints.delete(endpoint);
    if (isSink(endpoint)) {
      this.hearing[endpoint.side].remove(endpoint);
      if (!this.disposed) this.counted.dropped(endpoint.side, endpoint.chunksDropped ?? 0);
    }
    if (isSource(endpoint)) {
      this.sources.delete(endpoint);
      // What the source said and the mixer still held goes out before it is forgotten.
      if (!this.disposed) this.mixers[endpoint.side].remove(mixKey, this.deps.now());
      this.sourcesChanged(endpoint.side);
    }
    if (!this.endpoints.size) this.dispose();
  }

  private speakers(side: Side): number {
    let count = 0;
    for (const source of this.sources) if (source.side === side) count++;
    return count;
  }

  private sourcesChanged(side: Side): void {
    if (this.disposed) return;
    const speakers = this.speakers(side);
    this.counted.timed('present_ms', side, speakers > 0, this.deps.now());
    this.directions[side].speakers(speakers);
  }

  /** Ends the endpoints of `side` that `credential` admitted. */
  private endSide(side: Side, credential: Credential, reason: EndReason): void {
    for (const endpoint of [...this.endpoints]) {
      if (endpoint.side === side && endpoint.credential === credential) endpoint.end(reason);
    }
  }

  // ---- what the call does ----------------------------------------------------------------------

  /** A change of the call (from the calls module, after its transaction committed). */
  signal(signal: CallSignal): void {
    if (this.disposed) return;
    switch (signal.type) {
      case 'ended':
        return this.endCall();
      case 'link_replaced':
        return this.endSide(signal.side, 'link', 'link_replaced');
      case 'left':
        return this.endSide(signal.side, 'link', 'left');
      case 'line_replaced':
        return this.endSide(signal.side, 'line', 'line_replaced');
      case 'settings_changed':
        this.call = {
          ...this.call,
          agent_language: signal.languages.agent ?? this.call.agent_language,
          customer_language: signal.languages.customer ?? this.call.customer_language,
        };
        if (signal.languageChanged) this.languageChanged(signal.side);
    }
  }

  /** A fresher row read from the database (after an endpoint was admitted): adopt its languages. */
  refreshCall(row: CallRow): void {
    if (this.disposed) return;
    if (row.status !== 'open') return this.endCall();
    const changed = row.agent_language !== this.call.agent_language || row.customer_language !== this.call.customer_language;
    this.call = row;
    if (changed) this.restartDirections();
  }

  /** Side X speaks another language: what the other side queued is stale, and both directions restart. */
  private languageChanged(side: Side): void {
    for (const sink of [...this.hearing[otherSide(side)].sinks]) sink.otherLanguageChanged?.();
    this.restartDirections();
  }

  private restartDirections(): void {
    for (const side of SIDES) this.directions[side].restart(this.speakers(side));
  }

  /** Periodic work: release what the mixers hold for sources that went quiet; charge interpretation. */
  tick(now: number): void {
    if (this.disposed) return;
    this.mixers.agent.tick(now);
    this.mixers.customer.tick(now);
    this.directions.agent.tick(now);
    this.directions.customer.tick(now);
    if (!this.billing) return;
    this.billing.tick();
    if (this.runOut) this.billing.checkFunding(() => this.toppedUp());
  }

  /** What a sink of `side` learns on connecting: where its audio comes from, and any standing problem. */
  private greeting(side: Side): TextFrame[] {
    return this.directions[otherSide(side)].greeting(this.runOut);
  }

  /**
   * The prepaid balance ran out: both directions stop interpreting (the call stays open and each side
   * hears the other untranslated), listeners are told, and `call.balance_exhausted` is recorded once.
   */
  private exhaust(): void {
    if (this.disposed) return;
    const already = this.runOut;
    this.runOut = true;
    for (const side of SIDES) this.directions[side].exhaust(this.speakers(side));
    this.billing?.settle();
    if (already) return;
    this.log.info('media: prepaid balance exhausted; interpretation stopped');
    for (const side of SIDES) {
      this.hearing[side].text(notice(NOTICE.balanceExhausted));
      this.hearing[side].text(UNTRANSLATED_PROVENANCE);
    }
    if (this.runOutAnnounced) return;
    this.runOutAnnounced = true;
    this.deps.track(
      this.deps.calls.announceBalanceExhausted(this.call).catch((err) =>
        this.log.error({ err }, 'media: could not record call.balance_exhausted'),
      ),
    );
  }

  private toppedUp(): void {
    if (this.disposed || !this.runOut) return;
    this.log.info('media: prepaid balance topped up; interpretation resumes');
    this.runOut = false;
    for (const side of SIDES) this.directions[side].refunded(this.speakers(side));
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  endCall(): void {
    if (this.disposed) return;
    this.callEnded = true;
    this.closeEverything('call_ended');
  }

  /** Ends every endpoint (shutdown, call ended) and disposes the room. */
  closeEverything(reason: EndReason): void {
    if (this.disposed) return;
    for (const endpoint of [...this.endpoints]) endpoint.end(reason);
    this.dispose();
  }

  private dispose(): void {
    if (this.disposed) return;
    for (const side of SIDES) this.directions[side].flushTurn();
    for (const side of SIDES) if (this.directions[side].state !== 'idle') this.directions[side].stop('idle');
    this.billing?.close();
    this.keep(this.deps.records.stats(this.call, this.statsSnapshot()));
    if (this.callEnded) this.keep(this.deps.records.ended(this.call.id));
    this.disposed = true;
    this.deps.onEmpty(this);
  }

  /** How the call went in this room so far (listeners still here included). */
  statsSnapshot(): MediaStatsSnapshot {
    const dropping = { agent: 0, customer: 0 };
    for (const side of SIDES) for (const sink of this.hearing[side].sinks) dropping[side] += sink.chunksDropped ?? 0;
    return this.counted.snapshot(this.deps.now(), dropping);
  }

  stats() {
    /** By kind (each transport names its own: `stream`, `listen`, `line`, ...). */
    const endpoints: Record<string, number> = {};
    for (const { kind } of this.endpoints) endpoints[kind] = (endpoints[kind] ?? 0) + 1;
    let chunksSent = 0;
    let chunksDropped = 0;
    let maxBufferedBytes = 0;
    for (const side of SIDES) {
      for (const sink of this.hearing[side].sinks) {
        chunksSent += sink.chunksSent ?? 0;
        chunksDropped += sink.chunksDropped ?? 0;
        maxBufferedBytes = Math.max(maxBufferedBytes, sink.bufferedBytes ?? 0);
      }
    }
    return {
      endpoints,
      chunksSent,
      chunksDropped,
      maxBufferedBytes,
      directions: {
        agent: { state: this.directions.agent.state, interpreting: this.directions.agent.interpreting, reconnects: this.directions.agent.reconnects },
        customer: {
          state: this.directions.customer.state,
          interpreting: this.directions.customer.interpreting,
          reconnects: this.directions.customer.reconnects,
        },
      },
    };
  }
}
