// Seeing the business in the console: a call's and a session's own pages (rows of the lists link to
// them) with their sides, messages in both languages, events and charges; the events history filtered
// by type, object and time; the ledger filtered by kind and time, and its CSV export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startLibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import type { StandInServer } from '../support/standins/standInServer.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe(`console records: detail pages, events history, ledger (${backendName})`, () => {
  let t: TestServer;
  let translator: StandInServer & { url: string };
  let member: Visitor;
  let orgId: string;
  let key: string;
  beforeAll(async () => {
    translator = await startLibreTranslateStandIn({ apiKey: 'lt-records' });
    t = await startTestServer({ LIBRETRANSLATE_URL: translator.url, LIBRETRANSLATE_API_KEY: 'lt-records' });
    orgId = await t.createOrg({ name: 'Records Org', balance: 10, currency: 'EUR', text_rate_per_million_characters: 1_000 });
    await addMember(t, orgId, 'reader@records.example', PASSWORD, 'viewer');
    ({ key } = await t.createKey(orgId, 'live'));
    member = visitor(t);
    expect((await member.signIn('reader@records.example', PASSWORD)).status).toBe(303);
  });
  afterAll(async () => {
    await t?.stop();
    await translator?.close();
  });

  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`${t.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, path).toBeLessThan(300);
    return res.json();
  };
  const html = async (path: string, status = 200) => {
    const res = await member.get(path);
    expect(res.status, path).toBe(status);
    return res.text();
  };

  it("shows a session's messages in both languages, its events and its charges; the list links to it", async () => {
    const session = await api('/v1/sessions', { agent_language: 'en', customer_language: 'de', agent_name: 'Alice', customer_name: 'Matti' });
    const message = await api(`/v1/sessions/${session.id}/messages`, { sender: 'agent', text: 'Hello <there>' });
    expect(await html('/console/sessions')).toContain(`<a href="/console/sessions/${session.id}">`);
    const page = await html(`/console/sessions/${session.id}`);
    expect(page).toContain(`Session ${session.id}`);
    expect(page).toContain('Alice (en)');
    expect(page).toContain('<span lang="en">Hello &lt;there&gt;</span>');
    expect(page).toContain(`<span lang="de">${message.customer_text.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</span>`);
    expect(page).toContain('session.created');
    expect(page).toContain('message.created');
    expect(page).toContain(`message ${message.id}`);
    // Another organization's session, or nonsense: 404 pages.
    const other = await t.createOrg();
    const otherKey = (await t.createKey(other, 'live')).key;
    const theirs = await (await fetch(`${t.url}/v1/sessions`, { method: 'POST', headers: { Authorization: `Bearer ${otherKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_language: 'en' }) })).json();
    await html(`/console/sessions/${theirs.id}`, 404);
    await html('/console/sessions/ses_nothing', 404);
  });

  it("shows a call's sides and presence, its events, how it went once ended, and its transcript in both languages with a WebVTT download", async () => {
    const call = await api('/v1/calls', { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice', customer_name: 'Matti' });
    expect(await html('/console/calls')).toContain(`<a href="/console/calls/${call.id}">`);
    const open = await html(`/console/calls/${call.id}`);
    expect(open).toContain('Alice (en), <span class="muted">not joined</span>');
    expect(open).toContain('Matti (fi)');
    expect(open).toContain('call.created');
    expect(open).toContain('Shown once the call has ended.');
    expect(open).toContain('No utterances');

    const started = new Date('2026-11-27T10:00:00Z');
    const at = (ms: number) => new Date(started.getTime() + ms);
    const owner = await t.server.app.db('calls').where({ id: call.id }).first('org_id', 'mode');
    await t.server.app.db('call_utterances').insert([
      { ...owner, call_id: call.id, side: 'agent', speaker: 'Alice', language: 'en', text: 'Hello <there>', translation_language: 'fi', translation_text: 'Hei', started_at: at(1_000), ended_at: at(2_500), offset_ms: 1_000 },
      { ...owner, call_id: call.id, side: 'customer', speaker: 'Matti', language: 'fi', text: 'Kiitos', translation_language: 'en', translation_text: 'Thank you', started_at: at(65_000), ended_at: at(66_000), offset_ms: 65_000 },
    ]);
    await api(`/v1/calls/${call.id}/end`, {});
    const ended = await html(`/console/calls/${call.id}`);
    expect(ended).toContain('<span lang="en">Hello &lt;there&gt;</span>');
    expect(ended).toContain('<span lang="fi">Hei</span>');
    expect(ended).toContain('<span lang="fi">Kiitos</span>');
    expect(ended).toContain('<span lang="en">Thank you</span>');
    expect(ended).toMatch(/>01:05<\/time>/);
    expect(ended).toContain('Latency to the customer');
    expect(ended).not.toContain('Shown once the call has ended.');

    const vtt = await member.get(`/console/calls/${call.id}/transcript.vtt`);
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
    expect(vtt.headers.get('content-disposition')).toContain(`transcript-${call.id}.vtt`);
    const text = await vtt.text();
    expect(text.startsWith('WEBVTT')).toBe(true);
    expect(text).toContain('Kiitos');
    expect(text).toContain('Thank you');
    // Another organization's call is not there.
    await html('/console/calls/call_nothing/transcript.vtt', 404);
  });

  it('filters the events history by type, object and time, and refuses a bad date (422)', async () => {
    const session = await api('/v1/sessions', { agent_language: 'en', customer_language: 'es' });
    const all = await html('/console/events/history');
    expect(all).toContain('call.created');
    const byType = await html('/console/events/history?type=call.created');
    expect(byType).toContain('call.created');
    expect(byType).not.toContain('<strong class="event-type">session.created');
    const byObject = await html(`/console/events/history?object=${session.id}`);
    expect((byObject.match(/<strong class="event-type">/g) ?? []).length).toBe(1);
    expect(byObject).toContain(session.id);
    const today = new Date().toISOString().slice(0, 10);
    expect(await html(`/console/events/history?from=${today}&to=${today}`)).toContain('session.created');
    expect(await html('/console/events/history?to=2000-01-01')).toContain('No events match.');
    expect(await html('/console/events/history?from=yesterday', 422)).toContain('Dates are written YYYY-MM-DD.');
  });

  it('lists the ledger with filters and exports it as CSV (formulas defused)', async () => {
    const credited = await fetch(`${t.url}/admin/orgs/${orgId}/credit`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: 5 }),
    });
    expect(credited.status).toBe(200);
    // A reference a spreadsheet would run as a formula.
    const newest = await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'credit' }).orderBy('id', 'desc').first();
    await t.server.app.db('ledger_entries').where({ id: newest.id }).update({ reference: '=HYPERLINK("evil")' });
    const page = await html('/console/ledger');
    expect(page).toContain('<a href="/console/ledger.csv" download>Export CSV</a>');
    const credits = await html('/console/ledger?kind=credit');
    expect(credits).not.toContain('<td>text</td>');
    expect(credits).toContain('<td>credit</td>');
    const texts = await html('/console/ledger?kind=text');
    expect(texts).toContain('<td>text</td>');
    expect(texts).not.toContain('<td>credit</td>');

    const csv = await member.get('/console/ledger.csv?kind=credit');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="ledger-live.csv"');
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,mode,kind,quantity,amount,reference,app_id');
    const rows = await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'credit' });
    expect(lines).toHaveLength(rows.length + 1);
    expect(lines.join('\n')).toContain(`,live,credit,0,5,"'=HYPERLINK(""evil"")",`);
    expect((await member.get('/console/ledger.csv?from=nonsense')).status).toBe(400);
  });
});
