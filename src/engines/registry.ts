// The one place that decides which engine does a piece of work: the test-mode stand-ins for test
// keys, the live engines chosen from configuration for live keys (docs/translation-and-billing.md, "Engines"). Made once at
// start-up and kept on the AppContext; tests replace live engines with replaceLive().
//
// - Text translation and transcription: test mode gets the stand-in (`[fi] Hello`, the fixed
//   transcript); live mode gets the configured engine, or a 502 naming the setting to add.
// - Call interpretation: test mode echoes (each side hears its own voice); live mode interprets
//   with the configured factory, or with one whose interpreters report `failed` naming the missing
//   setting (the call stays up, untranslated, and the listener is told why).

import type { Logger } from 'pino';
import type { Mode } from '../auth/principal.js';
import type { Echo, Interpret, Interpretation, InterpreterFactory, Interpreters } from '../calls/media/interpreter.js';
import type { Config } from '../config.js';
import { requireConfigured, type Configured } from '../upstream/configured.js';
import { failingInterpreterFactory } from '../interpretation/failedInterpreter.js';
import { createInterpreterFactory } from '../interpretation/index.js';
import type { Transcribers, TranscriptionEngine } from '../transcription/engine.js';
import { createTranscriptionEngine } from '../transcription/index.js';
import { testModeTranscription } from '../transcription/placeholder.js';
import type { TranslationEngine, Translators } from '../translation/engine.js';
import { createTranslationEngine } from '../translation/engines/index.js';
import { testModeEngine } from '../translation/engines/testStandIn.js';

/** The live engines, each configured or the setting that is missing for it. */
export interface LiveEngines {
  translation: Configured<TranslationEngine>;
  transcription: Configured<TranscriptionEngine>;
  interpretation: Configured<InterpreterFactory>;
}

const ECHO: Echo = { kind: 'echo' };

export class EngineRegistry implements Translators, Transcribers, Interpreters {
  private live: LiveEngines;
  private liveInterpretation: Interpret;

  constructor(live: LiveEngines) {
    this.live = live;
    this.liveInterpretation = interpretWith(live.interpretation);
  }

  /** The text translation engine for work in `mode`; live without one: 502 naming the setting. */
  translation(mode: Mode): TranslationEngine {
    return mode === 'live' ? requireConfigured(this.live.translation, 'translation') : testModeEngine;
  }

  /** The speech-to-text engine for voice messages in `mode`; live without one: 502 naming the setting. */
  transcription(mode: Mode): TranscriptionEngine {
    return mode === 'live' ? requireConfigured(this.live.transcription, 'transcription') : testModeTranscription;
  }

  /** What a call in `mode` does with a side's voice: echo it (test), or interpret it (live). */
  interpretation(mode: 'test'): Echo;
  interpretation(mode: 'live'): Interpret;
  interpretation(mode: Mode): Interpretation;
  interpretation(mode: Mode): Interpretation {
    return mode === 'live' ? this.liveInterpretation : ECHO;
  }

  /** The setting that live call interpretation lacks, or undefined when an engine is configured. */
  liveInterpretationMissing(): string | undefined {
    return 'missingSetting' in this.live.interpretation ? this.live.interpretation.missingSetting : undefined;
  }

  /** Replaces live engines for work started from now on (tests: stand-ins and fakes). */
  replaceLive(engines: Partial<LiveEngines>): void {
    this.live = { ...this.live, ...engines };
    this.liveInterpretation = interpretWith(this.live.interpretation);
  }
}

function interpretWith(factory: Configured<InterpreterFactory>): Interpret {
  if ('missingSetting' in factory) {
    return { kind: 'interpret', factory: failingInterpreterFactory(`no interpretation engine configured: set ${factory.missingSetting}`) };
  }
  return { kind: 'interpret', factory };
}

/** The registry of the live engines the configuration names. */
export function createEngineRegistry(config: Config['engines'], logger: Logger): EngineRegistry {
  return new EngineRegistry({
    translation: createTranslationEngine(config),
    transcription: createTranscriptionEngine(config),
    interpretation: createInterpreterFactory(config, logger),
  });
}
