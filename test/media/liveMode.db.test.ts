import type { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InterpreterFactory, InterpreterOptions } from '../../src/calls/media/interpreter.js';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { Listener, callApi, type Frame, type Join, connect, heardThroughMarker, listenUrl, pattern, roundTrip, streamAudio, streamUrl, withServerClockStopped } from './support.js';
import { waitUntil } from '../support/waiting.js';

interface FakeInterpreter {
  opts: InterpreterOptions;
  pushed: number;
  closed: boolean;
}

/** The fake engine "interprets" by inverting every sample, and captions every push. */
const invert = (pcm: Buffer) => {
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i += 2) out.writeInt16LE(~pcm.readInt16LE(i), i);
  return out;
};

describe(`media plane, live mode (${backendName})`, () => {
  let t: TestServer;
  let calls: ReturnType<typeof callApi>;
  let instances: FakeInterpreter[] = [];
  const fake: InterpreterFactory = (opts) => {
    const instance: FakeInterpreter = { opts, pushed: 0, closed: false };
    instances.push(instance);
    opts.onStatus({ state: 'connected' });
    return {
      provenance: { engine: 'fake', model: 'fake-interpreter-1' },
      push(pcm) {
        if (instance.closed) return;
        instance.pushed++;
        opts.onAudio(invert(pcm));
        const final = instance.pushed % 5 === 0;
        opts.onCaption({ final, original: `said ${instance.pushed}`, translated: `[${opts.targetLanguage}] said ${instance.pushed}` });
      },
      async close() {
        instance.closed = true;
      },
    };
  };

  /** Live calls interpret with `factory` from now on; the billing interval changes when given. */
  const useInterpreter = (factory: InterpreterFactory, billingIntervalMs?: number) => {
    t.server.app.engines.replaceLive({ interpretation: factory });
    if (billingIntervalMs !== undefined) t.server.media.configure({ billingIntervalMs });
  };

  beforeAll(async () => {
    t = await startTestServer({ AUDIOSOCKET_PORT: '0' });
    calls = callApi(t);
  });
  afterAll(() => t?.stop());
  afterEach(() => {
    instances = [];
    useInterpreter(fake, 5_000);
  });

  async function liveCall(balance: number | null) {
    const orgId = await t.createOrg({ name: 'Live Org', balance, voice_rate_per_minute: 0.1 });
    const key = (await t.createKey(orgId, 'live')).key;
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    return { orgId, key, ...call, agent, customer };
  }
  const ledger = (callId: string) => t.server.app.db('ledger_entries').where({ reference: callId, kind: 'call' }).orderBy('id');
  const balanceOf = async (orgId: string) => Number((await t.server.app.db('organizations').where({ id: orgId }).first()).balance_micros);

  it("routes each side's voice through the interpreter to the OTHER side, with captions and provenance", async () => {
    useInterpreter(fake);
    const { agent, customer } = await liveCall(10);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));

    const agentVoice = pattern(9_600, 100);
    const customerVoice = pattern(4_800, 20_000);
    await streamAudio(agentMic, agentVoice, 960, 1);
    await streamAudio(customerMic, customerVoice, 960, 1);

    expect((await customerHears.waitForBytes(agentVoice.length)).equals(invert(agentVoice))).toBe(true);
    expect((await agentHears.waitForBytes(customerVoice.length)).equals(invert(customerVoice))).toBe(true);
    // The captions are sent with the audio: a ping answered after them proves they are all in.
    await Promise.all([roundTrip(customerHears.ws), roundTrip(agentHears.ws)]);

    const directions = instances.map((i) => `${i.opts.sourceLanguage}->${i.opts.targetLanguage}`).sort();
    expect(directions).toEqual(['en->fi', 'fi->en']);
    expect(customerHears.frames.find((f) => f.type === 'provenance')).toEqual({ type: 'provenance', engine: 'fake', model: 'fake-interpreter-1' });
    const captions = customerHears.frames.filter((f) => f.type === 'caption');
    expect(captions).toHaveLength(20);
    expect(captions[0]).toMatchObject({ final: false, original: 'said 1', translated: '[fi] said 1', language: 'fi', source_language: 'en' });
    // Partial captions share an id until the final one; the next utterance gets a new id.
    expect(new Set(captions.slice(0, 5).map((c) => c.id)).size).toBe(1);
    expect(captions[4].final).toBe(true);
    expect(captions[5].id).not.toBe(captions[4].id);
    expect(agentHears.frames.filter((f) => f.type === 'caption').every((c) => c.language === 'en' && c.source_language === 'fi')).toBe(true);
    // Nothing more arrives: each side heard the other's voice once, up to a last frame each sends.
    const marker = pattern(960, 7_000);
    expect((await heardThroughMarker(agentMic, customerHears, agentVoice.length, marker)).equals(invert(Buffer.concat([agentVoice, marker])))).toBe(true);
    expect((await heardThroughMarker(customerMic, agentHears, customerVoice.length, marker)).equals(invert(Buffer.concat([customerVoice, marker])))).toBe(true);

    agentMic.close();
    await waitUntil(() => instances.find((i) => i.opts.sourceLanguage === 'en')!.closed, 'the en->fi interpreter to close');
    expect(instances.find((i) => i.opts.sourceLanguage === 'fi')!.closed).toBe(false);
    for (const ws of [customerMic, agentHears.ws, customerHears.ws]) ws.close();
  });

  it('counts the interpreters connected and their reconnects, in the stats and at /metrics', async () => {
    useInterpreter(fake);
    const { agent } = await liveCall(10);
    const before = t.server.media.stats();
    const agentMic = await connect(streamUrl(t, agent));
    await waitUntil(() => instances.length === 1 && t.server.media.stats().interpreters === before.interpreters + 1, 'the interpreter connected');

    instances[0]!.opts.onStatus({ state: 'reconnecting', message: 'upstream connection lost' });
    expect(t.server.media.stats()).toMatchObject({ interpreters: before.interpreters, interpreterReconnects: before.interpreterReconnects + 1 });
    // Still reconnecting: one loss counts once, however often it is reported.
    instances[0]!.opts.onStatus({ state: 'reconnecting' });
    instances[0]!.opts.onStatus({ state: 'connected' });
    expect(t.server.media.stats()).toMatchObject({ interpreters: before.interpreters + 1, interpreterReconnects: before.interpreterReconnects + 1 });

    const scraped = await (await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    expect(scraped).toContain(`\nmedia_interpreter_reconnects ${before.interpreterReconnects + 1}\n`);
    expect(scraped).toContain(`\nmedia_interpreters_connected ${before.interpreters + 1}\n`);

    // The room closes: its reconnects stay counted.
    agentMic.close();
    await waitUntil(() => t.server.media.stats().rooms === before.rooms, 'the room closed');
    expect(t.server.media.stats().interpreterReconnects).toBe(before.interpreterReconnects + 1);
  });

  it("mixes a side's sources before they reach its interpreter (one voice, not two interleaved)", async () => {
    useInterpreter(fake);
    const { agent, customer } = await liveCall(10);
    const customerHears = await Listener.open(listenUrl(t, customer));
    // Samples 0, 1, 2, ... and 10000, 10001, ...: their sums never clip.
    const voiceA = pattern(2_400, 32_768);
    const voiceB = pattern(2_400, 42_768);
    const mix = (a: Buffer, b: Buffer) => {
      const sum = Buffer.alloc(a.length);
      for (let i = 0; i < a.length; i += 2) sum.writeInt16LE(a.readInt16LE(i) + b.readInt16LE(i), i);
      return sum;
    };
    const mixed = mix(voiceA, voiceB);
    // One last frame from both sources, to come through mixed right after the rest: what arrives before
    // it is all there is (nothing more arrives).
    const [lastA, lastB] = [pattern(480, 34_000), pattern(480, 44_000)]; // a frame each; sums do not clip either
    const lastMixed = mix(lastA, lastB);
    // The server's clock stands still from before the sources join until the last frame is through:
    // neither can count as silent, however late a loaded machine delivers one socket's frames (a source
    // that joined more than 60 ms before the clock stopped would count as silent from the start).
    let sockets: WebSocket[] = [];
    const [heard, all] = await withServerClockStopped(async () => {
      const headset = await connect(streamUrl(t, agent));
      const laptop = await connect(streamUrl(t, agent).replace(/source_id=[^&]+/, 'source_id=laptop'));
      sockets = [headset, laptop];
      for (let offset = 0; offset < voiceA.length; offset += 960) {
        headset.send(voiceA.subarray(offset, offset + 960));
        laptop.send(voiceB.subarray(offset, offset + 960));
        // Each pair read by the server before the next is sent, as two live microphones would send them.
        await Promise.all([roundTrip(headset), roundTrip(laptop)]);
      }
      const voice = await customerHears.waitForBytes(voiceA.length);
      laptop.send(lastB);
      return [voice, await heardThroughMarker(headset, customerHears, voiceA.length, lastA)];
    });
    expect(heard.equals(invert(mixed))).toBe(true);
    expect(all.equals(invert(Buffer.concat([mixed, lastMixed])))).toBe(true);
    for (const ws of [...sockets, customerHears.ws]) ws.close();
  });

  it('bills interpretation time per second through the ledger, as it runs and at the end', async () => {
    useInterpreter(fake, 200);
    const { orgId, key, id, agent, customer } = await liveCall(10);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const chargedSeconds = async () => (await ledger(id)).reduce((sum, row) => sum + Number(row.quantity), 0);
    // The server's clock moves only when the test moves it: 2.5 s of interpretation are 2.5 s, however
    // late a loaded machine runs the billing timer.
    await withServerClockStopped(async () => {
      const agentMic = await connect(streamUrl(t, agent));
      await waitUntil(() => instances.length === 1, 'interpretation to start');
      await streamAudio(agentMic, pattern(9_600, 5), 960);
      for (const second of [1, 2]) {
        vi.setSystemTime(Date.now() + 1_000);
        await waitUntil(async () => (await chargedSeconds()) === second, `second ${second} charged while running`);
      }
      vi.setSystemTime(Date.now() + 500);
      agentMic.close();
      expect((await calls.api(`/v1/calls/${id}/end`, key, { method: 'POST' })).status).toBe(200);
      await customerHears.closed;
      // The started third second is charged at the end.
      await waitUntil(async () => (await chargedSeconds()) >= 3, 'the started second charged at the end');
    });

    const rows = await ledger(id);
    expect(rows.map((row) => Number(row.quantity))).toEqual([1, 1, 1]);
    for (const row of rows) {
      expect(row).toMatchObject({ org_id: orgId, mode: 'live', kind: 'call' });
      expect(Number(row.amount_micros)).toBe(-Math.round((Number(row.quantity) * 100_000) / 60));
    }
    const charged = rows.reduce((sum, row) => sum - Number(row.amount_micros), 0);
    expect(await balanceOf(orgId)).toBe(10_000_000 - charged);
    // Nothing is charged once interpretation stopped: the room that bills it is gone.
    await waitUntil(() => t.server.media.room(id) === undefined, 'the room to be dropped');
    expect(await ledger(id)).toHaveLength(rows.length);
  });

  /**
   * Both sides' microphones, open and interpreted, the server's clock standing still (withServerClockStopped):
   * billed time passes only when the test moves the clock, however late a loaded machine runs the billing timer.
   */
  async function bothTalking(agent: Join, customer: Join) {
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));
    await waitUntil(() => instances.filter((i) => !i.closed).length === 2, 'interpretation to start on both sides');
    let frames = 0;
    return {
      agentMic,
      customerMic,
      /** The next 20 ms of each side's voice (the agent's samples count up by one), read by the server. */
      async speak(): Promise<Buffer> {
        const agentVoice = pattern(480, 1_000, frames * 480);
        agentMic.send(agentVoice);
        customerMic.send(pattern(480, 9_000, frames * 480));
        frames++;
        await Promise.all([roundTrip(agentMic), roundTrip(customerMic)]);
        return agentVoice;
      },
    };
  }
  const exhausted = (f: Frame) => f.type === 'notice' && f.code === 'balance_exhausted';

  it('stops interpretation for both sides when a charge empties the prepaid balance; the call stays open', async () => {
    useInterpreter(fake, 100);
    // 0.003 at 0.1 per minute pays for 1.8 s: the second second spends it.
    const { key, id, agent, customer } = await liveCall(0.003);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    await withServerClockStopped(async () => {
      const { agentMic, customerMic, speak } = await bothTalking(agent, customer);
      await speak();
      vi.setSystemTime(Date.now() + 2_000);
      await agentHears.waitForFrame(exhausted);
      await customerHears.waitForFrame(exhausted);
      expect(instances).toHaveLength(2);
      await waitUntil(() => instances.every((i) => i.closed), 'interpreters to close');
      expect(customerHears.frames.filter((f) => f.type === 'provenance').at(-1)).toEqual({ type: 'provenance', engine: 'none', model: 'untranslated' });

      // The sides still hear each other, untranslated: the agent's own samples, not the fake interpreter's
      // inverted ones.
      const voice = Buffer.concat([await speak(), await speak()]);
      await waitUntil(() => customerHears.pcm().subarray(-voice.length).equals(voice), 'the agent heard untranslated');
      expect(agentMic.readyState).toBe(agentMic.OPEN);
      for (const ws of [agentMic, customerMic]) ws.close();
    });

    // The event is stored beside the notice, not before it.
    const exhaustedEvent = () => t.server.app.db('events').where({ call_id: id, type: 'call.balance_exhausted' }).first();
    await waitUntil(async () => (await exhaustedEvent()) !== undefined, 'the call.balance_exhausted event');
    expect((await (await calls.api(`/v1/calls/${id}`, key)).json()).status).toBe('open');
    for (const ws of [agentHears.ws, customerHears.ws]) ws.close();
  });

  it('charges as soon as the balance is spent, not at the next interval: a call overdraws by one started second at most', async () => {
    // 0.005 at 0.1 per minute pays for exactly 3 seconds; the interval (60 s) never comes in this test.
    useInterpreter(fake, 60_000);
    const { orgId, id, agent, customer } = await liveCall(0.005);
    const customerHears = await Listener.open(listenUrl(t, customer));
    await withServerClockStopped(async () => {
      const { agentMic, customerMic, speak } = await bothTalking(agent, customer);
      await speak();
      // Half a second into the fourth second: the balance ran out, the started fourth second is charged with the rest.
      vi.setSystemTime(Date.now() + 3_500);
      await customerHears.waitForFrame(exhausted);
      for (const ws of [agentMic, customerMic]) ws.close();
    });
    const perSecond = Math.round(100_000 / 60);
    await waitUntil(async () => (await balanceOf(orgId)) < 0, 'the charge');
    expect((await ledger(id)).map((row) => Number(row.quantity))).toEqual([4]);
    expect(await balanceOf(orgId)).toBe(5_000 - Math.round((4 * 100_000) / 60));
    expect(await balanceOf(orgId)).toBeGreaterThanOrEqual(-perSecond);
    customerHears.close();
  });

  it('resumes interpretation when the balance is topped up during the call', async () => {
    useInterpreter(fake, 100);
    const { orgId, agent, customer } = await liveCall(0.003);
    const customerHears = await Listener.open(listenUrl(t, customer));
    await withServerClockStopped(async () => {
      const { agentMic, customerMic, speak } = await bothTalking(agent, customer);
      await speak();
      vi.setSystemTime(Date.now() + 2_000);
      await customerHears.waitForFrame(exhausted);
      await waitUntil(() => instances.length === 2 && instances.every((i) => i.closed), 'interpreters to close');

      const { response } = await t.admin.POST('/admin/orgs/{org_id}/credit', { params: { path: { org_id: orgId } }, body: { amount: 5 } });
      expect(response.status).toBe(200);
      // The balance is asked again once per billing interval (100 ms) while interpretation is stopped.
      vi.setSystemTime(Date.now() + 100);
      await waitUntil(() => instances.length === 4, 'interpreters to start again');
      // After the notice came 'untranslated'; the provenance that follows names the interpreter again.
      const noticeAt = customerHears.frames.findIndex(exhausted);
      await waitUntil(() => customerHears.frames.slice(noticeAt).filter((f) => f.type === 'provenance').length === 2, 'a new provenance frame');
      expect(customerHears.frames.slice(noticeAt).filter((f) => f.type === 'provenance')).toEqual([
        { type: 'provenance', engine: 'none', model: 'untranslated' },
        { type: 'provenance', engine: 'fake', model: 'fake-interpreter-1' },
      ]);
      const captionsBefore = customerHears.frames.filter((f) => f.type === 'caption').length;
      await speak();
      await waitUntil(() => customerHears.frames.filter((f) => f.type === 'caption').length > captionsBefore, 'captions again');
      for (const ws of [agentMic, customerMic]) ws.close();
    });
    customerHears.close();
  });

  it('does not start interpretation when the prepaid balance is already empty', async () => {
    useInterpreter(fake);
    const { orgId, agent, customer } = await liveCall(1);
    const { response } = await t.admin.POST('/admin/orgs/{org_id}/credit', { params: { path: { org_id: orgId } }, body: { amount: -1 } });
    expect(response.status).toBe(200);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const notice = await customerHears.waitForFrame((f) => f.type === 'notice' && f.code === 'balance_exhausted');
    expect(notice.message).toMatch(/balance/);
    expect(instances).toHaveLength(0);
    const voice = pattern(4_800, 3);
    agentMic.send(voice);
    expect((await customerHears.waitForBytes(voice.length)).equals(voice)).toBe(true);
    agentMic.close();
    customerHears.close();
  });

  it('without an engine the call stays up untranslated, and the listener is told which setting is missing', async () => {
    t.server.app.engines.replaceLive({ interpretation: { missingSetting: 'OPENAI_API_KEY' } });
    const { id, agent, customer } = await liveCall(10);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const notice = await customerHears.waitForFrame((f) => f.type === 'notice');
    expect(notice).toMatchObject({ code: 'translation_unavailable', message: expect.stringContaining('no interpretation engine configured: set OPENAI_API_KEY') });
    expect(customerHears.frames.find((f) => f.type === 'provenance')).toEqual({ type: 'provenance', engine: 'none', model: 'untranslated' });
    const voice = pattern(9_600, 77);
    await streamAudio(agentMic, voice, 960, 1);
    expect((await customerHears.waitForBytes(voice.length)).equals(voice)).toBe(true);
    // A listener joining later learns it at once.
    const late = await Listener.open(listenUrl(t, customer));
    expect((await late.waitForFrame((f) => f.type === 'notice')).code).toBe('translation_unavailable');
    // Nothing was billed, to the end of the room (which settles what ran).
    for (const ws of [agentMic, customerHears.ws, late.ws]) ws.close();
    await waitUntil(() => t.server.media.room(id) === undefined, 'the room to be dropped');
    expect(await ledger(id)).toHaveLength(0);
  });

  it('a language change rebuilds the interpreters for the new languages and reconnects the other side', async () => {
    useInterpreter(fake);
    const { id, agent, customer, customerKey } = await liveCall(10);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));
    await waitUntil(() => instances.length === 2, 'two interpreters');
    await calls.setLanguage(id, customerKey, 'sv');
    expect(await agentHears.closed).toEqual({ code: 4002, reason: 'reconnect' });
    await waitUntil(() => instances.length === 4, 'rebuilt interpreters');
    expect(instances.slice(0, 2).every((i) => i.closed)).toBe(true);
    expect(instances.slice(2).map((i) => `${i.opts.sourceLanguage}->${i.opts.targetLanguage}`).sort()).toEqual(['en->sv', 'sv->en']);
    // The customer's listener stays and now hears the agent interpreted into Swedish.
    agentMic.send(pattern(4_800, 11));
    const caption = await customerHears.waitForFrame((f) => f.type === 'caption' && f.language === 'sv');
    expect(caption.translated).toMatch(/^\[sv\]/);
    for (const ws of [agentMic, customerMic, customerHears.ws]) ws.close();
  });
});
