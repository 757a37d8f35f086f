// Text translation through the DeepL API with the official client (deepl-node's Translator).
//
// Wire facts (deepl-node 1.28.0): every call is form-urlencoded with `Authorization: DeepL-Auth-Key <key>`;
// translate is `POST /v2/translate` (`text` repeated, `target_lang`, `source_lang`, `context`,
// `glossary_id`, `show_billed_characters=1`); glossaries are `POST /v2/glossaries` (`name`,
// `source_lang`, `target_lang`, `entries_format=tsv`, `entries`) and `GET /v2/glossaries`.

import { hash } from 'node:crypto';
import type { SourceLanguageCode, TargetLanguageCode, TextResult } from 'deepl-node';
import { onFirstUse } from '../../lib/onFirstUse.js';
import { EngineError, type EngineRequest, type EngineTranslation, type TranslationEngine } from '../engine.js';
import { attempts, errorMessage, seconds, shorten } from '../../upstream/failureText.js';
import { baseLanguage, languageRegion, translateNonBlank } from './common.js';

export interface DeepLEngineOptions {
  apiKey: string;
  /** Server URL without path (`https://api.deepl.com`); default chosen by the client from the key (`:fx` = free). */
  baseUrl?: string;
  /**
   * Per-attempt timeout; default 30 s. deepl-node never waits less than its own backoff interval
   * (about 1 s on the first attempt, then 1.6x per retry), so a hang fails after max(timeoutMs, ~1 s).
   */
  timeoutMs?: number;
  /** Retries after the first attempt for 429, 5xx and transport errors (the client's backoff: ~1 s, ~1.6 s, ...); default 2. */
  maxRetries?: number;
}

const ENGINE = 'deepl';
/** The client, loaded with the first translation DeepL is asked for. */
const deeplSdk = onFirstUse(() => import('deepl-node'));
type Sdk = Awaited<ReturnType<typeof deeplSdk>>;
const GLOSSARY_NAME_PREFIX = 'lia-glossary-';

/** The DeepL target code for a caller's target (`en` -> `en-US`, `pt` -> `pt-PT`, `zh-TW` -> `zh-HANT`). */
export function deeplTargetLanguage(target: string): string {
  const base = baseLanguage(target) ?? target.trim().toLowerCase();
  const region = languageRegion(target);
  switch (base) {
    case 'en':
      // DeepL has only British and American English; Commonwealth variants read better as British.
      return ['GB', 'UK', 'AU', 'NZ', 'IE', 'ZA', 'IN'].includes(region) ? 'en-GB' : 'en-US';
    case 'pt':
      return region === 'BR' ? 'pt-BR' : 'pt-PT';
    case 'zh':
      return ['HANT', 'TW', 'HK', 'MO'].includes(region) ? 'zh-HANT' : 'zh-HANS';
    case 'es':
      // Latin American Spanish (es-419) for any American region; Spain and no region -> `es`.
      return region === '' || region === 'ES' ? 'es' : 'es-419';
    default:
      return base;
  }
}

/** DeepL source codes are base codes only (`pt-BR` -> `pt`). */
export function deeplSourceLanguage(source: string): string {
  return baseLanguage(source) ?? source.trim().toLowerCase();
}

export function createDeepLEngine(opts: DeepLEngineOptions): TranslationEngine {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRetries = opts.maxRetries ?? 2;
  const translator = onFirstUse(async () => {
    const { Translator } = await deeplSdk();
    return new Translator(opts.apiKey, {
      serverUrl: opts.baseUrl,
      // deepl-node stops when `retries + 1 >= maxRetries`, so its maxRetries is the number of attempts
      // (at least one): ours (retries after the first attempt) + 1 gives 1 + maxRetries attempts.
      maxRetries: maxRetries + 1,
      minTimeout: timeoutMs,
      sendPlatformInfo: false,
      appInfo: { appName: 'live-interpretation-api', appVersion: '0.1.0' },
    });
  });
  const totalAttempts = maxRetries + 1;

  // Glossary ids by hash of (source, target, entries): each glossary is created once per process.
  // The promise is cached so concurrent requests share one creation; a failed creation is forgotten
  // so that the next request tries again. `null` = DeepL refused the pair (e.g. unsupported): no glossary.
  const glossaries = new Map<string, Promise<string | null>>();
  // Glossaries this service made earlier (found by name once per process), so restarts reuse them
  // instead of piling up copies on the DeepL account.
  let existing: Promise<Map<string, string>> | undefined;

  function existingGlossaries(): Promise<Map<string, string>> {
    existing ??= translator()
      .then((client) => client.listGlossaries())
      .then(
        (list) => new Map(list.filter((info) => info.ready !== false).map((info) => [info.name, info.glossaryId])),
        () => {
          existing = undefined; // listing is only an optimisation: try again later, create meanwhile
          return new Map<string, string>();
        },
      );
    return existing;
  }

  function glossaryId(source: string, target: string, entries: Record<string, string>): Promise<string | null> {
    const sourceBase = deeplSourceLanguage(source);
    const targetBase = baseLanguage(target) ?? target;
    if (sourceBase === targetBase) return Promise.resolve(null); // DeepL has no same-language glossaries
    const key = glossaryKey(sourceBase, targetBase, entries);
    let pending = glossaries.get(key);
    if (!pending) {
      pending = (async () => {
        const name = `${GLOSSARY_NAME_PREFIX}${key.slice(0, 32)}`;
        const found = (await existingGlossaries()).get(name);
        if (found) return found;
        try {
          const { GlossaryEntries } = await deeplSdk();
          const info = await (await translator()).createGlossary(
            name,
            sourceBase as SourceLanguageCode,
            targetBase as TargetLanguageCode,
            new GlossaryEntries({ entries }),
          );
          return info.glossaryId;
        } catch (error) {
          // 400: DeepL does not do glossaries for this language pair (or refuses the entries). The
          // translation still goes ahead, without the glossary, rather than failing the whole request.
          if (statusOf(await deeplSdk(), error) === 400) return null;
          throw error;
        }
      })();
      glossaries.set(key, pending);
      pending.catch(() => glossaries.delete(key));
    }
    return pending;
  }

  async function callTranslate(
    texts: string[],
    source: string | null,
    target: string,
    context: string | null,
    glossary: string | null,
  ): Promise<TextResult[]> {
    return (await translator()).translateText(
      texts,
      source as SourceLanguageCode | null,
      target as TargetLanguageCode,
      {
        ...(context ? { context } : {}),
        ...(glossary ? { glossary } : {}),
      },
    );
  }

  /** Translate with the stored glossary for (source, target, entries); recreate it once if DeepL lost it. */
  async function translateWithGlossary(
    texts: string[],
    source: string,
    target: string,
    context: string | null,
    entries: Record<string, string>,
  ): Promise<TextResult[]> {
    const id = await glossaryId(source, target, entries);
    try {
      return await callTranslate(texts, source, target, context, id);
    } catch (error) {
      // translateText reports an unknown glossary as a plain "Not found" (404), not GlossaryNotFoundError.
      if (id === null || statusOf(await deeplSdk(), error) !== 404) throw error;
      // Deleted on the DeepL side since we cached it: forget it and create it again.
      glossaries.delete(glossaryKey(deeplSourceLanguage(source), baseLanguage(target) ?? target, entries));
      existing = undefined;
      const again = await glossaryId(source, target, entries);
      return callTranslate(texts, source, target, context, again);
    }
  }

  async function translateBatch(request: EngineRequest, texts: string[]): Promise<EngineTranslation[]> {
    const target = deeplTargetLanguage(request.target);
    const source = request.source ? deeplSourceLanguage(request.source) : null;
    const entries = glossaryEntries(request.glossary);
    try {
      let results: TextResult[];
      if (entries && source) {
        results = await translateWithGlossary(texts, source, target, request.context, entries);
      } else {
        results = await callTranslate(texts, source, target, request.context, null);
        if (entries) {
          // Source unknown: a DeepL glossary needs a source language. The first pass tells us the
          // detected source of each text; the texts that contain a glossary term are translated once
          // more, grouped by detected source, with that pair's glossary. Texts without a term keep the
          // first translation, so only those texts cost twice.
          results = [...results];
          const groups = new Map<string, number[]>();
          texts.forEach((text, index) => {
            const detected = baseLanguage(results[index]!.detectedSourceLang);
            if (!detected || !containsAnyTerm(text, Object.keys(entries))) return;
            groups.set(detected, [...(groups.get(detected) ?? []), index]);
          });
          for (const [detected, indexes] of groups) {
            if (detected === baseLanguage(target)) continue;
            const again = await translateWithGlossary(
              indexes.map((index) => texts[index]!),
              detected,
              target,
              request.context,
              entries,
            );
            indexes.forEach((index, position) => {
              results[index] = again[position]!;
            });
          }
        }
      }
      if (results.length !== texts.length) {
        throw new EngineError(ENGINE, `deepl answered ${results.length} translations for ${texts.length} texts`);
      }
      return results.map((result) => ({
        text: result.text,
        detectedSourceLanguage: baseLanguage(result.detectedSourceLang),
      }));
    } catch (error) {
      throw toEngineError(await deeplSdk(), error, totalAttempts, timeoutMs);
    }
  }

  return {
    name: ENGINE,
    model: 'deepl-api-v2',
    translate: (request) => translateNonBlank(request.texts, (texts) => translateBatch(request, texts)),
  };
}

/** Glossary entries DeepL accepts (non-empty terms without control characters), or null when none. */
function glossaryEntries(glossary: Record<string, string> | null): Record<string, string> | null {
  if (!glossary) return null;
  const entries: Record<string, string> = {};
  for (const [term, rendering] of Object.entries(glossary)) {
    const source = term.trim();
    const target = rendering.trim();
    if (!source || !target) continue;
    if (/[\u0000-\u001f\u0080-\u009f\u2028\u2029]/.test(source + target)) continue;
    entries[source] = target;
  }
  return Object.keys(entries).length ? entries : null;
}

function glossaryKey(source: string, target: string, entries: Record<string, string>): string {
  const sorted = Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hash('sha256', JSON.stringify([source, target, sorted]), 'hex');
}

function containsAnyTerm(text: string, terms: string[]): boolean {
  const lower = text.toLowerCase();
  return terms.some((term) => lower.includes(term.toLowerCase()));
}

/** deepl-node throws one class per status and keeps the status only in the message: recover it. */
function statusOf(sdk: Sdk, error: unknown): number | undefined {
  const { AuthorizationError, ConnectionError, DeepLError, GlossaryNotFoundError, QuotaExceededError, TooManyRequestsError } = sdk;
  if (error instanceof AuthorizationError) return 403;
  if (error instanceof QuotaExceededError) return 456;
  if (error instanceof TooManyRequestsError) return 429;
  if (error instanceof GlossaryNotFoundError) return 404;
  if (error instanceof ConnectionError) return undefined;
  if (error instanceof DeepLError) {
    const message = error.message;
    const unexpected = /^Unexpected status code: (\d{3})/.exec(message);
    if (unexpected) return Number(unexpected[1]);
    if (message.startsWith('Bad request')) return 400;
    if (message.startsWith('Not found')) return 404;
    if (message.startsWith('Service unavailable')) return 503;
  }
  return undefined;
}

function toEngineError(sdk: Sdk, error: unknown, totalAttempts: number, timeoutMs: number): EngineError {
  if (error instanceof EngineError) return error;
  if (error instanceof sdk.ConnectionError) {
    const code = (error.error as { code?: unknown } | undefined)?.code;
    const retried = error.shouldRetry ? totalAttempts : 1;
    if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') {
      // deepl-node's per-attempt timeout is max(timeoutMs, its backoff interval): name the configured one.
      return new EngineError(
        ENGINE,
        `deepl did not answer in time (timeout ${seconds(timeoutMs)} per attempt, ${attempts(retried)})`,
        error,
      );
    }
    return new EngineError(ENGINE, `deepl could not be reached after ${attempts(retried)}: ${shorten(error.message)}`, error);
  }
  const status = statusOf(sdk, error);
  if (status !== undefined) {
    // The client retries 429 and 5xx only; anything else was a single attempt.
    const count = status === 429 || status >= 500 ? totalAttempts : 1;
    return new EngineError(ENGINE, `deepl answered ${status} after ${attempts(count)}: ${shorten(errorMessage(error))}`, error);
  }
  return new EngineError(ENGINE, `deepl request failed: ${shorten(errorMessage(error))}`, error);
}
