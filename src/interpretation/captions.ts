// Turning the upstream's transcript deltas into the media plane's captions (partial, then final).
//
// Finalisation rules:
// - Translation endpoint (`PauseCaptions`): it has no turns and no "done" events, only append-only
//   input/output transcript deltas. A caption collects the deltas of both since the last final caption
//   and is re-emitted as partial on every delta. It becomes final when
//     (a) no transcript delta of either kind arrived for `pauseMs` (the speaker paused: audio, silence
//         included, keeps flowing, but a pause produces no transcript), or
//     (b) the translated text is at least `maxChars` long and ends a sentence (. ! ? … 。 ！ ？), so that
//         continuous speech still yields final captions, or
//     (c) the connection is lost or the interpreter closes (whatever is pending is made final).
// - General realtime endpoint (`TurnCaptions`): one caption per model response. The translated text is
//   the response's output transcript; the original is the input transcription of the speech turns
//   (committed input items) that the response covers. It becomes final on the output transcript's
//   `.done` (or `response.done`), after waiting at most `pauseMs` for input transcriptions still
//   outstanding, and on connection loss or close.
// Text is trimmed at both ends; deltas are concatenated as they come (they carry their own spacing).

import type { InterpreterCaption } from '../calls/media/interpreter.js';

export type CaptionSink = (caption: InterpreterCaption) => void;

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*\s*$/u;

export class PauseCaptions {
  private original = '';
  private translated = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly emit: CaptionSink,
    private readonly options: { pauseMs: number; maxChars: number },
  ) {}

  addOriginal(delta: string): void {
    if (!delta) return;
    this.original += delta;
    this.changed();
  }

  addTranslated(delta: string): void {
    if (!delta) return;
    this.translated += delta;
    if (this.translated.trim().length >= this.options.maxChars && SENTENCE_END.test(this.translated)) {
      this.flush();
      return;
    }
    this.changed();
  }

  /** Makes whatever is pending final. */
  flush(): void {
    this.clearTimer();
    const original = this.original.trim();
    const translated = this.translated.trim();
    this.original = '';
    this.translated = '';
    if (original || translated) this.emit({ final: true, original, translated });
  }

  /** Drops pending text without emitting (after close). */
  dispose(): void {
    this.clearTimer();
    this.original = '';
    this.translated = '';
  }

  private changed(): void {
    const original = this.original.trim();
    const translated = this.translated.trim();
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.options.pauseMs);
    this.timer.unref?.();
    if (original || translated) this.emit({ final: false, original, translated });
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

interface SpeechItem {
  id: string;
  /** undefined while the transcription is outstanding; '' when it failed or was empty. */
  transcript: string | undefined;
}

interface ResponseCaption {
  id: string;
  items: SpeechItem[];
  text: string;
  done: boolean;
  timer: NodeJS.Timeout | null;
}

/** Bound on remembered speech items that no response covered (the upstream decides; keep memory flat). */
const MAX_UNCOVERED_ITEMS = 32;

export class TurnCaptions {
  private readonly items = new Map<string, SpeechItem>();
  private uncovered: SpeechItem[] = [];
  private readonly responses = new Map<string, ResponseCaption>();

  constructor(
    private readonly emit: CaptionSink,
    private readonly options: { pauseMs: number },
  ) {}

  /** Speech turns committed since the last response was created. */
  get uncoveredCount(): number {
    return this.uncovered.length;
  }

  committed(itemId: string): void {
    if (!itemId || this.items.has(itemId)) return;
    const item: SpeechItem = { id: itemId, transcript: undefined };
    this.items.set(itemId, item);
    this.uncovered.push(item);
    while (this.uncovered.length > MAX_UNCOVERED_ITEMS) {
      const dropped = this.uncovered.shift()!;
      this.items.delete(dropped.id);
    }
  }

  /** The input transcription of an item completed (or failed: pass ''). */
  inputTranscript(itemId: string, transcript: string): void {
    let item = this.items.get(itemId);
    if (!item) {
      // Transcription for an item whose commit we did not see: remember it as uncovered speech.
      this.committed(itemId);
      item = this.items.get(itemId);
      if (!item) return;
    }
    item.transcript = transcript.trim();
    for (const response of this.responses.values()) {
      if (!response.items.includes(item)) continue;
      if (response.done) {
        if (this.originalsComplete(response)) this.finalise(response);
      } else if (response.text.trim()) {
        this.emitPartial(response);
      }
    }
  }

  /** A response started: it covers every speech turn committed since the previous response. */
  responseCreated(responseId: string): void {
    if (!responseId || this.responses.has(responseId)) return;
    const response: ResponseCaption = { id: responseId, items: this.uncovered, text: '', done: false, timer: null };
    this.uncovered = [];
    this.responses.set(responseId, response);
  }

  outputDelta(responseId: string, delta: string): void {
    if (!delta) return;
    const response = this.responseFor(responseId);
    if (response.done) return;
    response.text += delta;
    this.emitPartial(response);
  }

  /** The response's output transcript is complete (`transcript` when the event carries it). */
  outputDone(responseId: string, transcript?: string): void {
    const response = this.responses.get(responseId) ?? (transcript ? this.responseFor(responseId) : undefined);
    if (!response || response.done) return;
    if (typeof transcript === 'string' && transcript.trim()) response.text = transcript;
    response.done = true;
    if (!response.text.trim()) {
      this.forget(response);
      return;
    }
    if (this.originalsComplete(response)) {
      this.finalise(response);
      return;
    }
    response.timer = setTimeout(() => {
      response.timer = null;
      this.finalise(response);
    }, this.options.pauseMs);
    response.timer.unref?.();
  }

  /** `response.done`: finalises a response whose transcript never got its own `.done`. */
  responseDone(responseId: string): void {
    const response = this.responses.get(responseId);
    if (!response || response.done) return;
    this.outputDone(responseId);
  }

  /** Connection lost or closing: everything pending becomes final; turn bookkeeping restarts. */
  flush(): void {
    for (const response of [...this.responses.values()]) {
      if (response.text.trim()) this.finalise(response);
      else this.forget(response);
    }
    this.items.clear();
    this.uncovered = [];
  }

  dispose(): void {
    for (const response of this.responses.values()) if (response.timer) clearTimeout(response.timer);
    this.responses.clear();
    this.items.clear();
    this.uncovered = [];
  }

  private responseFor(responseId: string): ResponseCaption {
    const id = responseId || 'unknown';
    let response = this.responses.get(id);
    if (!response) {
      this.responseCreated(id);
      response = this.responses.get(id)!;
    }
    return response;
  }

  private originalsComplete(response: ResponseCaption): boolean {
    return response.items.every((item) => item.transcript !== undefined);
  }

  private originalOf(response: ResponseCaption): string {
    return response.items
      .map((item) => item.transcript ?? '')
      .filter(Boolean)
      .join(' ');
  }

  private emitPartial(response: ResponseCaption): void {
    const translated = response.text.trim();
    if (!translated) return;
    this.emit({ final: false, original: this.originalOf(response), translated });
  }

  private finalise(response: ResponseCaption): void {
    const translated = response.text.trim();
    const original = this.originalOf(response);
    this.forget(response);
    if (translated || original) this.emit({ final: true, original, translated });
  }

  private forget(response: ResponseCaption): void {
    if (response.timer) clearTimeout(response.timer);
    response.timer = null;
    this.responses.delete(response.id);
    for (const item of response.items) this.items.delete(item.id);
  }
}
