// One direction of a call: a speaker's voice (all its sources mixed) on its way to the side that hears
// it. Test mode: echoed back to the speaker. Live mode: interpreted for the other side, or passed
// through untranslated while interpretation is unavailable (no engine, upstream failure, no money).
//
// States (live mode):
//   idle       nobody speaks on this side
//   starting   the balance is being asked; speech waits in a bounded buffer
//   running    an interpreter is up (or reconnecting); speech goes to it
//   failed     the interpreter gave up; speech passes through untranslated until the direction restarts
//   exhausted  the prepaid balance ran out; speech passes through untranslated until a top-up
import type { Logger } from 'pino';
import type { Interpreter, InterpreterCaption, InterpreterFactory, InterpreterStatus } from '../interpreter.js';
import {
  BYTES_PER_SECOND,
  NOTICE,
  NOTICE_MESSAGES,
  TEST_PROVENANCE,
  UNTRANSLATED_PROVENANCE,
  notice,
  type ProvenanceFrame,
  type TextFrame,
} from '../protocol.js';
import { otherSide, type Side } from '../../side.js';
import type { Admission } from './billing.js';
import type { AudioOut } from './fanOut.js';
import type { Utterance } from '../callStore.js';
import { SpeechTurns, type SpeechTurn } from './turns.js';

export type DirectionState = 'idle' | 'starting' | 'running' | 'failed' | 'exhausted';

/** What a direction needs of its room (the room implements it: no per-direction closures). */
export interface DirectionHost {
  /** Each side hears its own voice (test mode) rather than the other side's interpreted (live mode). */
  readonly echoes: boolean;
  readonly log: Logger;
  /** Text frames to the side that hears `speaker`. */
  announce(speaker: Side, frame: TextFrame): void;
  /** A side's language as the call has it now. */
  languageOf(side: Side): string;
  interpreterFactory(): InterpreterFactory;
  /** Asks the balance before interpreting (live mode). */
  admitInterpretation(): Promise<Admission>;
  /** The balance pays: whatever stopped the call for want of money is over. */
  interpretationFunded(): void;
  /** The balance has run out: the room stops interpretation for the whole call. */
  interpretationRunOut(): void;
  /** Whether a direction is interpreting changed (the billing clock follows). */
  interpretingChanged(): void;
  /** Background work the plane waits for on shutdown. */
  track(work: Promise<unknown>): void;
  /** A completed utterance, for the call's transcript. */
  record(utterance: Utterance): void;
  /** Milliseconds from the end of a turn of `speaker`'s speech to the first interpreted audio sent to the listener. */
  latency(speaker: Side, ms: number): void;
  /** The media plane's clock. */
  now(): number;
}

/** Where a direction's audio goes. */
export interface DirectionOutputs {
  /** The speaker's own side (test-mode echo). */
  echo: AudioOut;
  /** The other side: interpreted speech. */
  interpreted: AudioOut;
  /** The other side: the original voice, when there is no interpretation. */
  untranslated: AudioOut;
}

/** Speech kept while the interpreter starts: one second, then the newest is dropped. */
const MAX_PENDING_BYTES = BYTES_PER_SECOND;

export class Direction {
  private current: DirectionState = 'idle';
  private interpreter: Interpreter | null = null;
  private connected = false;
  private reconnecting = false;
  /** Bumped whenever the direction stops or restarts: callbacks of an older interpreter are ignored. */
  private generation = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failMessage: string | null = null;
  private captionId: string | null = null;
  private captionSeq = 0;
  /** The caption of `captionId` as last shown, while it may still change; made final if interpretation stops. */
  private partial: InterpreterCaption | null = null;
  /** When the speech the next final caption renders began: the first turn not yet captioned, or the first partial. */
  private captionStartedAt: number | null = null;
  private readonly turns: SpeechTurns;
  /** When the speaker's latest voiced audio arrived, and the first interpreted audio sent after it. */
  private voicedAt: number | null = null;
  private answeredAt: number | null = null;
  /** A turn ended before any interpreted audio followed its last words: the next audio answers it. */
  private unansweredSince: number | null = null;

  private readonly hearer: Side;

  constructor(
    private readonly speaker: Side,
    private readonly host: DirectionHost,
    private readonly outputs: DirectionOutputs,
  ) {
    this.hearer = otherSide(speaker);
    this.turns = new SpeechTurns(
      (turn) => this.turnEnded(turn),
      (now) => {
        this.voicedAt = now;
        this.answeredAt = null;
        this.unansweredSince = null;
      },
    );
  }

  get state(): DirectionState {
    return this.current;
  }

  /** Interpretation is running and connected: the call is billed for it. */
  get interpreting(): boolean {
    return this.connected;
  }

  /** Times the interpreter lost its upstream connection and had to reconnect (stats). */
  reconnects = 0;

  /** The speaker's voice, all sources mixed, at `now` (the media plane's clock). */
  push(pcm: Buffer, now: number): void {
    this.turns.push(pcm, now);
    if (this.host.echoes) {
      this.outputs.echo.push(pcm);
      return;
    }
    if (this.current === 'running' && this.interpreter) {
      this.interpreter.push(pcm);
    } else if (this.current === 'starting' || this.current === 'running') {
      if (this.pendingBytes + pcm.length <= MAX_PENDING_BYTES) {
        this.pending.push(Buffer.from(pcm));
        this.pendingBytes += pcm.length;
      }
    } else {
      this.outputs.untranslated.push(pcm);
    }
  }

  /** The speaker's sources changed: interpretation starts with the first, stops with the last. */
  speakers(count: number): void {
    if (this.host.echoes) return;
    if (count > 0 && this.current === 'idle') this.start();
    else if (count === 0 && this.current !== 'idle') this.stop('idle');
  }

  /** Stops and, when the speaker is still there, starts again (the languages changed). */
  restart(speakers: number): void {
    if (this.host.echoes || this.current === 'idle' || this.current === 'exhausted') return;
    this.stop('idle');
    this.speakers(speakers);
  }

  /** The balance ran out: untranslated while the speaker talks, idle otherwise. */
  exhaust(speakers: number): void {
    if (speakers > 0 && this.current !== 'exhausted') this.stop('exhausted');
    else if (speakers === 0 && this.current !== 'idle' && this.current !== 'exhausted') this.stop('idle');
  }

  /** The balance was topped up: interpretation may start again. */
  refunded(speakers: number): void {
    if (this.current === 'exhausted') this.current = 'idle';
    this.speakers(speakers);
  }

  /** Stops interpreting; `next` is what the direction does meanwhile. */
  stop(next: DirectionState): void {
    this.generation++;
    const interpreter = this.interpreter;
    this.interpreter = null;
    this.connected = false;
    this.reconnecting = false;
    this.current = next;
    // What the listener was shown of the turn in progress is what it heard: it is the utterance.
    const partial = this.partial;
    if (partial) this.caption({ ...partial, final: true });
    this.captionId = null;
    const pending = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (next === 'failed' || next === 'exhausted') {
      for (const pcm of pending) this.outputs.untranslated.push(pcm);
    }
    if (interpreter) {
      this.host.track(interpreter.close().catch((err) => this.host.log.warn({ err }, 'media: interpreter close failed')));
    }
    this.host.interpretingChanged();
  }

  /** What a listener of this direction learns on connecting: where its audio comes from, any problem. */
  greeting(callRunOut: boolean): TextFrame[] {
    if (this.host.echoes) return [TEST_PROVENANCE];
    switch (this.current) {
      case 'running':
        if (this.connected) return [this.provenance()];
        if (this.reconnecting) return [notice(NOTICE.translationReconnecting)];
        return [];
      case 'failed':
        return [notice(NOTICE.translationUnavailable, this.unavailableMessage()), UNTRANSLATED_PROVENANCE];
      case 'exhausted':
        return [notice(NOTICE.balanceExhausted), UNTRANSLATED_PROVENANCE];
      default:
        return callRunOut ? [notice(NOTICE.balanceExhausted)] : [];
    }
  }

  private start(): void {
    const generation = ++this.generation;
    this.current = 'starting';
    this.failMessage = null;
    this.host.track(
      this.host.admitInterpretation().then((admission) => {
        if (generation !== this.generation) return;
        if (admission === 'run_out') this.host.interpretationRunOut();
        else if (admission === 'unknown') this.fail(generation, 'internal error');
        else {
          this.host.interpretationFunded();
          this.createInterpreter(generation);
        }
      }),
    );
  }

  private createInterpreter(generation: number): void {
    const { host } = this;
    const current = () => generation === this.generation;
    this.current = 'running';
    let interpreter: Interpreter;
    try {
      interpreter = host.interpreterFactory()({
        sourceLanguage: host.languageOf(this.speaker),
        targetLanguage: host.languageOf(this.hearer),
        onAudio: (pcm) => {
          if (!current()) return;
          this.answered();
          this.outputs.interpreted.push(pcm);
        },
        onCaption: (caption) => {
          if (current()) this.caption(caption);
        },
        onTurnStart: () => {
          if (current()) this.outputs.interpreted.turnStarted();
        },
        onStatus: (status) => {
          if (current()) this.status(generation, status);
        },
      });
    } catch (err) {
      host.log.error({ err }, 'media: the interpreter factory threw');
      this.fail(generation, err instanceof Error ? err.message : 'interpreter failed to start');
      return;
    }
    if (!current() || this.current !== 'running') {
      // Stopped or failed while the factory ran (its callbacks may be synchronous).
      host.track(interpreter.close().catch(() => {}));
      return;
    }
    this.interpreter = interpreter;
    if (this.connected) this.announce(this.provenance());
    const pending = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const pcm of pending) interpreter.push(pcm);
  }

  private status(generation: number, status: InterpreterStatus): void {
    if (status.state === 'failed') {
      this.fail(generation, status.message ?? null);
      return;
    }
    if (status.state === 'connected') {
      const wasConnected = this.connected;
      this.connected = true;
      this.reconnecting = false;
      this.host.interpretingChanged();
      if (!wasConnected && this.interpreter) this.announce(this.provenance());
      return;
    }
    this.connected = false;
    if (!this.reconnecting) {
      this.reconnecting = true;
      this.reconnects++;
      const message = status.message ? `${NOTICE_MESSAGES.translation_reconnecting}: ${status.message}` : undefined;
      this.announce(notice(NOTICE.translationReconnecting, message));
    }
    this.host.interpretingChanged();
  }

  /** The room's clock: a speaker who stopped sending audio has finished its turn. */
  tick(now: number): void {
    this.turns.tick(now);
  }

  /** Interpreted audio goes to the listener: the first after the speaker's last words measures the latency. */
  private answered(): void {
    if (this.voicedAt === null || this.answeredAt !== null) return;
    this.answeredAt = this.host.now();
    if (this.unansweredSince === null) return;
    this.host.latency(this.speaker, this.answeredAt - this.unansweredSince);
    this.unansweredSince = null;
  }

  /** The speaker is gone (the room closes): the turn in progress is complete. */
  flushTurn(): void {
    this.turns.flush();
  }

  /**
   * A turn of speech ended. Test mode has no interpreter to caption it: a placeholder says what was
   * said, the way the text stand-in does. Live mode: the interpreter's caption will render it.
   */
  private turnEnded(turn: SpeechTurn): void {
    if (!this.host.echoes) {
      this.captionStartedAt ??= turn.startedAt;
      if (this.voicedAt === null) return;
      if (this.answeredAt !== null) this.host.latency(this.speaker, this.answeredAt - this.voicedAt);
      else this.unansweredSince = this.voicedAt;
      return;
    }
    const seconds = (turn.durationMs / 1000).toFixed(1);
    this.captionStartedAt = turn.startedAt;
    this.caption(
      { final: true, original: `[${this.host.languageOf(this.speaker)}] speech ${seconds} s`, translated: `[${this.host.languageOf(this.hearer)}] speech ${seconds} s` },
      turn.endedAt,
    );
  }

  private caption(caption: InterpreterCaption, endedAt = this.host.now()): void {
    this.captionId ??= `cap_${this.speaker === 'agent' ? 'a' : 'c'}${this.generation}_${++this.captionSeq}`;
    this.captionStartedAt ??= this.turns.turnStartedAt ?? endedAt;
    const language = this.host.languageOf(this.hearer);
    const sourceLanguage = this.host.languageOf(this.speaker);
    this.announce({
      type: 'caption',
      id: this.captionId,
      final: caption.final,
      original: caption.original,
      translated: caption.translated,
      language,
      source_language: sourceLanguage,
    });
    if (!caption.final) {
      this.partial = caption;
      return;
    }
    this.host.record({
      speaker: this.speaker,
      language: sourceLanguage,
      text: caption.original,
      translation: { language, text: caption.translated },
      startedAt: this.captionStartedAt,
      endedAt: Math.max(endedAt, this.captionStartedAt),
    });
    this.captionId = null;
    this.partial = null;
    this.captionStartedAt = null;
  }

  /** The interpreter cannot go on: the listener is told, the speaker passes through untranslated. */
  private fail(generation: number, message: string | null): void {
    if (generation !== this.generation) return;
    this.stop('failed');
    this.failMessage = message;
    this.host.log.warn({ side: this.speaker, message }, 'media: live interpretation unavailable; relaying untranslated');
    this.announce(notice(NOTICE.translationUnavailable, this.unavailableMessage()));
    this.announce(UNTRANSLATED_PROVENANCE);
  }

  private announce(frame: TextFrame): void {
    this.host.announce(this.speaker, frame);
  }

  private provenance(): ProvenanceFrame {
    const names = this.interpreter?.provenance ?? { engine: 'interpreter', model: 'unknown' };
    return { type: 'provenance', engine: names.engine, model: names.model };
  }

  private unavailableMessage(): string {
    const base = NOTICE_MESSAGES.translation_unavailable;
    return this.failMessage ? `${base} (${this.failMessage})` : base;
  }
}
