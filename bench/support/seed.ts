// What a benchmark needs on a fresh server, made as a user would: through the admin API and the public
// API. An organization with a balance and a test key (test mode is free: translations are the stand-in),
// a chat session to post messages to (and 16 more to spread posts over), one holding 20 messages to
// list, and a call to read.
import { newSecret } from '../../src/lib/ids.js';

export interface Seed {
  key: string;
  /** A session the message-post rows write to. */
  postSessionId: string;
  /** Sessions a message-post row spreads its posts over (one per wrk connection). */
  spreadSessionIds: string[];
  /** A session holding exactly LISTED_MESSAGES messages. */
  listSessionId: string;
  callId: string;
}

export const LISTED_MESSAGES = 20;
/** As many as wrk's connections by default. */
export const SPREAD_SESSIONS = 16;
/** The customer's message the post rows send (the contract's example: detected and translated). */
export const MESSAGE_BODY = { sender: 'customer', text: 'Hei, tilaukseni on myöhässä.', author_name: 'Matti' };

export const newAdminToken = () => newSecret('adm_bench_');

export async function seed(baseUrl: string, adminToken: string): Promise<Seed> {
  const post = async (path: string, token: string, body: unknown) => {
    const res = await fetch(baseUrl + path, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`seeding: POST ${path} answered ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };
  const org = await post('/admin/orgs', adminToken, { name: 'Bench', balance: 1000 });
  const { key } = await post(`/admin/orgs/${org.org_id}/keys`, adminToken, { mode: 'test' });
  const session = { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice', customer_name: 'Matti' };
  const postSession = await post('/v1/sessions', key, session);
  const listSession = await post('/v1/sessions', key, session);
  for (let i = 0; i < LISTED_MESSAGES; i++) await post(`/v1/sessions/${listSession.id}/messages`, key, MESSAGE_BODY);
  const spreadSessionIds: string[] = [];
  for (let i = 0; i < SPREAD_SESSIONS; i++) spreadSessionIds.push((await post('/v1/sessions', key, session)).id);
  const call = await post('/v1/calls', key, { agent_language: 'en', customer_language: 'fi', video: false });
  return { key, postSessionId: postSession.id, spreadSessionIds, listSessionId: listSession.id, callId: call.id };
}
