// The statement that stores a support chat's messages: one INSERT of any number of messages of one
// session, in order, which first locks the session (a customer's message also marks it seen) and stores
// nothing when the session was closed meanwhile. The messages travel as one JSON value, so the statement
// is the same for any number of them (src/sessions/messages.ts groups posts into it).
import type { AnnouncedInsert } from './events.js';

/** The columns a message is given (the session's id and the row's own id aside), in the JSON's keys. */
export interface MessageValues {
  sender: string;
  author_name: string;
  kind: string;
  text: string;
  language: string | null;
  agent_text: string;
  customer_text: string;
  translations: unknown;
  request_ref: string | null;
  created_at: Date | string;
}

export function insertMessages(sessionId: string, messages: readonly MessageValues[]): AnnouncedInsert & Required<Pick<AnnouncedInsert, 'with'>> {
  const lockOpenSession = messages.some((message) => message.sender === 'customer')
    ? `UPDATE sessions SET customer_last_seen_at = now() WHERE id = ? AND status = 'open' RETURNING id, org_id, mode`
    : `SELECT id, org_id, mode FROM sessions WHERE id = ? AND status = 'open' FOR UPDATE`;
  return {
    with: { sql: `open AS (${lockOpenSession})`, values: [sessionId] },
    insert: {
      sql: `INSERT INTO messages (session_id, org_id, mode, sender, author_name, kind, text, language, agent_text, customer_text, translations, request_ref, created_at)
            SELECT open.id, open.org_id, open.mode, m.sender, m.author_name, m.kind, m.text, m.language, m.agent_text, m.customer_text, m.translations, m.request_ref, m.created_at
              FROM open, ROWS FROM (json_to_recordset(CAST(? AS json)) AS (
                     sender text, author_name text, kind text, text text, language text, agent_text text,
                     customer_text text, translations jsonb, request_ref text, created_at timestamptz
                   )) WITH ORDINALITY AS m(sender, author_name, kind, text, language, agent_text, customer_text, translations, request_ref, created_at, ord)
             ORDER BY m.ord
            RETURNING *`,
      values: [JSON.stringify(messages)],
    },
  };
}
