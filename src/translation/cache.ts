// The translation cache: what an engine already translated, keyed by everything that shapes the result.
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import type { EngineRequest, EngineTranslation, TranslationEngine } from './engine.js';

type CacheScope = Omit<EngineRequest, 'texts'>;

export function cacheKey(engine: TranslationEngine, scope: CacheScope, text: string): string {
  const glossary = scope.glossary ? Object.entries(scope.glossary).sort(([a], [b]) => a.localeCompare(b)) : null;
  const parts = [engine.name, engine.model, scope.source, scope.target, scope.context, glossary, text];
  return hash('sha256', JSON.stringify(parts), 'hex');
}

export async function readCache(db: Knex, keys: string[]): Promise<Map<string, EngineTranslation>> {
  if (!keys.length) return new Map();
  const rows = await db('translation_cache').whereIn('key_hash', keys).select('key_hash', 'translation', 'detected_source_language');
  return new Map(
    rows.map((row) => [row.key_hash, { text: row.translation, detectedSourceLanguage: row.detected_source_language }]),
  );
}

/**
 * Stores fresh translations (existing keys are kept). Rows go in key order: concurrent transactions
 * that write overlapping keys then wait for each other instead of deadlocking.
 */
export async function writeCache(db: Knex, engine: TranslationEngine, entries: Array<[string, EngineTranslation]>) {
  if (!entries.length) return;
  await db('translation_cache')
    .insert(
      [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, translation]) => ({
        key_hash: key,
        engine: engine.name,
        translation: translation.text,
        detected_source_language: translation.detectedSourceLanguage,
      })),
    )
    .onConflict('key_hash')
    .ignore();
}
