// POST /v1/translate: which texts need an engine, the engine call, the cache, and the charge.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import {
  fromMicros,
  fundedPayer,
  releaseOnFailure,
  reserve,
  settle,
  type ChargeRefs,
  type Reservation,
} from '../money/index.js';
import { organizationTerms } from '../db/organizations.js';
import { cacheKey, readCache, writeCache } from './cache.js';
import { EngineError, type EngineTranslation, type TranslationEngine } from './engine.js';
import { baseLanguage, characterCount, detectLanguage } from './language.js';
import type { Translators } from './engine.js';

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

export type TranslateDeps = { db: Knex; actingApp: string | null; engines: Translators; instanceId: string };

interface PlannedText {
  text: string;
  source: string | null;
  /** Blank, or already in the target language: returned as is, free. */
  keep: boolean;
}

async function plan(input: TranslateInput, texts: string[]): Promise<PlannedText[]> {
  const target = baseLanguage(input.target);
  return Promise.all(
    texts.map(async (text) => {
      const source = input.source ?? (await detectLanguage(text));
      const keep = !text.trim() || (target !== null && baseLanguage(source) === target);
      return { text, source, keep };
    }),
  );
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

interface PendingText {
  index: number;
  key: string;
}

/** What the engine must translate after the cache: distinct texts by cache key, and their characters. */
interface Lookup {
  pending: PendingText[];
  cached: Map<string, EngineTranslation>;
  misses: Map<string, { text: string; source: string | null }>;
  characters: number;
}

const scopeOf = (input: TranslateInput, source: string | null) => ({
  target: input.target,
  source,
  context: input.context ?? null,
  glossary: input.glossary ?? null,
});

async function lookUp(
  db: Knex,
  engine: TranslationEngine,
  input: TranslateInput,
  planned: PlannedText[],
  useCache: boolean,
): Promise<Lookup> {
  const pending = planned.flatMap((item, index) =>
    item.keep ? [] : [{ index, key: cacheKey(engine, scopeOf(input, item.source), item.text) }],
  );
  const cached = useCache ? await readCache(db, pending.map((item) => item.key)) : new Map<string, EngineTranslation>();
  const misses = new Map<string, { text: string; source: string | null }>();
  for (const item of pending) {
    if (!cached.has(item.key)) misses.set(item.key, { text: planned[item.index].text, source: planned[item.index].source });
  }
  const characters = [...misses.values()].reduce((sum, miss) => sum + characterCount(miss.text), 0);
  return { pending, cached, misses, characters };
}

/** The misses, one engine call per source language. */
async function translateMisses(engine: TranslationEngine, input: TranslateInput, lookup: Lookup) {
  const fresh = new Map<string, EngineTranslation>();
  const groups = new Map<string | null, Array<[string, { text: string }]>>();
  for (const [key, miss] of lookup.misses) groups.set(miss.source, [...(groups.get(miss.source) ?? []), [key, miss]]);
  for (const [source, group] of groups) {
    const translations = await callEngine(engine, { ...scopeOf(input, source), texts: group.map(([, miss]) => miss.text) });
    group.forEach(([key], i) => fresh.set(key, translations[i]));
  }
  return fresh;
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

/**
 * A translation done but not yet paid for: the engine's results, the reservation that holds their
 * cost, and what goes into the cache. `commitTranslation` stores and charges it in the caller's
 * transaction; until then (or if that fails) the caller releases the reservation.
 */
export interface PreparedTranslation {
  target: string;
  translations: TranslationOut[];
  currency: string;
  reservation: Reservation;
  /** Characters an engine translated: what is charged (0 in test mode). */
  characters: number;
  engine: TranslationEngine;
  /** Fresh engine results to cache (live mode only). */
  fresh: Array<[string, EngineTranslation]>;
}

export interface PrepareOptions {
  /**
   * Money the request already holds for this translation (a voice message holds its transcript's
   * translation with its seconds, before transcribing): used instead of a new reservation and of the
   * empty-balance gate, which the request passed already. The exact characters are charged from it.
   */
  allowance?: Reservation;
}

/**
 * Plans the texts, refuses an empty prepaid balance (402) before anything else, looks the texts up in
 * the cache, reserves the cost of what an engine must translate (402 when the available balance cannot
 * cover it), and calls the engine. A failure here releases the reservation.
 */
export async function prepareTranslation(
  deps: TranslateDeps,
  payer: Payer,
  input: TranslateInput,
  options: PrepareOptions = {},
): Promise<PreparedTranslation> {
  const texts = Array.isArray(input.text) ? input.text : [input.text];
  assertWithinTotal(texts);
  const planned = await plan(input, texts);
  const needsEngine = planned.some((item) => !item.keep);
  const live = isLive(payer);

  const gate = needsEngine && !options.allowance;
  const org = gate ? await fundedPayer(deps.db, payer) : await organizationTerms(deps.db, payer.orgId);
  const engine = deps.engines.translation(payer.mode);
  const lookup = await lookUp(deps.db, engine, input, planned, live);
  const reservation = options.allowance ?? (await reserve(deps.db, deps.instanceId, payer, org, 'text', lookup.characters));
  const fresh = await releaseOnFailure(deps.db, [reservation], () => translateMisses(engine, input, lookup));

  const results = new Map<number, EngineTranslation>();
  for (const item of lookup.pending) results.set(item.index, lookup.cached.get(item.key) ?? fresh.get(item.key)!);
  return {
    target: input.target,
    translations: planned.map((item, index) => {
      const result = results.get(index);
      return result
        ? { text: result.text, translated: true, detected_source_language: item.source ?? result.detectedSourceLanguage }
        : { text: item.text, translated: false, detected_source_language: item.source };
    }),
    currency: org.currency,
    reservation,
    characters: live ? lookup.characters : 0,
    engine,
    fresh: live ? [...fresh] : [],
  };
}

/** Caches the engine's results and charges their characters, in the transaction of what they are for. */
export async function commitTranslation(
  trx: Knex.Transaction,
  prepared: PreparedTranslation,
  refs: ChargeRefs,
): Promise<TranslateOut> {
  await writeCache(trx, prepared.engine, prepared.fresh);
  return answerOf(prepared, await settle(trx, prepared.reservation, refs, prepared.characters));
}

function answerOf(prepared: PreparedTranslation, billed: { quantity: number; costMicros: number }): TranslateOut {
  return {
    target: prepared.target,
    translations: prepared.translations,
    characters_billed: billed.quantity,
    charged: fromMicros(billed.costMicros),
    currency: prepared.currency,
  };
}

/** POST /v1/translate: the translation, its cache entries and its charge commit together. */
export async function translateTexts(
  deps: TranslateDeps,
  payer: Payer,
  input: TranslateInput,
  requestRef: string | null,
): Promise<TranslateOut> {
  const prepared = await prepareTranslation(deps, payer, input);
  // Test mode stores and bills nothing (no cache entries, no charge): no transaction to open.
  if (!isLive(payer)) return answerOf(prepared, { quantity: 0, costMicros: 0 });
  const texts = Array.isArray(input.text) ? input.text.length : 1;
  return releaseOnFailure(deps.db, [prepared.reservation], () =>
    deps.db.transaction((trx) =>
      commitTranslation(trx, prepared, { reference: `translate ${texts} text(s) into ${input.target}`, requestRef, appId: deps.actingApp }),
    ),
  );
}
