// Before the fuzzing starts: organizations, keys, a call and a chat session made through the API, so
// that most requests get past authentication and reach validation and the handlers.
import type { Fixtures } from './requests.js';

/** Test keys the requests share, so no single key meets the rate limit. */
const TEST_KEYS = 6;

export async function makeFixtures(base: URL, adminToken: string): Promise<Fixtures> {
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(new URL(path, base), {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`fixtures: ${method} ${path} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const admin = (method: string, path: string, body?: unknown) => call(method, path, adminToken, body);
  const org = async (name: string) => (await admin('POST', '/admin/orgs', { name, balance: 5 })).org_id as string;
  const key = async (orgId: string, mode: 'test' | 'live', scopes?: string[]) =>
    (await admin('POST', `/admin/orgs/${orgId}/keys`, { mode, ...(scopes ? { scopes } : {}) })) as { id: string; key: string };

  const orgId = await org('Fuzz Org');
  const otherOrgId = await org('Other Fuzz Org');
  const testKeys = await Promise.all(Array.from({ length: TEST_KEYS }, async () => (await key(orgId, 'test')).key));
  const revoked = await key(orgId, 'test');
  await admin('DELETE', `/admin/keys/${revoked.id}`);
  const spareKeyIds = await Promise.all(Array.from({ length: 3 }, async () => (await key(orgId, 'test')).id));

  const newCall = async () => {
    const created = await call('POST', '/v1/calls', testKeys[0], { agent_language: 'en', customer_language: 'fi', agent_name: 'Fuzz' });
    const keyOf = (url: string) => decodeURIComponent(url.split('#k=')[1]);
    return { id: created.id as string, agentKey: keyOf(created.agent_url), customerKey: keyOf(created.customer_url) };
  };
  const newSession = async () => {
    const created = await call('POST', '/v1/sessions', testKeys[0], { agent_language: 'en', customer_language: 'fi' });
    const message = await call('POST', `/v1/sessions/${created.id}/messages`, testKeys[0], { sender: 'agent', text: 'Hello' });
    return { id: created.id as string, chatKey: decodeURIComponent(created.customer_url.split('#k=')[1]), messageId: message.id as number };
  };

  return {
    adminToken,
    testKeys,
    liveKey: (await key(orgId, 'live')).key,
    narrowKey: (await key(orgId, 'test', ['account:read'])).key,
    revokedKey: revoked.key,
    otherOrgKey: (await key(otherOrgId, 'test')).key,
    orgId,
    otherOrgId,
    call: await newCall(),
    session: await newSession(),
    spare: { call: await newCall(), session: await newSession(), keyIds: spareKeyIds },
  };
}
