// POST /v1/translate: which texts need an engine, the engine call, the cache, and the charge.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { requireConfigured, type Configured } from '../configuredEngine.js';
import { errors } from '../errors.js';
import { fromMicros } from '../money.js';
import { chargeUsage, fundedPayer, textCostMicros } from '../services/billing.js';
import { getOrganization } from '../services/organizations.js';
import { cacheKey, readCache, writeCache } from './cache.js';
import { EngineError, type EngineTranslation, type TranslationEngine } from './engine.js';
import { testModeEngine } from './engines/testStandIn.js';
import { baseLanguage, characterCount, detectLanguage } from './language.js';

export const MAX_TOTAL_CHARACTERS = 50_000;

export interface TranslateInput {
  target: string;
  text: string | string[];
  source?: string | null;
  context?: string | null;
  glossary?: Record<string, string> | null;
}

export interface TranslationOut {
  text: string;
  translated: boolean;
  detected_source_language: string | null;
}

export interface TranslateOut {
  target: string;
  translations: TranslationOut[];
  characters_billed: number;
  charged: number;
  currency: string;
}

/** The live engine, or the setting that is missing for one. */
export type ConfiguredEngine = Configured<TranslationEngine>;

export interface TranslateDeps {
  db: Knex;
  translationEngine: ConfiguredEngine;
}

interface PlannedText {
  text: string;
  source: string | null;
  /** Blank, or already in the target language: returned as is, free. */
  keep: boolean;
}

function plan(input: TranslateInput, texts: string[]): PlannedText[] {
  const target = baseLanguage(input.target);
  return texts.map((text) => {
    const source = input.source ?? detectLanguage(text);
    const keep = !text.trim() || (target !== null && baseLanguage(source) === target);
    return { text, source, keep };
  });
}

function assertWithinTotal(texts: string[]) {
  const total = texts.reduce((sum, text) => sum + characterCount(text), 0);
  if (total > MAX_TOTAL_CHARACTERS) {
    throw errors.invalid([
      {
        loc: ['body', 'text'],
        msg: `the texts have ${total} characters in all; at most ${MAX_TOTAL_CHARACTERS} are allowed`,
        type: 'maxTotalLength',
      },
    ]);
  }
}

/**
 * Translates every planned text that needs it, one engine call per source language, serving repeats
 * from the cache. Returns the translations by text index and the characters an engine translated.
 */
async function translatePending(
  db: Knex,
  engine: TranslationEngine,
  input: TranslateInput,
  planned: PlannedText[],
  useCache: boolean,
): Promise<{ results: Map<number, EngineTranslation>; charactersTranslated: number }> {
  const scope = (source: string | null) => ({
    target: input.target,
    source,
    context: input.context ?? null,
    glossary: input.glossary ?? null,
  });
  const pending = planned.map((item, index) => ({ ...item, index })).filter((item) => !item.keep);
  const keys = pending.map((item) => cacheKey(engine, scope(item.source), item.text));
  const cached = useCache ? await readCache(db, keys) : new Map<string, EngineTranslation>();

  // Distinct texts the engine must translate, grouped by source language (one engine call each).
  const misses = new Map<string, { text: string; source: string | null }>();
  pending.forEach((item, i) => {
    if (!cached.has(keys[i])) misses.set(keys[i], { text: item.text, source: item.source });
  });
  const fresh = new Map<string, EngineTranslation>();
  const groups = new Map<string | null, Array<[string, { text: string }]>>();
  for (const [key, miss] of misses) groups.set(miss.source, [...(groups.get(miss.source) ?? []), [key, miss]]);
  for (const [source, group] of groups) {
    const translations = await callEngine(engine, { ...scope(source), texts: group.map(([, miss]) => miss.text) });
    group.forEach(([key], i) => fresh.set(key, translations[i]));
  }
  if (useCache) await writeCache(db, engine, [...fresh]);

  const results = new Map<number, EngineTranslation>();
  pending.forEach((item, i) => results.set(item.index, cached.get(keys[i]) ?? fresh.get(keys[i])!));
  const charactersTranslated = [...misses.values()].reduce((sum, miss) => sum + characterCount(miss.text), 0);
  return { results, charactersTranslated };
}

async function callEngine(engine: TranslationEngine, request: Parameters<TranslationEngine['translate']>[0]) {
  try {
    return await engine.translate(request);
  } catch (err) {
    if (err instanceof EngineError) {
      throw errors.upstream(`the translation engine (${err.engine}) failed: ${err.message}; nothing was billed, try again`);
    }
    throw err;
  }
}

export async function translateTexts(
  deps: TranslateDeps,
  payer: Payer,
  input: TranslateInput,
  requestRef: string | null,
): Promise<TranslateOut> {
  const texts = Array.isArray(input.text) ? input.text : [input.text];
  assertWithinTotal(texts);
  const planned = plan(input, texts);
  const needsEngine = planned.some((item) => !item.keep);
  const live = isLive(payer);

  const org = live && needsEngine ? await fundedPayer(deps.db, payer) : await getOrganization(deps.db, payer.orgId);
  const engine = live ? requireConfigured(deps.translationEngine, 'translation') : testModeEngine;
  const { results, charactersTranslated } = needsEngine
    ? await translatePending(deps.db, engine, input, planned, live)
    : { results: new Map<number, EngineTranslation>(), charactersTranslated: 0 };

  const charge = await chargeUsage(deps.db, payer, {
    kind: 'text',
    quantity: charactersTranslated,
    costMicros: textCostMicros(org, charactersTranslated),
    reference: `translate ${texts.length} text(s) into ${input.target}`,
    requestRef,
  });

  return {
    target: input.target,
    translations: planned.map((item, index) => {
      const result = results.get(index);
      return result
        ? { text: result.text, translated: true, detected_source_language: item.source ?? result.detectedSourceLanguage }
        : { text: item.text, translated: false, detected_source_language: item.source };
    }),
    characters_billed: charge.quantity,
    charged: fromMicros(charge.costMicros),
    currency: org.currency,
  };
}
