// Malformed requests of every class the fuzzer found get a clear 4xx and change nothing: never a 500.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

interface Issue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

describe(`hostile and malformed input (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let orgId: string;
  let session: { id: string; chatKey: string };

  const send = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${t.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${init.key ?? key}`, 'Content-Type': 'application/json', ...init.headers },
    });
  const post = (path: string, body: string, headers: Record<string, string> = {}) => send(path, { method: 'POST', body, headers });
  const admin = (path: string, body: unknown) => send(path, { method: 'POST', body: JSON.stringify(body), key: TEST_ADMIN_TOKEN });
  const issuesOf = async (res: Response, status = 422): Promise<Issue[]> => {
    expect(res.status).toBe(status);
    return (await res.json()).detail;
  };
  const sessionCount = async () => (await (await send('/v1/sessions?limit=100')).json()).length;

  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ balance: 10 });
    key = (await t.createKey(orgId, 'test')).key;
    const created = await (await post('/v1/sessions', JSON.stringify({ agent_language: 'en', customer_language: 'fi' }))).json();
    session = { id: created.id, chatKey: created.customer_url.split('#k=')[1] };
  });
  afterAll(() => t?.stop());

  it('answers malformed percent-encoding in any path with 400', async () => {
    for (const path of ['/calls/public/%E0%A4%A', '/v1/sessions/%E0%A4%A', '/chat/public/%ZZ/messages', '/chat/%C0']) {
      const res = await send(path);
      expect(res.status, path).toBe(400);
      expect((await res.json()).detail, path).toMatch(/not valid percent-encoding/);
    }
    // A path no operation has is unknown, however it is encoded.
    expect((await send('/nowhere/%E0%A4%A')).status).toBe(404);
  });

  it('refuses a NUL character in the body, the path and the query with 422 naming the place', async () => {
    const before = await sessionCount();
    expect(await issuesOf(await post('/v1/sessions', JSON.stringify({ agent_language: 'en', agent_name: 'a\u0000b' })))).toEqual([
      { loc: ['body', 'agent_name'], msg: 'must not contain the NUL character (U+0000)', type: 'nul_character' },
    ]);
    expect((await issuesOf(await send('/v1/sessions/ses_%00')))[0]).toMatchObject({ loc: ['path', 'session_id'], type: 'nul_character' });
    expect((await issuesOf(await send('/v1/sessions?external_id=a%00')))[0]).toMatchObject({ loc: ['query', 'external_id'], type: 'nul_character' });
    // A number the query spells past double range reads as Infinity: refused, not handed to a service.
    for (const query of ['limit=1e309', 'limit=-1e309', 'after=1e309']) {
      const res = await send(`/v1/sessions/${session.id}/messages?${query}`);
      expect(res.status).toBe(422);
      expect((await res.json()).detail).toEqual([{ loc: ['query', query.split('=')[0]], msg: 'must be a finite number', type: 'type' }]);
    }
    const publicCall = await fetch(`${t.url}/calls/public/call_%00`, { headers: { 'X-Call-Key': 'ck_x' } });
    expect((await issuesOf(publicCall))[0]).toMatchObject({ loc: ['path', 'call_id'], type: 'nul_character' });
    expect(await sessionCount()).toBe(before);
  });

  it('refuses NUL and unpaired surrogates in metadata keys and values and in text, also on the customer chat', async () => {
    const metadata = '{"agent_language":"en","metadata":{"ok":"fine","a\\ud800":"x","b":"y\\udc00z","c\\u0000":1}}';
    expect(await issuesOf(await post('/v1/calls', metadata))).toEqual([
      { loc: ['body', 'metadata', 'a\ud800'], msg: 'its name must be well-formed Unicode: it contains an unpaired surrogate (U+D800)', type: 'unpaired_surrogate' },
      { loc: ['body', 'metadata', 'b'], msg: 'must be well-formed Unicode: it contains an unpaired surrogate (U+DC00)', type: 'unpaired_surrogate' },
      { loc: ['body', 'metadata', 'c\u0000'], msg: 'its name must not contain the NUL character (U+0000)', type: 'nul_character' },
    ]);
    // A surrogate pair is a character like any other.
    expect((await post('/v1/translate', '{"target":"fi","text":"ok \\ud83d\\ude00"}')).status).toBe(200);
    expect((await issuesOf(await post('/v1/translate', '{"target":"fi","text":["ok","\\ud83d"]}')))[0]).toMatchObject({
      loc: ['body', 'text', 1],
      type: 'unpaired_surrogate',
    });
    const chat = (body: string) =>
      fetch(`${t.url}/chat/public/${session.id}/messages`, {
        method: 'POST',
        headers: { 'X-Chat-Key': session.chatKey, 'Content-Type': 'application/json' },
        body,
      });
    expect((await issuesOf(await chat('{"text":"hi\\u0000"}')))[0]).toMatchObject({ loc: ['body', 'text'], type: 'nul_character' });
    expect((await issuesOf(await chat('{"text":"hi\\udbff"}')))[0]).toMatchObject({ loc: ['body', 'text'], type: 'unpaired_surrogate' });
    const messages = await fetch(`${t.url}/chat/public/${session.id}/messages`, { headers: { 'X-Chat-Key': session.chatKey } });
    expect((await messages.json()).messages).toEqual([]);
  });

  it('refuses deeply nested JSON with 422, also under an Idempotency-Key, which stays free', async () => {
    // Every body is strict and a metadata value is a scalar: the nesting is refused where it starts.
    const deep = `{"agent_language":"en","metadata":{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    const issues = await issuesOf(await post('/v1/sessions', deep, { 'Idempotency-Key': 'deep-1' }));
    expect(issues).toEqual([{ loc: ['body', 'metadata', 'a'], msg: 'must be string, number or boolean', type: 'type' }]);
    expect((await post('/v1/sessions', '{"agent_language":"en"}', { 'Idempotency-Key': 'deep-1' })).status).toBe(201);
  });

  it('reads gzip bodies and answers a corrupt or unknown encoding with 422', async () => {
    const body = gzipSync(JSON.stringify({ target: 'fi', text: 'hello' }));
    const gzipped = await send('/v1/translate', { method: 'POST', body, headers: { 'Content-Encoding': 'gzip' } });
    expect(gzipped.status).toBe(200);
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const corrupt = await post('/v1/translate', 'not compressed at all', { 'Content-Encoding': encoding });
      expect((await issuesOf(corrupt))[0], encoding).toMatchObject({ loc: ['body'], type: 'encoding_invalid' });
    }
    const unknown = await post('/v1/translate', '{}', { 'Content-Encoding': 'xz' });
    expect((await issuesOf(unknown))[0]).toMatchObject({ loc: ['header', 'Content-Encoding'], type: 'unsupported_encoding' });
  });

  it('answers broken multipart uploads with 422 or 413, never 500', async () => {
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(64)]);
    const part = (name: string, content: Buffer | string, filename?: string) =>
      Buffer.concat([
        Buffer.from(
          `--XX\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: audio/wav` : ''}\r\n\r\n`,
        ),
        Buffer.from(content),
        Buffer.from('\r\n'),
      ]);
    const upload = (body: Uint8Array, boundary = 'XX') =>
      send(`/v1/sessions/${session.id}/voice`, {
        method: 'POST',
        body: new Uint8Array(body),
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      });
    const whole = Buffer.concat([part('sender', 'agent'), part('audio', wav, 'a.wav'), Buffer.from('--XX--\r\n')]);
    const truncated = whole.subarray(0, whole.length - 40);
    expect((await issuesOf(await upload(truncated)))[0]).toMatchObject({ loc: ['body'], type: 'multipart_invalid' });
    expect((await issuesOf(await upload(whole, 'YY')))[0]).toMatchObject({ loc: ['body'], type: 'multipart_invalid' });
    const twoFiles = Buffer.concat([part('sender', 'agent'), part('audio', wav, 'a.wav'), part('audio', wav, 'b.wav'), Buffer.from('--XX--\r\n')]);
    const several = await upload(twoFiles);
    expect(several.status).toBe(413);
    expect((await several.json()).detail).toMatch(/send one file/);
    const hugeField = Buffer.concat([part('sender', 'agent'), part('author_name', 'x'.repeat(100_000)), part('audio', wav, 'a.wav'), Buffer.from('--XX--\r\n')]);
    expect((await issuesOf(await upload(hugeField)))[0]).toMatchObject({ loc: ['body'], msg: expect.stringMatching(/Field value too long/) });
    const nulField = Buffer.concat([part('sender', 'agent'), part('author_name', 'a\u0000b'), part('audio', wav, 'a.wav'), Buffer.from('--XX--\r\n')]);
    expect((await issuesOf(await upload(nulField)))[0]).toMatchObject({ loc: ['body', 'author_name'], type: 'nul_character' });
  });

  it('refuses integers too large for the database in the path, the query and the body', async () => {
    const tooBig = '18446744073709551616';
    expect((await issuesOf(await send(`/v1/sessions/${session.id}/messages/${tooBig}/audio`)))[0]).toMatchObject({
      loc: ['path', 'message_id'],
      type: 'maximum',
    });
    expect((await issuesOf(await send(`/v1/sessions/${session.id}/messages?after=${tooBig}`)))[0]).toMatchObject({
      loc: ['query', 'after'],
      type: 'maximum',
    });
    const customerList = await fetch(`${t.url}/chat/public/${session.id}/messages?after=1e300`, { headers: { 'X-Chat-Key': session.chatKey } });
    expect((await issuesOf(customerList))[0]).toMatchObject({ loc: ['query', 'after'], type: 'maximum' });
    expect((await issuesOf(await post('/v1/sessions', '{"agent_language":"en","retention_days":1e300}')))[0]).toMatchObject({
      loc: ['body', 'retention_days'],
      type: 'maximum',
    });
  });

  it('refuses huge money values on the admin API with 422 and leaves the balance as it was', async () => {
    for (const value of [1e300, -1e300, 1e10]) {
      expect((await issuesOf(await admin('/admin/orgs', { name: 'x', balance: value })))[0].loc).toEqual(['body', 'balance']);
      expect((await issuesOf(await admin(`/admin/orgs/${orgId}/credit`, { amount: value })))[0].loc).toEqual(['body', 'amount']);
    }
    const rates = await issuesOf(await admin('/admin/orgs', { name: 'x', text_rate_per_million_characters: 1e300, voice_rate_per_minute: 1e300 }));
    expect(rates.map((issue) => issue.loc.join('.'))).toEqual(['body.text_rate_per_million_characters', 'body.voice_rate_per_minute']);
    // Each credit is within bounds, but the balance would not be.
    expect((await admin(`/admin/orgs/${orgId}/credit`, { amount: 999_999_990 })).status).toBe(200);
    expect(await issuesOf(await admin(`/admin/orgs/${orgId}/credit`, { amount: 1_000 }))).toEqual([
      { loc: ['body', 'amount'], msg: 'the balance must stay within ±1000000000', type: 'out_of_range' },
    ]);
    expect((await (await send('/v1/account')).json()).balance).toBe(1_000_000_000);
  });

  it('lists the first 100 of 1,000 bad glossary terms and counts the rest', async () => {
    const glossary = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`term${i}`, { bad: i }]));
    const issues = await issuesOf(await post('/v1/translate', JSON.stringify({ target: 'fi', text: 'hello', glossary })));
    expect(issues).toHaveLength(101);
    expect(issues.slice(0, 100).every((issue) => issue.loc[1] === 'glossary' && issue.type === 'type')).toBe(true);
    expect(issues[100]).toEqual({ loc: [], msg: '900 more problems not listed; fix these and send again', type: 'too_many_errors' });
  });
});
