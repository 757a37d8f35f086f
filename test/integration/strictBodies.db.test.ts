// Request bodies are strict, as Stripe's are: a field an operation does not take is refused with 422
// naming it (never silently dropped), and a body's sizes are counted before its values are checked, so
// a body built to be big is refused with that one problem.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '../../src/http/contract.js';
import { operationTable } from '../../handlers/operations.js';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

interface Issue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

describe(`strict request bodies (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let orgId: string;
  let call: { id: string; callKey: string };
  let session: { id: string; chatKey: string };

  const json = (path: string, body: unknown, headers: Record<string, string> = { Authorization: `Bearer ${key}` }, method = 'POST') =>
    fetch(`${t.url}${path}`, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const issuesOf = async (res: Response): Promise<Issue[]> => {
    expect(res.status).toBe(422);
    return (await res.json()).detail;
  };
  const callCount = async () => (await (await fetch(`${t.url}/v1/calls?limit=100`, { headers: { Authorization: `Bearer ${key}` } })).json()).length;

  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ balance: 10 });
    key = (await t.createKey(orgId, 'test')).key;
    const createdCall = await (await json('/v1/calls', { agent_language: 'en', customer_language: 'fi' })).json();
    call = { id: createdCall.id, callKey: createdCall.agent_url.split('#k=')[1] };
    const createdSession = await (await json('/v1/sessions', { agent_language: 'en', customer_language: 'fi' })).json();
    session = { id: createdSession.id, chatKey: createdSession.customer_url.split('#k=')[1] };
  });
  afterAll(() => t?.stop());

  it('refuses a field it does not take on every JSON and multipart operation of the contract, naming it', async () => {
    const credentials: Record<string, Record<string, string> | null> = {
      api: { Authorization: `Bearer ${key}` },
      admin: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      callKey: { 'X-Call-Key': call.callKey },
      chatKey: { 'X-Chat-Key': session.chatKey },
      // OAuth's forms ignore what they do not know (RFC 6749 3.2): checked below.
      oauthClient: null,
      none: null,
    };
    const ids: Record<string, string> = { call_id: call.id, session_id: session.id, org_id: orgId };
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const op of operationTable) {
      const content = contract.paths[op.path][op.method].requestBody?.content ?? {};
      const headers = credentials[op.auth];
      if (!headers || !(content['application/json'] || content['multipart/form-data'])) continue;
      const url = `${t.url}${op.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? 'x_unknown')}`;
      let res: Response;
      if (content['application/json']) {
        res = await fetch(url, { method: op.method.toUpperCase(), headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"unexpected_field":1}' });
      } else {
        const form = new FormData();
        form.append('unexpected_field', '1');
        res = await fetch(url, { method: op.method.toUpperCase(), headers, body: form });
      }
      checked.push(op.operationId);
      const body = await res.json();
      const named = res.status === 422 && Array.isArray(body.detail) && body.detail.some((issue: Issue) => issue.type === 'unknown_field' && issue.loc.join('.') === 'body.unexpected_field');
      if (!named) wrong.push(`${op.operationId}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
    // The admin API, the public call and chat endpoints and uploads are all among them.
    expect(checked).toEqual(expect.arrayContaining(['createCall', 'adminCreateOrg', 'updateCallSide', 'postChatMessage', 'createVoiceMessage', 'translate']));
  });

  it("names the field a typo meant, lists it beside the body's other problems, and creates nothing", async () => {
    const before = await callCount();
    expect(await issuesOf(await json('/v1/calls', { agent_language: 'en', custmer_language: 'fi' }))).toEqual([
      { loc: ['body', 'custmer_language'], msg: 'unknown field; did you mean customer_language?', type: 'unknown_field' },
    ]);
    const issues = await issuesOf(await json('/v1/calls', { agnet_language: 'en', video: 'yes', colour: 'red' }));
    expect(issues).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'agnet_language'], msg: 'unknown field; did you mean agent_language?', type: 'unknown_field' },
        expect.objectContaining({ loc: ['body', 'colour'], type: 'unknown_field', msg: expect.stringMatching(/^unknown field; this object takes agent_language, .*video, transcript, retention_days$/) }),
        expect.objectContaining({ loc: ['body', 'agent_language'], type: 'required' }),
        expect.objectContaining({ loc: ['body', 'video'], type: 'type' }),
      ]),
    );
    expect(issues).toHaveLength(4);
    expect(await callCount()).toBe(before);
    // The admin API's bodies too: a misspelt balance is not an organization with none.
    expect(await issuesOf(await json('/admin/orgs', { name: 'Acme', balanse: 5 }, { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }))).toEqual([
      { loc: ['body', 'balanse'], msg: 'unknown field; did you mean balance?', type: 'unknown_field' },
    ]);
  });

  it('counts before it checks: an object or a list past its bound is refused with that problem alone', async () => {
    const before = await callCount();
    // 52,000 keys whose values are all of a wrong type: checked value by value, hundreds of thousands of problems.
    const metadata = Object.fromEntries(Array.from({ length: 52_000 }, (_, i) => [`k${i}`, []]));
    expect(await issuesOf(await json('/v1/calls', { agent_language: 'en', metadata }))).toEqual([
      { loc: ['body', 'metadata'], msg: 'must have at most 50 keys; it has 52,000', type: 'too_many_properties' },
    ]);
    const unknownFields = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`f${i}`, []]));
    expect(await issuesOf(await json('/v1/calls', { agent_language: 'en', ...unknownFields }))).toEqual([
      {
        loc: ['body'],
        msg: 'has 30,000 fields it does not take (f0, f1, f2, ...); it takes agent_language, agent_name, customer_language, customer_name, external_id, metadata, video, transcript, retention_days',
        type: 'too_many_unknown_fields',
      },
    ]);
    expect(await issuesOf(await json('/v1/translate', { target: 'fi', text: Array.from({ length: 50_000 }, () => 1) }))).toEqual([
      { loc: ['body', 'text'], msg: 'must have at most 100 items; it has 50,000', type: 'too_many_items' },
    ]);
    const glossary = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`term${i}`, 1]));
    expect(await issuesOf(await json('/v1/translate', { target: 'fi', text: 'hello', glossary }))).toEqual([
      { loc: ['body', 'glossary'], msg: 'must have at most 1,000 keys; it has 1,001', type: 'too_many_properties' },
    ]);
    const scopes = Array.from({ length: 10_000 }, () => 'translate');
    expect(await issuesOf(await json(`/admin/orgs/${orgId}/keys`, { mode: 'test', scopes }, { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }))).toEqual([
      { loc: ['body', 'scopes'], msg: 'must have at most 20 items; it has 10,000', type: 'too_many_items' },
    ]);
    expect(await callCount()).toBe(before);
  });

  it('bounds the names of free-form keys: metadata 40 characters, glossary terms 200', async () => {
    const long = 'k'.repeat(41);
    expect(await issuesOf(await json('/v1/calls', { agent_language: 'en', metadata: { [long]: 1, fine: 2 } }))).toEqual([
      { loc: ['body', 'metadata', long], msg: 'its name must be at most 40 characters long', type: 'key_too_long' },
    ]);
    const created = await json('/v1/calls', { agent_language: 'en', metadata: { ['k'.repeat(40)]: 1 } });
    expect(created.status).toBe(201);
    expect((await created.json()).metadata).toEqual({ ['k'.repeat(40)]: 1 });
    const term = 't'.repeat(201);
    expect(await issuesOf(await json('/v1/translate', { target: 'fi', text: 'hello', glossary: { [term]: 'x' } }))).toEqual([
      { loc: ['body', 'glossary', term], msg: 'its name must be at most 200 characters long', type: 'key_too_long' },
    ]);
  });

  it("ignores OAuth form parameters it does not know (RFC 6749 3.2): the grant's own error, not a 422", async () => {
    const res = await fetch(`${t.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'nothing', client_id: 'app_unknown', audience: 'x', resource: 'y' }),
    });
    expect(res.status).not.toBe(422);
    expect((await res.json()).error).toMatch(/^invalid_(client|grant)$/);
  });
});
