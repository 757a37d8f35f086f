// Text translation through a (usually self-hosted) LibreTranslate server over its HTTP API:
// `POST {url}/translate` JSON `{q: string[], source: code|'auto', target, format: 'text', api_key?}`
// -> `{translatedText: string[], detectedLanguage?: [{language, confidence}]}` (the latter for `auto`).

import { EngineError, type EngineRequest, type EngineTranslation, type TranslationEngine } from '../engine.js';
import { shorten } from '../../upstream/failureText.js';
import { baseLanguage, languageRegion, translateNonBlank } from './common.js';
import { parseRetryAfter, UpstreamStatusError, withRetries } from './retry.js';

export interface LibreTranslateEngineOptions {
  /** Server URL, e.g. `http://localhost:5000` (a trailing slash is fine). */
  url: string;
  apiKey?: string;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Retries after the first attempt for 429, 5xx, network errors and timeouts; default 2. */
  maxRetries?: number;
  /** First backoff delay (doubles per retry); default 200 ms. */
  retryDelayMs?: number;
}

const ENGINE = 'libretranslate';

/**
 * LibreTranslate's code for a language: base codes, except Brazilian Portuguese (`pb`) and
 * Traditional Chinese (`zt`).
 */
export function libreTranslateLanguage(code: string): string {
  const base = baseLanguage(code) ?? code.trim().toLowerCase();
  const region = languageRegion(code);
  if (base === 'pt' && region === 'BR') return 'pb';
  if (base === 'zh' && ['HANT', 'TW', 'HK', 'MO'].includes(region)) return 'zt';
  return base;
}

/** A language LibreTranslate reports, as a base code (`pb` -> `pt`, `zt` -> `zh`). */
function fromLibreTranslateLanguage(code: unknown): string | null {
  if (typeof code !== 'string') return null;
  if (code === 'pb') return 'pt';
  if (code === 'zt') return 'zh';
  return baseLanguage(code);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * LibreTranslate has no glossary, so the glossary is applied best-effort before sending: every
 * whole-word, case-insensitive occurrence of a term in the source text is replaced by its rendering
 * (longest terms first, in one pass, so a rendering is never replaced again). The model then usually
 * carries the rendering through unchanged (names, product terms), but it may still inflect or
 * translate it: this is an approximation, not DeepL's or an LLM's glossary handling.
 */
export function applyGlossary(text: string, glossary: Record<string, string> | null): string {
  if (!glossary) return text;
  const renderings = new Map<string, string>();
  for (const [term, rendering] of Object.entries(glossary)) {
    const key = term.trim().toLocaleLowerCase();
    if (key) renderings.set(key, rendering);
  }
  if (renderings.size === 0) return text;
  const terms = [...renderings.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  // "Whole word": no letter, digit or underscore right before or after the term.
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${terms.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
  return text.replace(pattern, (match) => renderings.get(match.toLocaleLowerCase()) ?? match);
}

interface TranslateAnswer {
  translatedText?: unknown;
  detectedLanguage?: unknown;
  error?: unknown;
}

export function createLibreTranslateEngine(opts: LibreTranslateEngineOptions): TranslationEngine {
  const endpoint = `${opts.url.replace(/\/+$/, '')}/translate`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRetries = opts.maxRetries ?? 2;

  async function translateBatch(request: EngineRequest, texts: string[]): Promise<EngineTranslation[]> {
    // No context parameter exists in LibreTranslate: request.context is ignored.
    const body = JSON.stringify({
      q: texts.map((text) => applyGlossary(text, request.glossary)),
      source: request.source ? libreTranslateLanguage(request.source) : 'auto',
      target: libreTranslateLanguage(request.target),
      format: 'text',
      ...(opts.apiKey ? { api_key: opts.apiKey } : {}),
    });
    const answer = await withRetries(
      async (signal) => {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body,
          signal,
        });
        const raw = await response.text(); // inside the attempt: a stalled body times out too
        let parsed: TranslateAnswer | undefined;
        try {
          parsed = raw ? (JSON.parse(raw) as TranslateAnswer) : undefined;
        } catch {
          parsed = undefined;
        }
        if (!response.ok) {
          const detail = typeof parsed?.error === 'string' ? parsed.error : shorten(raw);
          throw new UpstreamStatusError(response.status, detail, parseRetryAfter(response.headers.get('retry-after')));
        }
        if (!parsed || typeof parsed !== 'object') {
          throw new EngineError(ENGINE, 'libretranslate answered with a body that is not JSON');
        }
        return parsed;
      },
      { engine: ENGINE, maxRetries, timeoutMs, baseDelayMs: opts.retryDelayMs },
    );

    const translated = answer.translatedText;
    if (!Array.isArray(translated) || !translated.every((text) => typeof text === 'string')) {
      throw new EngineError(ENGINE, 'libretranslate answered without a translatedText array');
    }
    if (translated.length !== texts.length) {
      throw new EngineError(ENGINE, `libretranslate answered ${translated.length} translations for ${texts.length} texts`);
    }
    const detected = Array.isArray(answer.detectedLanguage) ? answer.detectedLanguage : [];
    const givenSource = baseLanguage(request.source);
    return (translated as string[]).map((text, index) => ({
      text,
      detectedSourceLanguage: request.source
        ? givenSource
        : fromLibreTranslateLanguage((detected[index] as { language?: unknown } | undefined)?.language),
    }));
  }

  return {
    name: ENGINE,
    model: 'libretranslate',
    translate: (request) => translateNonBlank(request.texts, (texts) => translateBatch(request, texts)),
  };
}
