// Messages of a support chat: stored with the text as written and translations for each side.
import type { Knex } from 'knex';
import { ephemeralEvent, insertAnnounced, withEvents, type EventWriter } from '../events/log.js';
import { insertMessages } from '../db/messages.js';
import { KeyedBatches, perDatabase } from '../db/keyedBatches.js';
import type { BusEvent, NewEvent } from '../events/types.js';
import { isLive, type Payer } from '../auth/principal.js';
import { baseLanguage, detectLanguage } from '../translation/language.js';
import { releaseOnFailure, settle, type Reservation } from '../money/index.js';
import { commitTranslation, prepareTranslation, type PreparedTranslation } from '../translation/translateTexts.js';
import {
  assertOpen,
  DEFAULT_CUSTOMER_NAME,
  presentSession,
  sessionClosed,
  sessionEvent,
  type SessionRow,
} from './sessions.js';
import type { AudioPathFor } from './presentedMessages.js';
import type { Translators } from '../translation/engine.js';
import type { EventBus } from '../events/bus.js';

export type Sender = 'agent' | 'customer';

/** A stored message. Never updated, only erased: ./messagePages.ts answers pages with messages presented before. */
export interface MessageRow {
  id: number;
  session_id: string;
  sender: Sender;
  author_name: string;
  kind: 'text' | 'voice';
  text: string;
  language: string | null;
  agent_text: string;
  customer_text: string;
  translations: Record<string, string>;
  /** The Idempotency-Key reference it was posted under, if any. */
  request_ref: string | null;
  created_at: Date;
}

export interface VoiceInfo {
  duration_seconds: number;
}

export interface MessageOut {
  id: number;
  session_id: string;
  sender: Sender;
  author_name: string;
  kind: 'text' | 'voice';
  text: string;
  language: string | null;
  agent_text: string;
  customer_text: string;
  translations: Record<string, string>;
  audio_url: string | null;
  duration_seconds: number | null;
  created_at: string;
}

export const agentAudioPath: AudioPathFor = (m) => `/v1/sessions/${m.session_id}/messages/${m.id}/audio`;
export const customerAudioPath: AudioPathFor = (m) => `/chat/public/${m.session_id}/messages/${m.id}/audio`;

export function presentMessage(row: MessageRow, voice: VoiceInfo | undefined, audioPath: AudioPathFor): MessageOut {
  return {
    id: row.id,
    session_id: row.session_id,
    sender: row.sender,
    author_name: row.author_name,
    kind: row.kind,
    text: row.text,
    language: row.language,
    agent_text: row.agent_text,
    customer_text: row.customer_text,
    translations: row.translations,
    audio_url: row.kind === 'voice' && voice ? audioPath(row) : null,
    duration_seconds: voice ? voice.duration_seconds : null,
    created_at: row.created_at.toISOString(),
  };
}

export type MessageDeps = { db: Knex; events: EventBus; actingApp: string | null; engines: Translators; instanceId: string };

export interface NewMessage {
  sender: Sender;
  text: string;
  author_name?: string | null;
  /** As the caller gave it; otherwise detected, otherwise the sender's language in the session, otherwise `language_hint`. */
  language?: string | null;
  /** The language the customer's page is shown in: what a text too short to detect is taken to be in. */
  language_hint?: string | null;
}

export interface Recording {
  data: Buffer;
  mimeType: string;
  durationSeconds: number;
}

/** A voice message's recording and the reservation of its seconds, settled with the message. */
export interface VoicePart {
  recording: Recording;
  /** The recording's seconds. */
  reservation: Reservation;
  /** Money held for the transcript's translation before the transcript existed. */
  allowance: Reservation;
}

export interface PostedMessage {
  row: MessageRow;
  voice: VoiceInfo | undefined;
}

/** The other side's language, when the session knows it. */
const otherLanguage = (session: SessionRow, sender: Sender) =>
  sender === 'agent' ? session.customer_language : session.agent_language;

const authorFor = (session: SessionRow, input: NewMessage) =>
  input.author_name ?? (input.sender === 'agent' ? session.agent_name : session.customer_name ?? DEFAULT_CUSTOMER_NAME);

/**
 * The message an earlier attempt of this request (same Idempotency-Key) stored: a retry after a crash
 * between storing and answering gets it back instead of posting it twice.
 */
export async function findPostedMessage(db: Knex, requestRef: string | null): Promise<PostedMessage | undefined> {
  if (requestRef === null) return undefined;
  const row = await db<MessageRow>('messages').where({ request_ref: requestRef }).first();
  if (!row) return undefined;
  return { row, voice: (await voiceInfo(db, [row])).get(row.id) };
}

/** Posts a text message; a retry of a request that already stored it gets that message back. */
export async function postMessage(
  deps: MessageDeps,
  session: SessionRow,
  input: NewMessage,
  requestRef: string | null,
): Promise<PostedMessage> {
  assertOpen(session);
  return (await findPostedMessage(deps.db, requestRef)) ?? storeMessage(deps, session, input, requestRef);
}

/**
 * Translates the message for the other side (billed as text translation) and stores it. A customer's
 * first message in a session without `customer_language` teaches the session that language.
 *
 * The message, its recording, its events and its charges (text, and a voice message's seconds) commit
 * in one transaction, which also re-checks that the session is still open: a session closed meanwhile
 * gets 409 and pays nothing (the holds are released).
 */
export async function storeMessage(
  deps: MessageDeps,
  session: SessionRow,
  input: NewMessage,
  requestRef: string | null,
  voicePart?: VoicePart,
): Promise<PostedMessage> {
  const payer: Payer = { orgId: session.org_id, mode: session.mode };
  const ownLanguage = input.sender === 'agent' ? session.agent_language : session.customer_language;
  // The hint comes last: a detected language or the session's own knows better than a browser setting.
  let language = input.language ?? (await detectLanguage(input.text)) ?? ownLanguage ?? input.language_hint ?? null;
  const target = otherLanguage(session, input.sender);

  const translations: Record<string, string> = {};
  let translated: string | null = null;
  let translation: PreparedTranslation | null = null;
  if (target && baseLanguage(target) !== baseLanguage(language)) {
    translation = await prepareTranslation(deps, payer, { target, text: input.text, source: language }, { allowance: voicePart?.allowance });
    const [result] = translation.translations;
    if (result.translated) translated = result.text;
    language ??= result.detected_source_language;
  }
  if (language) translations[baseLanguage(language) ?? language] = input.text;
  if (translated !== null && target) translations[baseLanguage(target) ?? target] = translated;

  const learnsCustomerLanguage = input.sender === 'customer' && !session.customer_language && language !== null;
  const sides = {
    agent_text: input.sender === 'agent' ? input.text : translated ?? input.text,
    customer_text: input.sender === 'customer' ? input.text : translated ?? input.text,
  };

  const voice = voicePart ? { duration_seconds: voicePart.recording.durationSeconds } : undefined;
  const prospective: Omit<MessageRow, 'id'> = {
    session_id: session.id,
    sender: input.sender,
    author_name: authorFor(session, input),
    kind: voicePart ? 'voice' : 'text',
    text: input.text,
    language,
    ...sides,
    translations,
    request_ref: requestRef,
    // Set here, not by the database, so that the event announcing the message can be made before it is stored.
    created_at: new Date(),
  };
  const announce = (row: MessageRow) => ({
    ...sessionEvent(session, 'message.created', presentMessage(row, voice, agentAudioPath)),
    messageId: row.id,
  });
  // Nothing to settle (test mode, or nothing translated) and nothing else to store: one statement.
  const charges = (translation !== null && isLive(payer)) || voicePart !== undefined;
  if (!charges && !learnsCustomerLanguage) {
    const stored = await insertOpenAnnounced(deps.db, { row: prospective, announce, app: deps.actingApp });
    deps.events.publish(stored.event);
    return { row: stored.row, voice };
  }

  const reservations = translation ? [translation.reservation] : [];
  return releaseOnFailure(deps.db, reservations, () =>
    withEvents(deps, async (trx, emit, announced) => {
      if (learnsCustomerLanguage) {
        // Announced before the message, which is in that language.
        const [updated] = await trx<SessionRow>('sessions')
          .where({ id: session.id, status: 'open' })
          .update({ customer_language: language })
          .returning('*');
        if (!updated) throw sessionClosed();
        await emit(sessionEvent(updated, 'session.updated', presentSession(updated)));
      }
      const row = await storeAnnounced(trx, deps.actingApp, prospective, announce, voicePart?.recording, emit, announced);
      // Charges last: the organization's row stays locked for the shortest time.
      const reference = `message ${row.id}`;
      const appId = deps.actingApp;
      if (translation) await commitTranslation(trx, translation, { reference, requestRef, appId });
      if (voicePart) {
        await settle(trx, voicePart.reservation, { reference, requestRef: requestRef && `${requestRef}:voice`, appId });
        // A transcript that needed no translation leaves its allowance unused: it is freed.
        if (!translation) await settle(trx, voicePart.allowance, { reference, requestRef, appId }, 0);
      }
      return { row, voice };
    }),
  );
}

/** The INSERT of messages of one session, in order (../db/messages.ts). */
const insertMessagesOf = (messages: ReadonlyArray<Omit<MessageRow, 'id'>>) =>
  insertMessages(
    messages[0]!.session_id,
    messages.map(({ session_id: _, ...message }) => message),
  );

interface ProspectiveMessage {
  row: Omit<MessageRow, 'id'>;
  announce: (row: MessageRow) => NewEvent;
  app: string | null;
}
type StoredMessage = { row: MessageRow; event: BusEvent };

/** Messages of one session and their events in one statement; none (undefined) when the session was closed meanwhile. */
const insertAnnouncedMessages = (db: Knex, messages: ProspectiveMessage[]) =>
  insertAnnounced<MessageRow>(db, insertMessagesOf(messages.map((message) => message.row)), messages);

/**
 * Messages posted outside a transaction, grouped per session while one of its statements is in flight
 * (../db/keyedBatches.ts): posts to one busy session share the lock of its row and a commit.
 */
const SESSION_BATCH_MAX = 64;
const batchesOf = perDatabase(
  (db) =>
    new KeyedBatches<ProspectiveMessage, StoredMessage | undefined>(
      async (messages) => (await insertAnnouncedMessages(db, messages)) ?? messages.map(() => undefined),
      SESSION_BATCH_MAX,
    ),
);

/** The message and its event in one statement (with others of its session, outside a transaction); 409 when the session was closed meanwhile. */
async function insertOpenAnnounced(db: Knex, message: ProspectiveMessage): Promise<StoredMessage> {
  const stored = db.isTransaction
    ? (await insertAnnouncedMessages(db, [message]))?.[0]
    : await batchesOf(db).submit(message.row.session_id, message);
  if (!stored) throw sessionClosed();
  return stored;
}

/**
 * Stores a message and its event in the caller's transaction: in one statement, as a text message
 * without charges is stored; a voice message's event names its recording's path, which needs the
 * message's id, so its recording and event follow the message.
 */
async function storeAnnounced(
  trx: Knex.Transaction,
  app: string | null,
  prospective: Omit<MessageRow, 'id'>,
  announce: (row: MessageRow) => NewEvent,
  recording: Recording | undefined,
  emit: (event: NewEvent) => Promise<void>,
  announced: (event: BusEvent) => void,
): Promise<MessageRow> {
  if (!recording) {
    const stored = await insertOpenAnnounced(trx, { row: prospective, announce, app });
    announced(stored.event);
    return stored.row;
  }
  const message = insertMessagesOf([prospective]);
  const {
    rows: [row],
  } = await trx.raw<{ rows: MessageRow[] }>(`WITH ${message.with.sql} ${message.insert.sql}`, [
    ...message.with.values,
    ...message.insert.values,
  ] as Knex.RawBinding[]);
  if (!row) throw sessionClosed();
  await trx('voice_recordings').insert({
    message_id: row.id,
    mime_type: recording.mimeType,
    duration_seconds: recording.durationSeconds,
    data: recording.data,
  });
  await emit(announce(row));
  return row;
}

async function voiceInfo(db: Knex, rows: MessageRow[]): Promise<Map<number, VoiceInfo>> {
  const ids = rows.filter((row) => row.kind === 'voice').map((row) => row.id);
  if (!ids.length) return new Map();
  const recordings = await db('voice_recordings').whereIn('message_id', ids).select('message_id', 'duration_seconds');
  return new Map(recordings.map((r) => [r.message_id, { duration_seconds: r.duration_seconds }]));
}

export async function recordingOf(db: Knex, sessionId: string, messageId: number) {
  return db('voice_recordings')
    .join('messages', 'messages.id', 'voice_recordings.message_id')
    .where({ 'messages.session_id': sessionId, 'messages.id': messageId })
    .first('voice_recordings.mime_type', 'voice_recordings.data');
}

export function announceTyping(
  { events, actingApp }: Pick<EventWriter, 'events' | 'actingApp'>,
  session: SessionRow,
  sender: Sender,
  authorName: string | null | undefined,
) {
  assertOpen(session);
  const author = authorName ?? (sender === 'agent' ? session.agent_name : session.customer_name ?? DEFAULT_CUSTOMER_NAME);
  events.publish(
    ephemeralEvent(sessionEvent(session, 'session.typing', { session_id: session.id, sender, author_name: author }), actingApp),
  );
}
