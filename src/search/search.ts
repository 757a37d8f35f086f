// Full-text search across calls' transcripts and chats' messages of one organization and mode
// (DESIGN.md §12): PostgreSQL's own search over the generated `search` columns (configuration 'simple',
// so every language matches its own words), newest first, with the matched words marked in a snippet.
import type { Knex } from 'knex';
import type { Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import type { components } from '../generated/api.js';

export type SearchKind = 'call' | 'session';
export type SearchOut = components['schemas']['SearchOut'];
type Hit = SearchOut['hits'][number];

/** Where a page ends: the last hit's time (as PostgreSQL writes it, to the microsecond), kind and item id. */
interface Position {
  at: string;
  kind: SearchKind;
  item: number;
}

const encode = (position: Position) => Buffer.from(JSON.stringify([position.at, position.kind, position.item])).toString('base64url');

function decode(cursor: string): Position {
  try {
    const [at, kind, item] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && (kind === 'call' || kind === 'session') && Number.isSafeInteger(item)) return { at, kind, item };
  } catch {
    // answered below
  }
  throw errors.invalid([{ loc: ['query', 'after'], msg: 'not a cursor this search gave (next)', type: 'invalid_cursor' }]);
}

const TSQUERY = "websearch_to_tsquery('simple', ?)";

/**
 * Hits of one kind: in the payer's organization and mode, matching, before the cursor, newest first. Each row
 * carries its organization and mode, so the newest rows are walked through their own index, one organization's
 * only, with no join to their calls or sessions.
 */
function kindQuery(db: Knex, kind: SearchKind, payer: Payer, q: string, limit: number, after: Position | null) {
  const [table, ownerKey, rank] = kind === 'call' ? (['call_utterances', 'call_id', 1] as const) : (['messages', 'session_id', 0] as const);
  const query = db
    .from({ x: table })
    .select(db.raw(`? as kind, x.${ownerKey} as id, x.id as item, x.created_at, ? as rank`, [kind, rank]))
    .where({ 'x.org_id': payer.orgId, 'x.mode': payer.mode })
    // The query as a constant, not a joined value: the planner then estimates how many rows hold its words
    // (the column's statistics), and walks the newest rows for common words instead of fetching every match.
    .whereRaw(`x.search @@ ${TSQUERY}`, [q])
    .orderBy([
      { column: 'x.created_at', order: 'desc' },
      { column: 'x.id', order: 'desc' },
    ])
    .limit(limit);
  if (after) query.whereRaw('(x.created_at, ?::int, x.id) < (?::timestamptz, ?::int, ?::bigint)', [rank, after.at, after.kind === 'call' ? 1 : 0, after.item]);
  return query;
}

/**
 * A page of hits for `q` (web search syntax: words, "quoted phrases", -excluded, or), of the kinds given,
 * newest first, at most `limit`, after the cursor `after`; `next` asks for the page after it.
 */
export async function search(db: Knex, payer: Payer, q: string, kinds: readonly SearchKind[], limit: number, after?: string): Promise<SearchOut> {
  const position = after ? decode(after) : null;
  const parts = kinds.map((kind) => kindQuery(db, kind, payer, q, limit, position).toSQL());
  // Snippets (ts_headline reads the whole text) are made for the page's hits only.
  const sql = `with page as (select * from (${parts.map((part) => `(${part.sql})`).join(' union all ')}) kinds order by created_at desc, rank desc, item desc limit ${limit})
    select page.kind, page.id, page.item, page.created_at, page.created_at::text as at,
      ts_headline('simple', coalesce(u.text || ' / ' || u.translation_text, m.text), ${TSQUERY},
        'StartSel=<mark>, StopSel=</mark>, MaxWords=35, MinWords=15') as snippet
    from page
      left join call_utterances u on page.kind = 'call' and u.id = page.item
      left join messages m on page.kind = 'session' and m.id = page.item
    order by page.created_at desc, page.rank desc, page.item desc`;
  const { rows } = await db.transaction(async (trx) => {
    // PostgreSQL's default cost of a random page read (4, for spinning disks) makes the planner walk the
    // newest rows even for a word in a few hundred of them, visiting tens of thousands; priced as the cached
    // reads they are, it fetches a rare word's matches through the GIN index instead (half the work over
    // bench:search's words, docs/performance.md), and still walks for common words.
    await trx.raw('SET LOCAL random_page_cost = 1.1');
    return trx.raw<{ rows: Array<{ kind: SearchKind; id: string; item: string | number; created_at: Date; at: string; snippet: string }> }>(sql, [
      ...parts.flatMap((part) => part.bindings),
      q,
    ]);
  });
  const hits: Hit[] = rows.map((row) =>
    row.kind === 'call'
      ? { kind: 'call', id: row.id, utterance_id: Number(row.item), snippet: row.snippet, created_at: row.created_at.toISOString() }
      : { kind: 'session', id: row.id, message_id: Number(row.item), snippet: row.snippet, created_at: row.created_at.toISOString() },
  );
  const last = rows.at(-1);
  return { hits, next: rows.length === limit && last ? encode({ at: last.at, kind: last.kind, item: Number(last.item) }) : null };
}

/** The kinds a principal may search: each only with its read scope. */
export function searchableKinds(scopes: readonly string[], kind?: SearchKind): SearchKind[] {
  const allowed = (['call', 'session'] as const).filter((k) => scopes.includes(k === 'call' ? 'calls:read' : 'sessions:read'));
  if (!kind) return allowed;
  if (!allowed.includes(kind)) throw errors.missingScope(kind === 'call' ? 'calls:read' : 'sessions:read');
  return [kind];
}
