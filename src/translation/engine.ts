// One interface for every text translation engine (OpenAI, DeepL, LibreTranslate, the test stand-in).
import type { Mode } from '../auth/principal.js';

export interface EngineRequest {
  /** The texts to translate, in order; never empty. */
  texts: string[];
  /** Target language code as the caller gave it (2-12 characters, e.g. `fi`, `pt-BR`, `EN`). */
  target: string;
  /** Source language of every text, when known (given by the caller or reliably detected). */
  source: string | null;
  /** Steers wording (max 500 characters). */
  context: string | null;
  /** The caller's own terms and how to render them in the target language. */
  glossary: Record<string, string> | null;
}

export interface EngineTranslation {
  text: string;
  /** The engine's idea of the source language (a lower-case base code such as `en`), when it says. */
  detectedSourceLanguage: string | null;
}

export interface TranslationEngine {
  /** `openai`, `deepl`, `libretranslate` or `test`: part of the translation cache key. */
  readonly name: string;
  /** The model or service version, for provenance (e.g. `gpt-4.1-mini`). */
  readonly model: string;
  /** One result per input text, same order. Throws EngineError when the upstream fails for good. */
  translate(request: EngineRequest): Promise<EngineTranslation[]>;
}

/** The upstream failed (after the retries that were safe); the API answers 502 and bills nothing. */
export class EngineError extends Error {
  constructor(
    readonly engine: string,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** The text translation engine for work in a mode (the engine registry decides). */
export interface Translators {
  translation(mode: Mode): TranslationEngine;
}
