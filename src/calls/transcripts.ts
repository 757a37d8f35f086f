// Call transcripts (DESIGN.md §12): the utterances the media plane hands over as they complete, read back
// as JSON pages, WebVTT or text, erased on request or when the call's retention ends.
import type { Knex } from 'knex';
import { insertAnnounced, serverMade, withEvents, type EventWriter } from '../events/log.js';
import { callEvent, nameOf, type CallRow } from './calls.js';
import type { Utterance } from './utterance.js';
import type { Side } from './side.js';
import type { components } from '../generated/api.js';

export type UtteranceOut = components['schemas']['Utterance'];
export type TranscriptOut = components['schemas']['TranscriptOut'];

interface UtteranceRow {
  id: number;
  call_id: string;
  side: Side;
  speaker: string;
  language: string;
  text: string;
  translation_language: string;
  translation_text: string;
  started_at: Date;
  ended_at: Date;
  offset_ms: number;
}

export const presentUtterance = (row: UtteranceRow): UtteranceOut => ({
  id: Number(row.id),
  side: row.side,
  speaker: row.speaker,
  language: row.language,
  text: row.text,
  translation: { language: row.translation_language, text: row.translation_text },
  started_at: row.started_at.toISOString(),
  ended_at: row.ended_at.toISOString(),
  offset_ms: row.offset_ms,
});

const UTTERANCE_COLUMNS = 'call_id, side, speaker, language, text, translation_language, translation_text, started_at, ended_at, offset_ms';

/** A completed utterance of a call, with the call's row as its room had it when the utterance was handed over. */
export interface CallUtterance {
  call: CallRow;
  utterance: Utterance;
}

function rowOf({ call, utterance }: CallUtterance): Omit<UtteranceRow, 'id'> {
  return {
    call_id: call.id,
    side: utterance.speaker,
    speaker: nameOf(call, utterance.speaker) ?? utterance.speaker,
    language: utterance.language,
    text: utterance.text,
    translation_language: utterance.translation.language,
    translation_text: utterance.translation.text,
    started_at: new Date(utterance.startedAt),
    ended_at: new Date(utterance.endedAt),
    offset_ms: Math.max(0, utterance.startedAt - call.created_at.getTime()),
  };
}

/**
 * Keeps completed utterances, in order, and tells each call's organization, in one statement (the
 * utterances, their events and the events' webhook deliveries; no transaction around it): these come
 * every few seconds from every side of every live call, and those handed over while the statement before
 * them was being stored, of whatever calls, share a statement and its commit. Nothing for a call that
 * keeps no transcript (whether it keeps one is fixed when it is created, as are its organization and mode).
 */
export async function storeUtterances(deps: Pick<EventWriter, 'db' | 'events'>, utterances: readonly CallUtterance[]): Promise<void> {
  const kept = utterances.filter(({ call }) => call.transcript);
  if (!kept.length) return;
  const rows = kept.map(rowOf);
  const stored = await insertAnnounced<UtteranceRow>(
    deps.db,
    {
      insert: {
        sql: `INSERT INTO call_utterances (org_id, mode, ${UTTERANCE_COLUMNS})
              SELECT u.org_id, u.mode, u.call_id, u.side, u.speaker, u.language, u.text, u.translation_language, u.translation_text, u.started_at, u.ended_at, u.offset_ms
                FROM ROWS FROM (json_to_recordset(CAST(? AS json)) AS (
                       org_id text, mode text, call_id text, side text, speaker text, language text, text text, translation_language text,
                       translation_text text, started_at timestamptz, ended_at timestamptz, offset_ms integer
                     )) WITH ORDINALITY AS u(org_id, mode, call_id, side, speaker, language, text, translation_language, translation_text, started_at, ended_at, offset_ms, ord)
               ORDER BY u.ord
              RETURNING id, ${UTTERANCE_COLUMNS}`,
        values: [JSON.stringify(rows.map((row, i) => ({ org_id: kept[i]!.call.org_id, mode: kept[i]!.call.mode, ...row })))],
      },
      messages: false,
    },
    kept.map(({ call }, i) => ({ row: rows[i]!, announce: (row) => callEvent(call, 'call.utterance', { call_id: call.id, ...presentUtterance(row) }), app: null })),
  );
  for (const { event } of stored ?? []) deps.events.publish(event);
}

/**
 * The call ended and its last utterance is stored: `call.transcript.ready`, once per call (several
 * instances, and housekeeping, may each say so: the first to mark the call announces it), for calls
 * that keep a transcript. True when this call announced it.
 */
export async function transcriptReady(deps: Pick<EventWriter, 'db' | 'events'>, callId: string): Promise<boolean> {
  return withEvents(serverMade(deps), async (trx, emit) => {
    const [call] = await trx<CallRow>('calls')
      .where({ id: callId, status: 'ended', transcript: true })
      .whereNull('transcript_ready_at')
      .update({ transcript_ready_at: trx.fn.now() as never })
      .returning('*');
    if (!call) return false;
    const [{ count }] = await trx('call_utterances').where({ call_id: callId }).count({ count: '*' });
    await emit(callEvent(call, 'call.transcript.ready', { call_id: call.id, status: 'ended', utterances: Number(count) }));
    return true;
  });
}

/**
 * How long after its end a call waits for the instance whose room it had to say its transcript is
 * ready (that instance stores the last utterances first); after it, housekeeping says so. Well beyond
 * the time an instance takes to be known dead (src/deployment/instances.ts).
 */
export const TRANSCRIPT_READY_GRACE_MS = 5 * 60_000;
/** Calls announced per housekeeping pass at most; the rest wait for the next. */
const OVERDUE_BATCH = 500;

/**
 * `call.transcript.ready` for the calls that ended between `sinceMs` and the grace period ago and
 * that no instance said were ready: the one holding the room died, or Redis was away when the call
 * ended (src/calls/media/plane.ts). Returns how many this pass announced.
 */
export async function announceOverdueTranscripts(deps: Pick<EventWriter, 'db' | 'events'>, sinceMs: number, nowMs: number): Promise<number> {
  const overdue: string[] = await deps
    .db('calls')
    .where({ status: 'ended', transcript: true })
    .whereNull('transcript_ready_at')
    .andWhere('ended_at', '>=', new Date(sinceMs))
    .andWhere('ended_at', '<', new Date(nowMs - TRANSCRIPT_READY_GRACE_MS))
    .orderBy('ended_at')
    .limit(OVERDUE_BATCH)
    .pluck('id');
  let announced = 0;
  for (const callId of overdue) if (await transcriptReady(deps, callId)) announced++;
  return announced;
}

const languagesOf = (call: CallRow) => ({ agent: call.agent_language, customer: call.customer_language });

/** Utterances after the id `after`, oldest first, at most `limit`; the cursor is the last id returned (or `after`). */
export async function transcriptPage(db: Knex, call: CallRow, after: number, limit: number): Promise<TranscriptOut> {
  const rows = await db<UtteranceRow>('call_utterances').where({ call_id: call.id }).andWhere('id', '>', after).orderBy('id').limit(limit);
  const utterances = rows.map(presentUtterance);
  return { call_id: call.id, status: call.status, languages: languagesOf(call), utterances, cursor: utterances.at(-1)?.id ?? after };
}

/** A rendering of the whole transcript: every utterance, in `side`'s language when one is named, else both. */
export type TranscriptFormat = 'vtt' | 'txt';

export async function renderTranscript(db: Knex, call: CallRow, format: TranscriptFormat, side?: Side): Promise<string> {
  const rows = (await db<UtteranceRow>('call_utterances').where({ call_id: call.id }).orderBy('id')).map(presentUtterance);
  const lines = rows.map((utterance) => ({ utterance, text: linesOf(utterance, side) }));
  if (format === 'txt') {
    return lines.map(({ utterance, text }) => `[${clock(utterance.offset_ms, false)}] ${utterance.speaker} (${utterance.side}): ${text.join('\n    ')}\n`).join('');
  }
  const cues = lines.map(({ utterance, text }, index) => {
    const end = utterance.offset_ms + Math.max(0, Date.parse(utterance.ended_at) - Date.parse(utterance.started_at));
    return `${index + 1}\n${clock(utterance.offset_ms, true)} --> ${clock(end, true)}\n<v ${cueText(utterance.speaker)}>${text.map(cueText).join('\n')}\n`;
  });
  return ['WEBVTT\n', ...cues].join('\n');
}

/** What a line shows: in `side`'s language (what that side said, or heard), or as said and as heard. */
function linesOf(utterance: UtteranceOut, side?: Side): string[] {
  if (side) return [utterance.side === side ? utterance.text : utterance.translation.text];
  return [utterance.text, utterance.translation.text].filter(Boolean);
}

/** WebVTT cue text may not hold `-->`, and `<` and `&` start markup. */
const cueText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');

/** hh:mm:ss.ttt (WebVTT) or mm:ss.t (text). */
function clock(ms: number, vtt: boolean): string {
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const two = (n: number) => String(n).padStart(2, '0');
  if (vtt) return `${two(hours)}:${two(minutes)}:${seconds.toFixed(3).padStart(6, '0')}`;
  return `${hours ? `${hours}:` : ''}${two(minutes)}:${seconds.toFixed(1).padStart(4, '0')}`;
}

/** Erases the call's utterances and the events that carried their words, for good. */
export async function eraseTranscript(db: Knex, callId: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('call_utterances').where({ call_id: callId }).del();
    await trx('events').where({ call_id: callId, type: 'call.utterance' }).del();
  });
}

/** Erases utterances older than their call's `retention_days`, and the events that carried them. */
export async function eraseExpiredTranscripts(db: Knex): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: Array<{ id: number | string; call_id: string }> }>(
      `delete from call_utterances u using calls c
        where c.id = u.call_id and c.retention_days is not null
          and u.created_at < now() - make_interval(days => c.retention_days)
        returning u.id, u.call_id`,
    );
    if (!rows.length) return 0;
    await trx('events')
      .whereIn('call_id', [...new Set(rows.map((row) => row.call_id))])
      .andWhere({ type: 'call.utterance' })
      .whereRaw(`(payload->'data'->>'id')::bigint = any(?::bigint[])`, [rows.map((row) => String(row.id))])
      .del();
    return rows.length;
  });
}
