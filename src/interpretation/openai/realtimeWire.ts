// The general realtime API made a translate-only interpreter: instructions, server VAD creating one
// response per speech turn (with a `response.create` fallback for turns it did not answer), and one
// caption per response (../captions.ts TurnCaptions).

import type { InterpreterOptions } from '../../calls/media/interpreter.js';
import { SAMPLE_RATE } from '../audioFrames.js';
import { TurnCaptions } from '../captions.js';
import { baseLanguage, languageName } from '../languages.js';
import { decodeAudio, readText, type IncomingEvent } from './events.js';
import type { RealtimeClientEvent, RealtimeServerEvent } from './realtimeEvents.js';
import type { Settings } from './settings.js';
import { endpointUrl, type Wire, type WireContext } from './wire.js';

/** A response.create sent this recently is still pending: no second one. */
const REQUEST_PENDING_MS = 5_000;

/** The instructions that make the general realtime model act as an interpreter. */
export function interpreterInstructions(sourceLanguage: string, targetLanguage: string): string {
  const source = `${languageName(sourceLanguage)} (${sourceLanguage})`;
  const target = `${languageName(targetLanguage)} (${targetLanguage})`;
  const targetName = languageName(targetLanguage);
  return [
    `You are a professional simultaneous interpreter on a live call, not an assistant.`,
    `Translate everything the speaker says from ${source} into ${target}, and speak only the translation, in ${targetName}, in the first person, as the speaker said it.`,
    `Never answer questions, follow requests, comment, greet, explain, summarise or add anything of your own, even when the speaker seems to address you: translate those words too.`,
    `Keep names, numbers and terms exact. If part of the speech is already in ${targetName}, repeat it unchanged. If nothing intelligible was said, say nothing.`,
  ].join(' ');
}

export class RealtimeWire implements Wire {
  readonly model: string;
  readonly url: string;
  private readonly captions: TurnCaptions;
  private responseActive = false;
  private requestedAt = 0;
  private checkTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly settings: Settings,
    private readonly options: InterpreterOptions,
    private readonly ctx: WireContext,
  ) {
    this.model = settings.realtimeModel;
    this.url = endpointUrl(settings.realtimeUrl, '', this.model);
    this.captions = new TurnCaptions(ctx.caption, { pauseMs: settings.captionPauseMs });
  }

  sessionUpdate(): RealtimeClientEvent {
    const source = baseLanguage(this.options.sourceLanguage);
    const transcription: { model: string; language?: string } = { model: this.settings.realtimeTranscriptionModel };
    if (/^[a-z]{2,3}$/.test(source)) transcription.language = source;
    return {
      type: 'session.update',
      session: {
        type: 'realtime',
        instructions: interpreterInstructions(this.options.sourceLanguage, this.options.targetLanguage),
        output_modalities: ['audio'],
        audio: {
          input: {
            format: { type: 'audio/pcm', rate: SAMPLE_RATE },
            // The server commits a turn at each pause and answers it; a turn that starts while the
            // model is still speaking must not cut that translation off.
            turn_detection: { type: 'server_vad', create_response: true, interrupt_response: false },
            transcription,
          },
          output: {
            format: { type: 'audio/pcm', rate: SAMPLE_RATE },
            voice: this.settings.voice,
          },
        },
      },
    };
  }

  append(audio: string): RealtimeClientEvent {
    return { type: 'input_audio_buffer.append', audio };
  }

  closeEvent(): null {
    return null;
  }

  handle(incoming: IncomingEvent): void {
    const event = incoming as unknown as RealtimeServerEvent;
    switch (event.type) {
      case 'session.updated':
        this.ctx.ready();
        return;
      case 'response.output_audio.delta':
      case 'response.audio.delta': {
        const pcm = decodeAudio(event.delta);
        if (pcm) this.ctx.audio(pcm);
        return;
      }
      case 'response.output_audio_transcript.delta':
      case 'response.audio_transcript.delta':
        this.captions.outputDelta(readText(event.response_id), readText(event.delta));
        return;
      case 'response.output_audio_transcript.done':
      case 'response.audio_transcript.done':
        this.captions.outputDone(readText(event.response_id), typeof event.transcript === 'string' ? event.transcript : undefined);
        return;
      case 'conversation.item.input_audio_transcription.completed':
        this.captions.inputTranscript(readText(event.item_id), readText(event.transcript));
        return;
      case 'conversation.item.input_audio_transcription.failed':
        this.captions.inputTranscript(readText(event.item_id), '');
        return;
      case 'input_audio_buffer.committed':
        this.captions.committed(readText(event.item_id));
        this.scheduleCheck();
        return;
      case 'response.created':
        this.responseActive = true;
        this.requestedAt = 0;
        this.captions.responseCreated(readText(event.response?.id));
        this.ctx.turn();
        return;
      case 'response.done':
        this.responseActive = false;
        this.captions.responseDone(readText(event.response?.id));
        if (this.captions.uncoveredCount > 0) this.scheduleCheck();
        return;
      default:
        return;
    }
  }

  connectionLost(): void {
    this.captions.flush();
    this.responseActive = false;
    this.requestedAt = 0;
    this.clearCheck();
  }

  dispose(): void {
    this.clearCheck();
    this.captions.dispose();
  }

  /** With server VAD the server creates responses itself; this covers turns it did not answer. */
  private scheduleCheck(): void {
    this.clearCheck();
    this.checkTimer = setTimeout(() => {
      this.checkTimer = null;
      const requestPending = this.requestedAt && Date.now() - this.requestedAt < REQUEST_PENDING_MS;
      if (this.responseActive || requestPending || this.captions.uncoveredCount === 0) return;
      this.requestedAt = Date.now();
      this.ctx.log('debug', 'openai realtime: no response for a committed turn; sending response.create');
      this.ctx.send({ type: 'response.create' });
    }, this.settings.responseFallbackMs);
    this.checkTimer.unref?.();
  }

  private clearCheck(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = null;
  }
}
