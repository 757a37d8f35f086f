// A page of a session's messages, as both list operations answer it: the agent's (API key) and the
// customer's (chat key), each with its own audio paths.
//
// A stored message never changes: it is only ever erased (retention, the session's deletion). So what a
// message presents as is kept, serialised, per view and id, and a page first asks the database only
// which messages it holds (their ids, read from the index); when this process has presented all of them
// before, the answer is written from what it kept, without reading, presenting or serialising the rows
// again. Otherwise the page's rows are read, presented and kept. The ids come from the statement that
// also checks the session is the caller's, so kept text is only answered to someone who may read it,
// and a message erased meanwhile is not among them, so it is never answered again (its text ages out).
import type { Knex } from 'knex';
import type { Payer } from '../auth/principal.js';
import { statement } from '../db/statement.js';
import { errors } from '../errors.js';
import { SerializedJson } from '../lib/serializedJson.js';
import { presentMessage, type MessageOut, type MessageRow } from './messages.js';
import { messageKey, pageKey, type AudioPathFor, type PresentedMessages, type PresentedView } from './presentedMessages.js';

export interface MessagePage {
  messages: MessageOut[];
  cursor: number;
}

/** Which session's messages: any session the chat key opened, or one the payer owns (404 when it does not). */
export type MessageSource = { sessionId: string; owner?: Payer };

/** A message of a page with its recording's duration (null for a text message); all null when the session has none. */
type PageRow = { [Column in keyof MessageRow]: MessageRow[Column] | null } & { voice_duration_seconds: number | null };

/** The page's messages (these columns): at most `limit`, after `after` (oldest first) or the latest (newest first). */
const pageMessages = (columns: string, after: boolean, limit: number) =>
  `SELECT ${columns} FROM messages WHERE session_id = s.id ${after ? 'AND id > ? ORDER BY id' : 'ORDER BY id DESC'} LIMIT ${limit}`;
const sessionCondition = (owned: boolean) => `s.id = ?${owned ? ' AND s.org_id = ? AND s.mode = ?' : ''}`;

/**
 * Both statements of a page take the same values: [after,] session id[, org id, mode]. No row: no such
 * session (or not the payer's).
 *
 * The limit is written into the SQL, a statement per limit asked for (at most the contract's 200): as a
 * parameter, PostgreSQL's generic plan of the prepared statement cannot know how few rows it reads and
 * costs more than a plan made for the values, so it planned every execution anew (about twice the
 * statement's own cost, measured with pgbench: 34-38k statements/s against 58-75k).
 */
function pageStatements(owned: boolean, after: boolean, limit: number) {
  return {
    /** One row: the ids of the page's messages, in the page statement's order. */
    ids: statement<{ ids: number[] }>(
      `SELECT ARRAY(${pageMessages('id', after, limit)}) AS ids FROM sessions s WHERE ${sessionCondition(owned)}`,
    ),
    /** The session joined with its page's messages and their recordings' durations; one row without a message when there are none. */
    rows: statement<PageRow>(
      `SELECT m.*, v.duration_seconds AS voice_duration_seconds
         FROM sessions s
         LEFT JOIN LATERAL (${pageMessages('*', after, limit)}) m ON true
         LEFT JOIN voice_recordings v ON v.message_id = m.id
        WHERE ${sessionCondition(owned)}
        ORDER BY m.id`,
    ),
  };
}
const pages = new Map<string, ReturnType<typeof pageStatements>>();

function pageStatementsFor(owned: boolean, after: boolean, limit: number) {
  // The contract's validator has checked it; it is written into SQL, so it is checked here too.
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`a page's limit must be a positive integer, not ${limit}`);
  const key = `${owned}:${after}:${limit}`;
  let page = pages.get(key);
  if (!page) pages.set(key, (page = pageStatements(owned, after, limit)));
  return page;
}

/**
 * Messages after `after`, oldest first; with `after` 0, the latest `limit` messages. The cursor is the
 * last id returned, or `after` when nothing is new, so polling with it never skips or repeats.
 */
export async function listMessages(
  db: Knex,
  presented: PresentedMessages,
  source: MessageSource,
  after: number,
  limit: number,
  audioPath: AudioPathFor,
): Promise<SerializedJson<MessagePage>> {
  const { sessionId, owner } = source;
  const page = pageStatementsFor(owner !== undefined, after > 0, limit);
  const values = [...(after > 0 ? [after] : []), sessionId, ...(owner ? [owner.orgId, owner.mode] : [])];
  const kept = presented.view(audioPath);

  const [held] = await page.ids.rows(db, values);
  if (!held && owner) throw errors.notFound('session');
  const ids = held ? (after > 0 ? held.ids : held.ids.reverse()) : [];
  // A client polling a page asks the same page again and again: answered as it was while its messages are the same.
  const key = pageKey(sessionId, after, limit);
  const answered = kept.pages.get(key);
  if (answered && sameIds(answered.ids, ids)) return new SerializedJson(answered.bytes);
  const known = ids.map((id) => kept.messages.get(messageKey(sessionId, id)));
  if (known.every((message) => message !== undefined)) return answer(kept, key, ids, after, known as Buffer[]);

  // Some are new to this view: the rows are the answer, even if the page has changed since its ids were read.
  const rows = await page.rows.rows(db, values);
  if (!rows.length && owner) throw errors.notFound('session');
  const messages: Buffer[] = [];
  const rowIds: number[] = [];
  for (const { voice_duration_seconds: duration, ...row } of rows) {
    if (row.id === null) continue;
    const message = presentMessage(row as MessageRow, duration === null ? undefined : { duration_seconds: duration }, audioPath);
    const serialized = ownBytes(JSON.stringify(message));
    kept.messages.set(messageKey(sessionId, row.id), serialized);
    messages.push(serialized);
    rowIds.push(row.id);
  }
  return answer(kept, key, rowIds, after, messages);
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id, i) => id === b[i]);

/** The page of these messages (`ids`, after `after`), kept as the view's answer to its key. */
function answer(kept: PresentedView, key: string, ids: readonly number[], after: number, messages: Buffer[]): SerializedJson<MessagePage> {
  const bytes = pageBytes(messages, ids.at(-1) ?? after);
  kept.pages.set(key, { ids, bytes });
  return new SerializedJson<MessagePage>(bytes);
}

/**
 * The text's UTF-8 bytes in a buffer of their own: Buffer.from would cut small ones from a shared 8 KiB
 * slab, which one kept message would keep alive whole, past the cache's bound.
 */
function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

const PAGE_START = Buffer.from('{"messages":[');
const COMMA = ','.charCodeAt(0);

/**
 * `{"messages":[...],"cursor":n}` from serialised messages, as JSON.stringify would write the page, in
 * a buffer of its own (it is kept: see ownBytes).
 */
function pageBytes(messages: Buffer[], cursor: number): Buffer {
  const end = Buffer.from(`],"cursor":${cursor}}`);
  let length = PAGE_START.length + Math.max(0, messages.length - 1) + end.length;
  for (const message of messages) length += message.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  let at = PAGE_START.copy(bytes, 0);
  for (const [i, message] of messages.entries()) {
    if (i > 0) bytes[at++] = COMMA;
    at += message.copy(bytes, at);
  }
  end.copy(bytes, at);
  return bytes;
}
