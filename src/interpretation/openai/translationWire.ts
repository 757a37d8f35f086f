// The realtime translation endpoint: continuous audio in, translated audio and transcripts out;
// captions are finalised at pauses (../captions.ts PauseCaptions).

import type { InterpreterOptions } from '../../calls/media/interpreter.js';
import { SAMPLE_RATE } from '../audioFrames.js';
import { PauseCaptions } from '../captions.js';
import { baseLanguage } from '../languages.js';
import { decodeAudio, readText, type IncomingEvent } from './events.js';
import type { Settings } from './settings.js';
import type { TranslationClientEvent, TranslationServerEvent } from './translationEvents.js';
import { endpointUrl, type Wire, type WireContext } from './wire.js';

export class TranslationWire implements Wire {
  readonly model: string;
  readonly url: string;
  private readonly captions: PauseCaptions;
  private warnedRate = false;

  constructor(
    private readonly settings: Settings,
    private readonly options: InterpreterOptions,
    private readonly ctx: WireContext,
  ) {
    this.model = settings.translationModel;
    this.url = endpointUrl(settings.realtimeUrl, '/translations', this.model);
    this.captions = new PauseCaptions(ctx.caption, { pauseMs: settings.captionPauseMs, maxChars: settings.maxCaptionChars });
  }

  sessionUpdate(): TranslationClientEvent {
    return {
      type: 'session.update',
      session: {
        audio: {
          input: { transcription: { model: this.settings.translationTranscriptionModel } },
          output: { language: baseLanguage(this.options.targetLanguage) },
        },
      },
    };
  }

  append(audio: string): TranslationClientEvent {
    return { type: 'session.input_audio_buffer.append', audio };
  }

  closeEvent(): TranslationClientEvent {
    return { type: 'session.close' };
  }

  handle(incoming: IncomingEvent): void {
    const event = incoming as unknown as TranslationServerEvent;
    switch (event.type) {
      case 'session.updated':
        this.ctx.ready();
        return;
      case 'session.output_audio.delta': {
        const rate = event.sample_rate;
        if (typeof rate === 'number' && rate !== SAMPLE_RATE && !this.warnedRate) {
          this.warnedRate = true;
          this.ctx.log('warn', 'openai translation: output audio is not 24 kHz', { sample_rate: rate });
        }
        const pcm = decodeAudio(event.delta);
        if (pcm) this.ctx.audio(pcm);
        return;
      }
      case 'session.input_transcript.delta':
        this.captions.addOriginal(readText(event.delta));
        return;
      case 'session.output_transcript.delta':
        this.captions.addTranslated(readText(event.delta));
        return;
      case 'session.closed':
        this.ctx.log('debug', 'openai translation: session closed by the upstream');
        return;
      default:
        return;
    }
  }

  connectionLost(): void {
    this.captions.flush();
  }

  dispose(): void {
    this.captions.dispose();
  }
}
