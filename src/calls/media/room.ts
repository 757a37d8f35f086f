// One open call's media: who streams, who listens, how audio is routed between them, the live
// interpreters of its two directions, and billing while they run. Created on the call's first socket
// and dropped when its last one leaves (or the call ends).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Payer } from '../../auth/principal.js';
import { ApiError } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import { recordEvent } from '../../events/log.js';
import { balanceRunOut, chargeCallSeconds, fundedCallMs, fundedPayer } from '../../money/index.js';
import type { OrganizationRow } from '../../services/organizations.js';
import { callEvent, languageOf, otherSide, presentCall, type CallRow, type Side } from '../calls.js';
import type { LineConn, ListenConn, StreamConn } from './connections.js';
import type { Interpreter, InterpreterCaption, InterpreterFactory, InterpreterStatus } from './interpreter.js';
import { SideMixer } from './mixer.js';
import { WavChunker } from './pcm.js';
import {
  BYTES_PER_SECOND,
  CHUNK_BYTES,
  CLOSE,
  NOTICE,
  NOTICE_MESSAGES,
  TEST_PROVENANCE,
  UNTRANSLATED_PROVENANCE,
  notice,
  type CloseCode,
  type NoticeCode,
  type ProvenanceFrame,
  type TextFrame,
} from './protocol.js';

export interface RoomSettings {
  interpreterFactory: InterpreterFactory;
  /** How often accumulated interpretation time is charged (whole seconds; the rest at the end). */
  billingIntervalMs: number;
  listenerBufferCapBytes: number;
}

export interface RoomDeps {
  db: Knex;
  events: EventBus;
  logger: Logger;
  settings(): RoomSettings;
  /** Background work the plane waits for on shutdown (charges, interpreter closes, events). */
  track(work: Promise<unknown>): void;
  /** The room has no endpoint left, or the call ended: forget it. */
  onEmpty(room: CallRoom): void;
}

type DirectionState = 'idle' | 'starting' | 'running' | 'failed' | 'exhausted';

/** One direction of a live call: the speaker's voice interpreted for the other side. */
interface Direction {
  speaker: Side;
  state: DirectionState;
  interpreter: Interpreter | null;
  connected: boolean;
  reconnecting: boolean;
  /** Bumped whenever the direction stops or restarts: callbacks of an older interpreter are ignored. */
  generation: number;
  /** Speech that arrived while the interpreter was being started (bounded). */
  pending: Buffer[];
  pendingBytes: number;
  failMessage: string | null;
  captionId: string | null;
  captionSeq: number;
}

const MAX_PENDING_BYTES = BYTES_PER_SECOND;

export class CallRoom {
  readonly streams = new Set<StreamConn>();
  readonly listeners = new Set<ListenConn>();
  readonly lines = new Set<LineConn>();
  /** The listeners by the side they hear: audio goes to one side's set without filtering. */
  private readonly listenersOf: Record<Side, Set<ListenConn>> = { agent: new Set(), customer: new Set() };
  private readonly mixers: Record<Side, SideMixer>;
  /** One per stream of audio a side hears: `echo:X` (test mode), `out:X` (interpreted), `pass:X`. */
  private readonly chunkers = new Map<string, WavChunker>();
  private readonly directions: Record<Side, Direction>;
  private exhausted = false;
  private exhaustionRecorded = false;
  private disposed = false;
  // Billing (live mode): wall time during which at least one direction is interpreting.
  private translatingSince: number | null = null;
  private unbilledMs = 0;
  private lastBillAt = Date.now();
  /**
   * Interpretation time the last known prepaid balance pays for (null: invoiced, or free). Reaching it
   * charges at once rather than at the next interval, so a call overdraws by one started second at most.
   */
  private fundedMs: number | null = null;
  /** When an exhausted room last asked whether the balance was topped up. */
  private lastFundingCheckAt = 0;
  private checkingFunding = false;
  private billing: Promise<void> = Promise.resolve();
  private readonly log: Logger;

  constructor(
    public call: CallRow,
    private readonly deps: RoomDeps,
  ) {
    const direction = (speaker: Side): Direction => ({
      speaker,
      state: 'idle',
      interpreter: null,
      connected: false,
      reconnecting: false,
      generation: 0,
      pending: [],
      pendingBytes: 0,
      failMessage: null,
      captionId: null,
      captionSeq: 0,
    });
    this.directions = { agent: direction('agent'), customer: direction('customer') };
    this.mixers = {
      agent: new SideMixer((pcm) => this.sideAudio('agent', pcm)),
      customer: new SideMixer((pcm) => this.sideAudio('customer', pcm)),
    };
    this.log = deps.logger.child({ call_id: call.id });
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

  private get payer(): Payer {
    return { orgId: this.call.org_id, mode: this.call.mode };
  }

  // ---- endpoints -------------------------------------------------------------------------------

  addStream(conn: StreamConn): void {
    for (const existing of this.streams) {
      if (existing.side === conn.side && existing.sourceId === conn.sourceId) existing.close(CLOSE.sourceReplaced);
    }
    this.streams.add(conn);
    this.mixers[conn.side].add(conn.sourceKey, Date.now());
    conn.whenGone(() => {
      this.streams.delete(conn);
      this.sourceLeft(conn.side, conn.sourceKey);
    });
    this.sourcesChanged(conn.side);
  }

  addListener(conn: ListenConn): void {
    this.listeners.add(conn);
    this.listenersOf[conn.side].add(conn);
    conn.whenGone(() => {
      this.listeners.delete(conn);
      this.listenersOf[conn.side].delete(conn);
      this.disposeIfEmpty();
    });
    for (const frame of this.greeting(conn.side)) conn.sendJson(frame);
  }

  addLine(conn: LineConn): void {
    this.lines.add(conn);
    this.mixers[conn.side].add(conn.sourceKey, Date.now());
    conn.whenGone(() => {
      this.lines.delete(conn);
      this.sourceLeft(conn.side, conn.sourceKey);
    });
    this.sourcesChanged(conn.side);
  }

  private sourceCount(side: Side): number {
    let count = 0;
    for (const stream of this.streams) if (stream.side === side) count++;
    for (const line of this.lines) if (line.side === side) count++;
    return count;
  }

  private sourceLeft(side: Side, sourceKey: string): void {
    // What the source said and the mixer still held goes out before it is forgotten.
    if (!this.disposed) this.mixers[side].remove(sourceKey, Date.now());
    this.sourcesChanged(side);
    this.disposeIfEmpty();
  }

  private disposeIfEmpty(): void {
    if (!this.streams.size && !this.listeners.size && !this.lines.size) this.dispose();
  }

  // ---- audio routing ---------------------------------------------------------------------------

  /** A side's voice (24 kHz PCM16) from one of its sources: mixed with its other sources first. */
  sourceAudio(side: Side, sourceKey: string, pcm: Buffer): void {
    if (this.disposed) return;
    this.mixers[side].push(sourceKey, pcm, Date.now());
  }

  /** A side's voice, all its sources mixed. */
  private sideAudio(side: Side, pcm: Buffer): void {
    if (this.disposed) return;
    if (!this.isLive) {
      // Test mode: each side hears its own voice, untranslated.
      this.deliver(side, pcm, `echo:${side}`);
      return;
    }
    const direction = this.directions[side];
    if (direction.state === 'running' && direction.interpreter) {
      direction.interpreter.push(pcm);
    } else if (direction.state === 'starting' || (direction.state === 'running' && !direction.interpreter)) {
      if (direction.pendingBytes + pcm.length <= MAX_PENDING_BYTES) {
        direction.pending.push(Buffer.from(pcm));
        direction.pendingBytes += pcm.length;
      }
    } else {
      // No interpretation (failed, unfunded): the other side hears the original voice.
      this.deliver(otherSide(side), pcm, `pass:${side}`);
    }
  }

  /** Audio for the side `hearing`: raw to its phone lines, as WAV chunks to its listeners, at once. */
  private deliver(hearing: Side, pcm: Buffer, chunkKey: string): void {
    if (this.lines.size) {
      for (const line of this.lines) if (line.side === hearing) line.endpoint.play(pcm);
    }
    if (!this.listenersOf[hearing].size) return;
    let chunker = this.chunkers.get(chunkKey);
    if (!chunker) {
      chunker = new WavChunker((chunk) => this.broadcastAudio(hearing, chunk), CHUNK_BYTES);
      this.chunkers.set(chunkKey, chunker);
    }
    chunker.push(pcm);
  }

  private broadcastAudio(hearing: Side, chunk: Buffer): void {
    for (const listener of this.listenersOf[hearing]) listener.sendAudio(chunk);
  }

  private broadcastJson(hearing: Side | 'both', frame: TextFrame): void {
    for (const listener of this.listeners) if (hearing === 'both' || listener.side === hearing) listener.sendJson(frame);
  }

  /** Periodic work: release what the mixers hold for sources that went quiet; charge interpretation time. */
  tick(now: number): void {
    if (this.disposed) return;
    this.mixers.agent.tick(now);
    this.mixers.customer.tick(now);
    if (!this.isLive) return;
    const interval = this.deps.settings().billingIntervalMs;
    if (this.fundedMs !== null && this.interpretedMs(now) >= this.fundedMs) {
      // The balance is spent: charge the started second now; the charge finds the balance empty.
      this.fundedMs = null;
      this.lastBillAt = now;
      this.bill(now, true);
    } else if (now - this.lastBillAt >= interval) {
      this.lastBillAt = now;
      this.bill(now, false);
    }
    if (this.exhausted && now - this.lastFundingCheckAt >= interval) {
      this.lastFundingCheckAt = now;
      this.resumeIfFunded();
    }
  }

  /** What a listener learns on connecting: where its audio comes from, and any standing problem. */
  private greeting(hearing: Side): TextFrame[] {
    if (!this.isLive) return [TEST_PROVENANCE];
    const direction = this.directions[otherSide(hearing)];
    switch (direction.state) {
      case 'running':
        if (direction.connected) return [this.provenanceOf(direction)];
        if (direction.reconnecting) return [notice(NOTICE.translationReconnecting)];
        return [];
      case 'failed':
        return [notice(NOTICE.translationUnavailable, this.unavailableMessage(direction)), UNTRANSLATED_PROVENANCE];
      case 'exhausted':
        return [notice(NOTICE.balanceExhausted), UNTRANSLATED_PROVENANCE];
      default:
        return this.exhausted ? [notice(NOTICE.balanceExhausted)] : [];
    }
  }

  private provenanceOf(direction: Direction): ProvenanceFrame {
    const names = direction.interpreter?.provenance ?? { engine: 'interpreter', model: 'unknown' };
    return { type: 'provenance', engine: names.engine, model: names.model };
  }

  private unavailableMessage(direction: Direction): string {
    return direction.failMessage ? `${NOTICE_MESSAGES.translation_unavailable} (${direction.failMessage})` : NOTICE_MESSAGES.translation_unavailable;
  }

  // ---- live interpretation ---------------------------------------------------------------------

  /** Starts a direction when its speaker has a source, stops it when the last source left. */
  private sourcesChanged(side: Side): void {
    if (!this.isLive || this.disposed) return;
    const direction = this.directions[side];
    const sources = this.sourceCount(side);
    if (sources > 0 && direction.state === 'idle') this.startDirection(side);
    else if (sources === 0 && direction.state !== 'idle') this.stopDirection(side, 'idle');
  }

  private startDirection(side: Side): void {
    const direction = this.directions[side];
    const generation = ++direction.generation;
    direction.state = 'starting';
    direction.failMessage = null;
    this.deps.track(
      (async () => {
        try {
          this.adoptBalance(await fundedPayer(this.deps.db, this.payer));
        } catch (err) {
          if (generation !== direction.generation || this.disposed) return;
          if (err instanceof ApiError && err.status === 402) {
            this.exhaust();
          } else {
            this.log.error({ err }, 'media: could not check the balance before interpreting');
            this.failDirection(side, generation, 'internal error');
          }
          return;
        }
        if (generation !== direction.generation || this.disposed) return;
        this.exhausted = false;
        this.createInterpreter(side, generation);
      })(),
    );
  }

  private createInterpreter(side: Side, generation: number): void {
    const direction = this.directions[side];
    const hearing = otherSide(side);
    const current = () => generation === direction.generation && !this.disposed;
    direction.state = 'running';
    let interpreter: Interpreter;
    try {
      interpreter = this.deps.settings().interpreterFactory({
        sourceLanguage: languageOf(this.call, side)!,
        targetLanguage: languageOf(this.call, hearing)!,
        onAudio: (pcm) => {
          if (current()) this.deliver(hearing, pcm, `out:${side}`);
        },
        onCaption: (caption) => {
          if (current()) this.caption(side, caption);
        },
        onStatus: (status) => {
          if (current()) this.interpreterStatus(side, generation, status);
        },
      });
    } catch (err) {
      this.log.error({ err }, 'media: the interpreter factory threw');
      this.failDirection(side, generation, err instanceof Error ? err.message : 'interpreter failed to start');
      return;
    }
    if (!current() || direction.state !== 'running') {
      // Stopped or failed while the factory ran (its callbacks may be synchronous).
      this.deps.track(interpreter.close().catch(() => {}));
      return;
    }
    direction.interpreter = interpreter;
    if (direction.connected) this.broadcastJson(hearing, this.provenanceOf(direction));
    const pending = direction.pending;
    direction.pending = [];
    direction.pendingBytes = 0;
    for (const pcm of pending) interpreter.push(pcm);
  }

  private interpreterStatus(side: Side, generation: number, status: InterpreterStatus): void {
    const direction = this.directions[side];
    const hearing = otherSide(side);
    if (status.state === 'failed') {
      this.failDirection(side, generation, status.message ?? null);
      return;
    }
    if (status.state === 'connected') {
      const wasConnected = direction.connected;
      direction.connected = true;
      direction.reconnecting = false;
      this.updateClock();
      if (!wasConnected && direction.interpreter) this.broadcastJson(hearing, this.provenanceOf(direction));
    } else {
      direction.connected = false;
      if (!direction.reconnecting) {
        direction.reconnecting = true;
        this.broadcastJson(hearing, notice(NOTICE.translationReconnecting, status.message ? `${NOTICE_MESSAGES.translation_reconnecting}: ${status.message}` : undefined));
      }
      this.updateClock();
    }
  }

  private caption(side: Side, caption: InterpreterCaption): void {
    const direction = this.directions[side];
    const hearing = otherSide(side);
    if (!direction.captionId) direction.captionId = `cap_${side === 'agent' ? 'a' : 'c'}${direction.generation}_${++direction.captionSeq}`;
    this.broadcastJson(hearing, {
      type: 'caption',
      id: direction.captionId,
      final: caption.final,
      original: caption.original,
      translated: caption.translated,
      language: languageOf(this.call, hearing)!,
      source_language: languageOf(this.call, side)!,
    });
    if (caption.final) direction.captionId = null;
  }

  /** A direction that cannot interpret: tell the listener, relay the speaker untranslated. */
  private failDirection(side: Side, generation: number, message: string | null): void {
    const direction = this.directions[side];
    if (generation !== direction.generation || this.disposed) return;
    this.stopDirection(side, 'failed');
    direction.failMessage = message;
    const hearing = otherSide(side);
    this.log.warn({ side, message }, 'media: live interpretation unavailable; relaying untranslated');
    this.broadcastJson(hearing, notice(NOTICE.translationUnavailable, this.unavailableMessage(direction)));
    this.broadcastJson(hearing, UNTRANSLATED_PROVENANCE);
  }

  private stopDirection(side: Side, next: DirectionState): void {
    const direction = this.directions[side];
    direction.generation++;
    const interpreter = direction.interpreter;
    direction.interpreter = null;
    direction.connected = false;
    direction.reconnecting = false;
    direction.state = next;
    direction.captionId = null;
    const pending = direction.pending;
    direction.pending = [];
    direction.pendingBytes = 0;
    if (next === 'failed' || next === 'exhausted') {
      for (const pcm of pending) this.deliver(otherSide(side), pcm, `pass:${side}`);
    }
    if (interpreter) {
      this.deps.track(
        interpreter.close().catch((err) => this.log.warn({ err }, 'media: interpreter close failed')),
      );
    }
    this.updateClock();
  }

  /** Languages changed: both directions involve the changed side, so both are rebuilt. */
  private rebuildDirections(): void {
    if (!this.isLive) return;
    for (const side of ['agent', 'customer'] as const) {
      const direction = this.directions[side];
      if (direction.state === 'idle' || direction.state === 'exhausted') continue;
      this.stopDirection(side, 'idle');
      this.sourcesChanged(side);
    }
  }

  /**
   * The prepaid balance is empty: both directions stop interpreting (the call stays open and each side
   * hears the other untranslated), listeners are told, and `call.balance_exhausted` is recorded.
   */
  private exhaust(): void {
    if (this.disposed) return;
    const already = this.exhausted;
    this.exhausted = true;
    this.fundedMs = null;
    for (const side of ['agent', 'customer'] as const) {
      const direction = this.directions[side];
      if (this.sourceCount(side) > 0 && direction.state !== 'exhausted') this.stopDirection(side, 'exhausted');
      else if (direction.state !== 'idle' && direction.state !== 'exhausted') this.stopDirection(side, 'idle');
    }
    this.bill(Date.now(), true);
    if (already) return;
    this.log.info('media: prepaid balance exhausted; interpretation stopped');
    this.broadcastJson('both', notice(NOTICE.balanceExhausted));
    this.broadcastJson('both', UNTRANSLATED_PROVENANCE);
    if (!this.exhaustionRecorded) {
      this.exhaustionRecorded = true;
      const call = this.call;
      this.deps.track(
        (async () => {
          const event = await recordEvent(this.deps.db, callEvent(call, 'call.balance_exhausted', presentCall(call)));
          this.deps.events.publish(event);
        })().catch((err) => this.log.error({ err }, 'media: could not record call.balance_exhausted')),
      );
    }
  }

  /**
   * An exhausted room asks now and then whether the balance was topped up; if it was, the directions
   * that have a speaker start interpreting again (their listeners get a new provenance frame).
   */
  private resumeIfFunded(): void {
    if (this.checkingFunding) return;
    this.checkingFunding = true;
    this.deps.track(
      (async () => {
        try {
          const org = await fundedPayer(this.deps.db, this.payer);
          if (this.disposed || !this.exhausted) return;
          this.log.info('media: prepaid balance topped up; interpretation resumes');
          this.exhausted = false;
          this.adoptBalance(org);
          for (const side of ['agent', 'customer'] as const) {
            if (this.directions[side].state === 'exhausted') this.directions[side].state = 'idle';
            this.sourcesChanged(side);
          }
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 402)) this.log.warn({ err }, 'media: could not check the balance');
        } finally {
          this.checkingFunding = false;
        }
      })(),
    );
  }

  // ---- billing ---------------------------------------------------------------------------------

  private updateClock(now = Date.now()): void {
    const running = this.directions.agent.connected || this.directions.customer.connected;
    if (running && this.translatingSince === null) this.translatingSince = now;
    else if (!running && this.translatingSince !== null) {
      this.unbilledMs += now - this.translatingSince;
      this.translatingSince = null;
    }
  }

  /** Interpretation time not yet charged, up to `now`. */
  private interpretedMs(now: number): number {
    return this.unbilledMs + (this.translatingSince === null ? 0 : now - this.translatingSince);
  }

  /** Learns how much interpretation the organization's balance still pays for. */
  private adoptBalance(org: OrganizationRow): void {
    const funded = fundedCallMs(org);
    this.fundedMs = funded === null ? null : this.interpretedMs(Date.now()) + funded;
  }

  /**
   * Charges whole seconds of interpretation so far; `roundUp` also charges the started last second,
   * whose unused part is kept (as negative unbilled time) so that no second is charged twice.
   */
  private bill(now: number, roundUp: boolean): void {
    if (!this.isLive) return;
    if (this.translatingSince !== null) {
      this.unbilledMs += now - this.translatingSince;
      this.translatingSince = now;
    }
    const seconds = roundUp ? Math.ceil(this.unbilledMs / 1000) : Math.floor(this.unbilledMs / 1000);
    if (seconds <= 0) return;
    this.unbilledMs -= seconds * 1000;
    this.billing = this.billing.then(() => this.charge(seconds));
    this.deps.track(this.billing);
  }

  private async charge(seconds: number): Promise<void> {
    try {
      const after = await chargeCallSeconds(this.deps.db, this.payer, this.call.id, seconds);
      if (balanceRunOut(after)) this.exhaust();
      else this.adoptBalance(after);
    } catch (err) {
      this.log.error({ err, seconds }, 'media: charging interpretation time failed');
      // Charged later (or, once the room is gone, lost rather than charged twice).
      if (!this.disposed) this.unbilledMs += seconds * 1000;
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /** A call event from the bus (published after its transaction committed). */
  handleEvent(type: string, data: Record<string, unknown>): void {
    if (this.disposed) return;
    const side = data.side === 'agent' || data.side === 'customer' ? (data.side as Side) : null;
    switch (type) {
      case 'call.ended':
        this.endCall();
        break;
      case 'call.link_rotated':
        if (side) this.closeSide(side, CLOSE.linkReplaced, NOTICE.linkReplaced);
        break;
      case 'call.left':
        if (side) this.closeSide(side, CLOSE.left, NOTICE.left);
        break;
      case 'call.line_replaced':
        if (side) for (const line of [...this.lines]) if (line.side === side) line.hangup('line replaced');
        break;
      case 'call.updated': {
        this.absorb(data);
        if (side && data.language_changed === true) this.languageChanged(side);
        break;
      }
    }
  }

  /** Keeps the languages (and names) the event reports. */
  private absorb(data: Record<string, unknown>): void {
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    this.call = {
      ...this.call,
      agent_language: text(data.agent_language) ?? this.call.agent_language,
      customer_language: text(data.customer_language) ?? this.call.customer_language,
    };
  }

  /** A fresher row read from the database (after a socket registered): adopt its languages. */
  refreshCall(row: CallRow): void {
    if (this.disposed) return;
    if (row.status !== 'open') return this.endCall();
    const changed = row.agent_language !== this.call.agent_language || row.customer_language !== this.call.customer_language;
    this.call = row;
    if (changed) this.rebuildDirections();
  }

  /** Side X's language changed: the other side's listeners reconnect; interpreters are rebuilt. */
  private languageChanged(side: Side): void {
    const hearing = otherSide(side);
    for (const listener of [...this.listeners]) {
      if (listener.side === hearing) listener.close(CLOSE.reconnect, notice(NOTICE.reconnect));
    }
    this.rebuildDirections();
  }

  /** Side X's link was replaced: its stream and listen sockets stop; the other side is untouched. */
  private closeSide(side: Side, close: CloseCode, code: NoticeCode): void {
    for (const stream of [...this.streams]) if (stream.side === side) stream.close(close);
    for (const listener of [...this.listeners]) if (listener.side === side) listener.close(close, notice(code));
  }

  endCall(): void {
    this.closeEverything(CLOSE.callEnded, NOTICE.callEnded, 'call ended');
  }

  /** Closes every endpoint (shutdown, call ended) and disposes the room. */
  closeEverything(close: CloseCode, code: NoticeCode | null, hangupReason: string): void {
    if (this.disposed) return;
    for (const listener of [...this.listeners]) listener.close(close, code ? notice(code) : undefined);
    for (const stream of [...this.streams]) stream.close(close);
    for (const line of [...this.lines]) line.hangup(hangupReason);
    this.dispose();
  }

  private dispose(): void {
    if (this.disposed) return;
    for (const side of ['agent', 'customer'] as const) {
      if (this.directions[side].state !== 'idle') this.stopDirection(side, 'idle');
    }
    this.chunkers.clear();
    this.bill(Date.now(), true);
    this.disposed = true;
    this.deps.onEmpty(this);
  }

  stats() {
    let dropped = 0;
    let sent = 0;
    for (const listener of this.listeners) {
      dropped += listener.chunksDropped;
      sent += listener.chunksSent;
    }
    return {
      streams: this.streams.size,
      listeners: this.listeners.size,
      lines: this.lines.size,
      chunksSent: sent,
      chunksDropped: dropped,
      directions: {
        agent: { state: this.directions.agent.state, connected: this.directions.agent.connected },
        customer: { state: this.directions.customer.state, connected: this.directions.customer.connected },
      },
    };
  }
}
