// The call page (`/call/{call_id}#k=<key>`) in chromium against the real server, two browser contexts
// (agent and customer) with fake microphone and camera: joining, PCM frames on the stream socket, WAV
// chunks played from the listen socket, WebRTC video between the pages, captions (live mode, the
// realtime stand-in), a language change, hang-ups, the key in no requested URL, frames forged on a
// signalling socket shown nowhere, and renewed TURN credentials applied.
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { launchChromium, PAGE_WAIT_MS, recordCspViolations } from '../support/browser.js';
import { englishWordsOn, seriousAxeViolations } from '../support/pageChecks.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { SIGNAL_REFUSED } from '../../src/calls/media/protocol.js';
import { Signal } from '../media/support.js';

const WAIT = { timeout: PAGE_WAIT_MS };
/** A browser test waits on pages and media, which a loaded machine stretches: generous, never a threshold. */
const TEST_TIMEOUT_MS = 240_000;

/**
 * A mono 16-bit PCM WAV of a gliding tone with a tremolo, its last second silent: the fake microphone (which
 * repeats it) speaks in turns, so test mode's voice activity ends a turn and makes a placeholder caption.
 */
function toneWav(seconds: number, sampleRate = 48_000): Buffer {
  const samples = seconds * sampleRate;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  let phase = 0;
  for (let i = 0; i < samples; i++) {
    const time = i / sampleRate;
    phase += (2 * Math.PI * (300 + 200 * Math.sin(2 * Math.PI * 0.5 * time))) / sampleRate;
    const voiced = time < seconds - 1;
    wav.writeInt16LE(voiced ? Math.round(Math.sin(phase) * (0.35 + 0.25 * Math.sin(2 * Math.PI * 3 * time)) * 32767) : 0, 44 + i * 2);
  }
  return wav;
}

interface Side {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested (HTTP and WebSocket). */
  urls: string[];
  errors: string[];
}

/** What the page's media reports (window.__callPage): frames sent, chunks played. */
const mediaOf = (page: Page) =>
  page.evaluate(() => {
    const media = (window as unknown as { __callPage?: { framesSent: number; player: { chunksPlayed: number } } }).__callPage;
    return media ? { framesSent: media.framesSent, chunksPlayed: media.player.chunksPlayed } : null;
  });

/**
 * Every text an element shows from now on. A passing status (the other side's new language) is replaced as soon as
 * the other side speaks again, which a poll on a loaded machine can miss; the page itself records each one.
 */
async function recordTexts(page: Page, testId: string): Promise<() => Promise<string[]>> {
  await page.evaluate((id) => {
    const element = document.querySelector(`[data-testid="${id}"]`)!;
    const seen: string[] = [];
    (window as unknown as Record<string, string[]>)[`__texts_${id}`] = seen;
    new MutationObserver(() => seen.push(element.textContent ?? '')).observe(element, { childList: true, characterData: true, subtree: true });
  }, testId);
  return () => page.evaluate((id) => (window as unknown as Record<string, string[]>)[`__texts_${id}`], testId);
}

const remoteVideoWidth = (page: Page) => page.evaluate(() => (document.getElementById('remote-video') as HTMLVideoElement).videoWidth);

describe('the call page in chromium', () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let browser: Browser;
  let tmp: string;
  const opened: BrowserContext[] = [];

  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-call-page' });
    t = await startTestServer({
      AUDIOSOCKET_PORT: '0',
      OPENAI_API_KEY: 'sk-call-page',
      OPENAI_REALTIME_URL: realtime.url,
      // Per-join TURN credentials, renewed on the signalling socket; nothing listens there (TCP: refused at once), host candidates connect.
      TURN_URLS: 'turn:127.0.0.1:9?transport=tcp',
      TURN_SECRET: 'call-page-test-turn-secret',
    });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'lia-call-page-'));
    const wavPath = path.join(tmp, 'microphone.wav');
    await writeFile(wavPath, toneWav(4));
    browser = await launchChromium([
      '--use-fake-ui-for-media-stream',
      // The fake camera's slowest rate (its default is 20): every frame is drawn, encoded, sent and decoded, and a
      // test asks only that a picture arrives. Chromium's CPU time for two pages in a video call: -40%.
      '--use-fake-device-for-media-stream=fps=5',
      `--use-file-for-fake-audio-capture=${wavPath}`,
      '--autoplay-policy=no-user-gesture-required',
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await realtime?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** A page in its own browser context (its own origin storage), recording requests and errors. */
  async function open(
    link: string,
    base = t.url,
    options: { viewport?: { width: number; height: number }; locale?: string; colorScheme?: 'light' | 'dark' } = {},
  ): Promise<Side> {
    const url = new URL(link);
    const context = await browser.newContext({
      viewport: options.viewport ?? { width: 390, height: 844 },
      colorScheme: options.colorScheme ?? 'light',
      ...(options.locale ? { locale: options.locale } : {}),
    });
    opened.push(context);
    const page = await context.newPage();
    const urls: string[] = [];
    const errors: string[] = [];
    recordCspViolations(page, errors);
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('request', (request) => urls.push(request.url()));
    page.on('websocket', (ws) => urls.push(ws.url()));
    const answer = await page.goto(`${base}${url.pathname}${url.hash}`);
    expect(answer!.status()).toBe(200);
    expect(answer!.headers()['content-security-policy']).toMatch(/script-src 'self'.*frame-ancestors \*/);
    return { context, page, urls, errors };
  }

  async function createCall(mode: 'test' | 'live', body: Record<string, unknown>, balance = 10, company = 'Acme Support') {
    const orgId = await t.createOrg({ name: company, balance, voice_rate_per_minute: 0.6 });
    const { key } = await t.createKey(orgId, mode);
    const res = await fetch(`${t.url}/v1/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    const call = await res.json();
    return { id: call.id as string, agentUrl: call.agent_url as string, customerUrl: call.customer_url as string, key, orgId };
  }

  const keyOf = (link: string) => link.split('#k=')[1]!;

  /** The key travels only as X-Call-Key: no requested URL holds it (a fragment is never requested). */
  function expectKeyInNoUrl(side: Side, ...keys: string[]) {
    expect(side.urls.length).toBeGreaterThan(3);
    for (const url of side.urls) for (const secret of keys) expect(url.split('#')[0]).not.toContain(secret);
    expect(side.urls.some((url) => url.includes('/media/stream/'))).toBe(true);
  }

  it('test mode, video: both join, send PCM, hear themselves, see each other; language change, leave, rejoin, end', async () => {
    const call = await createCall('test', { agent_language: 'en', agent_name: 'Alice', video: true });
    const agent = await open(call.agentUrl);
    const customer = await open(call.customerUrl);

    // The customer's language is unknown: it picks one (by name) and may give a name.
    await customer.page.getByLabel('Language').selectOption('es');
    await customer.page.getByLabel('Name').fill('Matti');
    await customer.page.getByRole('button', { name: 'Join' }).click();
    // The agent's language is known: only Join. The page speaks the agent's language.
    await expect.poll(() => agent.page.getByTestId('company').textContent()).toContain('Acme Support');
    expect(await agent.page.getByLabel('Language').isVisible()).toBe(false);
    await agent.page.getByRole('button', { name: 'Join' }).click();

    for (const side of [agent, customer]) {
      await side.page.waitForSelector('[data-state="live"]', WAIT);
      await side.page.getByRole('log').waitFor(WAIT);
    }
    // The customer's page now speaks Spanish; the agent sees the customer's name.
    expect(await customer.page.getAttribute('html', 'lang')).toBe('es');
    expect(await customer.page.getByTestId('hang-up').textContent()).toBe('Colgar');
    await expect.poll(() => agent.page.getByTestId('other-name').textContent(), WAIT).toBe('Matti');

    // PCM frames go out, WAV chunks come back and are played (test mode: each hears itself).
    for (const side of [agent, customer]) {
      await expect.poll(async () => (await mediaOf(side.page))?.framesSent ?? 0, WAIT).toBeGreaterThan(25);
      await expect.poll(async () => (await mediaOf(side.page))?.chunksPlayed ?? 0, WAIT).toBeGreaterThan(25);
      await expect.poll(() => remoteVideoWidth(side.page), WAIT).toBeGreaterThan(0);
    }
    // Test mode has captions too: each turn of speech is a placeholder, its words on the speaker's page and, in
    // the listener's language, on the other's.
    for (const [side, language] of [[agent, 'en'], [customer, 'es']] as const) {
      const placeholder = new RegExp(`^\\[${language}\\] speech \\d+\\.\\d s$`);
      await side.page.locator('.caption.me').first().waitFor(WAIT);
      await side.page.locator('.caption.other').first().waitFor(WAIT);
      expect(await side.page.locator('.caption.me span').first().textContent()).toMatch(placeholder);
      expect(await side.page.locator('.caption.other span').first().textContent()).toMatch(placeholder);
    }
    // The screenshots of docs/call-page.md are rewritten only when asked (UPDATE_SCREENSHOTS=1), so a test run leaves the tree clean.
    const shots = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots' : tmp;
    await agent.page.screenshot({ path: path.join(shots, 'call-agent.png') });
    await customer.page.screenshot({ path: path.join(shots, 'call-customer.png') });

    // A language change on the customer's side: the agent's page reconnects (no reload) and says so.
    const agentPlayed = (await mediaOf(agent.page))!.chunksPlayed;
    const agentPeerStates = await recordTexts(agent.page, 'peer-state');
    await customer.page.getByRole('button', { name: 'Mis ajustes' }).click();
    await customer.page.getByLabel('Idioma').selectOption('fr');
    await customer.page.getByTestId('save').click();
    await expect.poll(async () => (await agentPeerStates()).join('\n'), WAIT).toContain('Matti now speaks French');
    await expect.poll(async () => (await mediaOf(agent.page))!.chunksPlayed, WAIT).toBeGreaterThan(agentPlayed + 10);
    expect(await customer.page.getAttribute('html', 'lang')).toBe('fr');

    // The customer hangs up: it only leaves; the agent is told; the same link joins again.
    await customer.page.getByTestId('hang-up').click();
    await customer.page.waitForSelector('[data-state="left"]', WAIT);
    await expect.poll(() => agent.page.getByTestId('peer-state').textContent(), WAIT).toContain('left the call');
    await customer.page.getByTestId('join').click();
    await customer.page.waitForSelector('[data-state="live"]', WAIT);
    await expect.poll(() => remoteVideoWidth(agent.page), WAIT).toBeGreaterThan(0);

    // The agent hangs up: the call ends for both.
    await agent.page.getByRole('button', { name: 'Hang up' }).click();
    for (const side of [agent, customer]) {
      await side.page.waitForSelector('[data-state="ended"]', WAIT);
    }
    expect(await agent.page.getByTestId('status').textContent()).toBe('The call has ended.');
    expect(await customer.page.getByTestId('status').textContent()).toBe('L’appel est terminé.');

    expectKeyInNoUrl(agent, keyOf(call.agentUrl), keyOf(call.customerUrl));
    expectKeyInNoUrl(customer, keyOf(call.agentUrl), keyOf(call.customerUrl));
    expect([...agent.errors, ...customer.errors]).toEqual([]);
    for (const side of [agent, customer]) await side.context.close();
  }, TEST_TIMEOUT_MS);

  it('live mode: each hears the other interpreted, captions both ways; a replaced link and a denied microphone are shown', async () => {
    const call = await createCall('live', { agent_language: 'en', customer_language: 'es', agent_name: 'Alice', customer_name: 'Matti', video: false });
    const agent = await open(call.agentUrl);
    const customer = await open(call.customerUrl);
    for (const side of [agent, customer]) await side.page.getByTestId('join').click();
    for (const side of [agent, customer]) await side.page.waitForSelector('[data-state="live"]', WAIT);

    // Interpreted audio from the other side is played, and captions appear: the other side's words in
    // this side's language, and this side's own words as the other side got them.
    for (const side of [agent, customer]) {
      await expect.poll(async () => (await mediaOf(side.page))?.chunksPlayed ?? 0, WAIT).toBeGreaterThan(10);
      await side.page.locator('.caption.other').first().waitFor(WAIT);
      await side.page.locator('.caption.me').first().waitFor(WAIT);
    }
    expect(await customer.page.locator('.caption.other span').first().textContent()).toContain('[es]');
    expect(await agent.page.locator('.caption.other span').first().textContent()).toContain('[en]');
    expect(await customer.page.locator('.caption.me small').first().textContent()).toContain('[en]');
    expect(await agent.page.getByRole('log').getAttribute('aria-live')).toBe('polite');
    // No video in a voice call.
    expect(await agent.page.locator('#videos').isHidden()).toBe(true);

    // A new link for the customer: its page says so and stops; the agent's stays in the call.
    const rotated = await fetch(`${t.url}/v1/calls/${call.id}/link`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${call.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ side: 'customer' }),
    });
    expect(rotated.status).toBe(200);
    await customer.page.waitForSelector('[data-state="replaced"]', WAIT);
    expect(await customer.page.getByTestId('status').textContent()).toContain('sustituido');
    expect(await agent.page.getAttribute('#app', 'data-state')).toBe('live');
    expectKeyInNoUrl(agent, keyOf(call.agentUrl), keyOf(call.customerUrl));
    expectKeyInNoUrl(customer, keyOf(call.agentUrl), keyOf(call.customerUrl));
    expect([...agent.errors, ...customer.errors]).toEqual([]);

    // A browser that refuses the microphone: a clear state, and Join stays to try again.
    const denied = await browser.newContext();
    opened.push(denied);
    const page = await denied.newPage();
    await page.addInitScript(() => {
      navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));
    });
    await page.goto(`${t.url}${new URL(call.agentUrl).pathname}${new URL(call.agentUrl).hash}`);
    // The device check is refused the same way, and says so.
    await page.getByTestId('check-devices').click();
    await page.waitForSelector('[data-state="micDenied"]', WAIT);
    await page.evaluate(() => (document.getElementById('app')!.dataset.state = 'setup'));
    await page.getByTestId('join').click();
    await page.waitForSelector('[data-state="micDenied"]', WAIT);
    expect(await page.getByTestId('status').textContent()).toContain('microphone is blocked');
    expect(await page.getByTestId('join').isVisible()).toBe(true);

    // A link without a key, or with a wrong one.
    await page.goto(`${t.url}/call/${call.id}`);
    await page.waitForSelector('[data-state="invalid"]', WAIT);
    await page.goto(`${t.url}/call/${call.id}#k=wrong`);
    await page.waitForSelector('[data-state="invalid"]', WAIT);
    for (const context of [agent.context, customer.context, denied]) await context.close();
  }, TEST_TIMEOUT_MS);

  /** A video call in test mode with both pages in it; what the agent's page receives on its signalling socket. */
  async function videoCallInProgress() {
    const call = await createCall('test', { agent_language: 'en', customer_language: 'es', agent_name: 'Alice', customer_name: 'Matti', video: true });
    const agent = await open(call.agentUrl);
    const customer = await open(call.customerUrl);
    const agentReceived: string[] = [];
    agent.page.on('websocket', (ws) => {
      if (ws.url().includes('/media/signal/')) ws.on('framereceived', ({ payload }) => agentReceived.push(String(payload)));
    });
    // The configurations the agent's page gives its peer connection, as the connection took them.
    await agent.page.evaluate(() => {
      const applied: unknown[] = [];
      (window as unknown as { __applied: unknown[] }).__applied = applied;
      const setConfiguration = RTCPeerConnection.prototype.setConfiguration;
      RTCPeerConnection.prototype.setConfiguration = function (this: RTCPeerConnection, configuration?: RTCConfiguration) {
        setConfiguration.call(this, configuration);
        applied.push(this.getConfiguration().iceServers);
      };
    });
    for (const side of [agent, customer]) await side.page.getByTestId('join').click();
    for (const side of [agent, customer]) await side.page.waitForSelector('[data-state="live"]', WAIT);
    await expect.poll(() => remoteVideoWidth(agent.page), WAIT).toBeGreaterThan(0);
    return { call, agent, customer, agentReceived };
  }

  /**
   * One such call for the two tests below, which the first leaves as it found it (every forgery refused, both
   * pages in the call): a two-page video call costs about 0.7 s of CPU for each second it lasts, and its start
   * more; the second ends it.
   */
  let sharedVideoCall: ReturnType<typeof videoCallInProgress> | undefined;
  const videoCall = () => (sharedVideoCall ??= videoCallInProgress());

  it("a frame forged on the customer's signalling socket never shows on the agent's page", async () => {
    const { call, agent, customer, agentReceived } = await videoCall();

    // Anyone holding the customer's link opens its signalling socket and sends what only the server says.
    const join = await (await fetch(`${t.url}/calls/public/${call.id}`, { headers: { 'X-Call-Key': keyOf(call.customerUrl) } })).json();
    const signalUrl = `${t.url.replace(/^http/, 'ws')}${join.signal.path}?token=${encodeURIComponent(join.signal.token)}`;
    const refund = 'I confirm the refund of 5,000 EUR to this caller';
    const forgeries: Array<[unknown, () => Promise<unknown>]> = [
      [
        { type: 'caption', id: 'cap_a1_1', final: true, original: refund, translated: refund, language: 'es', source_language: 'en' },
        () => agent.page.locator('.caption', { hasText: refund }).waitFor(WAIT),
      ],
      [{ type: 'peer', present: false }, () => agent.page.getByTestId('peer-state').filter({ hasText: 'left the call' }).waitFor(WAIT)],
    ];
    const before = agentReceived.length;
    for (const [frame, shown] of forgeries) {
      const forger = await Signal.open(signalUrl);
      forger.send(frame);
      // A server that passed it on would have the page show it: that ends the wait too, and fails.
      const outcome = await Promise.race([forger.closed, shown().then(() => 'shown on the agent page', () => 'never shown')]);
      expect(outcome, JSON.stringify(frame)).toEqual(SIGNAL_REFUSED.notPeerSignal);
    }
    // A frame sent after them arrives in its envelope; all that came meanwhile is the customer's page's, in theirs.
    const marker = await Signal.open(signalUrl);
    marker.send({ type: 'candidate', candidate: { candidate: '', sdpMid: 'marker', sdpMLineIndex: 0 } });
    await expect.poll(() => agentReceived.some((text) => text.includes('"sdpMid":"marker"')), WAIT).toBe(true);
    marker.ws.close();
    // Besides those, only the server's own words: test mode's placeholder captions of what the customer's microphone said.
    const serversPlaceholder = (text: string) => {
      const frame = JSON.parse(text) as { type: string; original?: string };
      return frame.type === 'caption' && /^\[[a-z]{2}\] speech \d+\.\d s$/.test(frame.original ?? '');
    };
    expect(agentReceived.slice(before).filter((text) => !text.startsWith('{"type":"peer_signal","signal":{') && !serversPlaceholder(text))).toEqual([]);
    expect(await agent.page.locator('.caption', { hasText: refund }).count()).toBe(0);
    expect(await agent.page.getByTestId('peer-state').textContent()).not.toContain('left the call');
    expect(await remoteVideoWidth(agent.page)).toBeGreaterThan(0);
    expect([...agent.errors, ...customer.errors]).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('fresh TURN credentials on the signalling socket go to the page\'s peer connection', async () => {
    const { call, agent, customer, agentReceived } = await videoCall();
    const join = await (await fetch(`${t.url}/calls/public/${call.id}`, { headers: { 'X-Call-Key': keyOf(call.agentUrl) } })).json();
    // Half the TURN credentials' lifetime on: the pages get fresh ones and give them to their connection.
    const wallClock = t.server.app.now;
    try {
      t.server.app.now = () => Date.now() + 300_000;
      await expect.poll(() => agentReceived.find((text) => text.startsWith('{"type":"ice_servers"')), WAIT).toBeDefined();
    } finally {
      t.server.app.now = wallClock;
    }
    const renewed = JSON.parse(agentReceived.find((text) => text.startsWith('{"type":"ice_servers"'))!).ice_servers;
    const expiryOf = (servers: Array<{ username?: string }>) => Number(servers.at(-1)!.username!.split(':')[0]);
    expect(expiryOf(renewed)).toBeGreaterThanOrEqual(expiryOf(join.ice_servers) + 300);
    await expect.poll(() => agent.page.evaluate(() => (window as unknown as { __applied: unknown[] }).__applied.at(-1)), WAIT).toEqual(
      renewed.map((server: { urls: string | string[] }) => ({ ...server, urls: [server.urls].flat() })),
    );
    expect([...agent.errors, ...customer.errors]).toEqual([]);
    for (const side of [agent, customer]) await side.context.close();
  }, TEST_TIMEOUT_MS);

  it('an integrator page on another origin joins with the join response directly (CORS), speaks, hears, and hangs up', async () => {
    // The example of examples/ served from its own origin (another port).
    const examples = http.createServer(async (req, res) => {
      const file = new URL(req.url!, 'http://x').pathname.slice(1);
      if (!['call-client.html', 'call-client.js'].includes(file)) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': file.endsWith('.js') ? 'text/javascript' : 'text/html' });
      res.end(await readFile(path.join('examples', file)));
    });
    await new Promise<void>((resolve) => examples.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(examples.address() as { port: number }).port}`;
    try {
      const call = await createCall('test', { agent_language: 'en', video: false });
      const context = await browser.newContext();
      opened.push(context);
      const page = await context.newPage();
      const urls: string[] = [];
      page.on('request', (request) => urls.push(request.url()));
      page.on('websocket', (ws) => urls.push(ws.url()));
      const apiOrigin = t.url;
      expect(new URL(apiOrigin).origin).not.toBe(origin);
      await page.goto(`${origin}/call-client.html?server=${encodeURIComponent(apiOrigin)}#call=${call.id}&k=${keyOf(call.customerUrl)}`);
      await page.waitForSelector('[data-state="ready to join"]', WAIT);
      await page.fill('#language', 'de');
      await page.fill('#name', 'Kim');
      await page.click('#join');
      await page.waitForSelector('[data-state="in the call"]', WAIT);
      // Test mode: the side hears its own voice back.
      await expect.poll(() => page.evaluate(() => Number(document.body.dataset.chunks || 0)), WAIT).toBeGreaterThan(10);
      const agentView = await fetch(`${t.url}/calls/public/${call.id}`, { headers: { 'X-Call-Key': keyOf(call.agentUrl) } });
      expect(await agentView.json()).toMatchObject({ other_name: 'Kim', other_language: 'de' });
      await page.click('#hang-up');
      await page.waitForSelector('[data-state="left"]', WAIT);
      // Preflighted requests (X-Call-Key) went to the API's origin; the key was in none of their URLs.
      expect(urls.some((url) => url.startsWith(`${apiOrigin}/calls/public/${call.id}/me`))).toBe(true);
      for (const url of urls) expect(url.split('#')[0]).not.toContain(keyOf(call.customerUrl));
      await context.close();
    } finally {
      await new Promise((resolve) => examples.close(resolve));
    }
  }, TEST_TIMEOUT_MS);

  it('a lost network: the page says so, retries with backoff, and is back in the call when the network is', async () => {
    const call = await createCall('test', { agent_language: 'en', customer_language: 'de', video: false });
    // The customer reaches the server through a proxy the test can cut.
    const proxy = new TcpProxy({ host: '127.0.0.1', port: Number(new URL(t.url).port) });
    const port = await proxy.start();
    try {
      const customer = await open(call.customerUrl, `http://127.0.0.1:${port}`);
      await customer.page.getByTestId('join').click();
      await customer.page.waitForSelector('[data-state="live"]', WAIT);
      await expect.poll(async () => (await mediaOf(customer.page))!.chunksPlayed, WAIT).toBeGreaterThan(5);

      await proxy.kill();
      await customer.page.waitForSelector('[data-state="offline"]', WAIT);
      expect(await customer.page.getByTestId('status').textContent()).toMatch(/Verbindung verloren/);
      await proxy.start();
      await customer.page.waitForSelector('[data-state="live"]', WAIT);
      const played = (await mediaOf(customer.page))!.chunksPlayed;
      await expect.poll(async () => (await mediaOf(customer.page))!.chunksPlayed, WAIT).toBeGreaterThan(played + 5);
      expect(customer.errors).toEqual([]);
      await customer.context.close();
    } finally {
      await proxy.kill();
    }
  }, TEST_TIMEOUT_MS);

  it('live mode: a balance that runs out pauses interpretation on both pages; a top-up resumes it', async () => {
    t.server.media.configure({ billingIntervalMs: 200 });
    // 0.6 per minute: 0.02 pays two seconds of interpretation.
    const call = await createCall('live', { agent_language: 'en', customer_language: 'es', video: false }, 0.02);
    const agent = await open(call.agentUrl);
    const customer = await open(call.customerUrl);
    try {
      for (const side of [agent, customer]) await side.page.getByTestId('join').click();
      await agent.page.waitForSelector('[data-state="live"]', WAIT);
      await expect.poll(() => agent.page.getByTestId('notice').textContent(), WAIT).toContain('Interpretation is paused');
      await expect.poll(() => customer.page.getByTestId('notice').textContent(), WAIT).toContain('La interpretación está en pausa');
      expect(await agent.page.getByRole('alert').textContent()).toContain('prepaid balance has run out');
      const { response } = await t.admin.POST('/admin/orgs/{org_id}/credit', { params: { path: { org_id: call.orgId } }, body: { amount: 5 } });
      expect(response.status).toBe(200);
      await agent.page.getByTestId('notice').waitFor({ state: 'hidden', ...WAIT });
      await customer.page.getByTestId('notice').waitFor({ state: 'hidden', ...WAIT });
      expect([...agent.errors, ...customer.errors]).toEqual([]);
    } finally {
      t.server.media.configure({ billingIntervalMs: 5_000 });
      for (const side of [agent, customer]) await side.context.close();
    }
  }, TEST_TIMEOUT_MS);

  /** What on the call page is the other person's or the browser's own: spoken words in captions, names, device names. */
  const NOT_THE_PAGES_WORDS = ['.caption span', '.caption small', '.caption strong', '#other-name', 'select'];

  /** Contrast ratio (WCAG) of an element's text colour against the background of the nearest ancestor that has one. */
  const contrastOf = (page: Page, selector: string) =>
    page.evaluate((selector) => {
      const rgb = (colour: string) => colour.match(/[\d.]+/g)!.slice(0, 4).map(Number);
      const luminance = ([r, g, b]: number[]) =>
        [r, g, b].map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4)).reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
      const element = document.querySelector(selector)!;
      let back: Element | null = element;
      while (back && (getComputedStyle(back).backgroundColor === 'rgba(0, 0, 0, 0)' || rgb(getComputedStyle(back).backgroundColor)[3] === 0)) back = back.parentElement;
      const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(rgb(getComputedStyle(back ?? document.body).backgroundColor))];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    }, selector);

  it('at 1280x800 in Spanish: device check, waiting/joined/left, focus after Join, newest captions in view, contrast, axe, no English', async () => {
    const call = await createCall('live', { agent_language: 'en', customer_language: 'es', agent_name: 'Ilona', customer_name: 'Matti', video: true }, 10, 'Zeta Oy');
    const desktop = { width: 1280, height: 800 };
    const agent = await open(call.agentUrl, t.url, { viewport: desktop });
    const customer = await open(call.customerUrl, t.url, { viewport: desktop, locale: 'es-ES' });
    const english = () => englishWordsOn(customer.page, 'es', NOT_THE_PAGES_WORDS);
    try {
      await customer.page.getByTestId('join').waitFor(WAIT);
      expect(await customer.page.getAttribute('html', 'lang')).toBe('es');
      expect(await english()).toEqual([]);
      expect(await seriousAxeViolations(customer.page)).toEqual([]);

      // The device check: microphones and cameras to choose from, the level moving, the camera's picture.
      await customer.page.getByTestId('check-devices').click();
      await customer.page.locator('#device-fields').waitFor(WAIT);
      const microphones = await customer.page.locator('#microphone option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value));
      expect(microphones.length).toBeGreaterThanOrEqual(2);
      expect(await customer.page.locator('#camera-select option').count()).toBeGreaterThanOrEqual(1);
      await customer.page.getByTestId('microphone').selectOption(microphones[1]!);
      await expect.poll(() => customer.page.getByTestId('mic-level').evaluate((meter: HTMLMeterElement) => meter.value), WAIT).toBeGreaterThan(0.02);
      await expect.poll(() => customer.page.getByTestId('preview').evaluate((video: HTMLVideoElement) => video.videoWidth), WAIT).toBeGreaterThan(0);
      expect(await english()).toEqual([]);
      expect(await seriousAxeViolations(customer.page)).toEqual([]);

      // The agent joins first: alone, waiting for the customer; focus stays in the call's controls.
      await agent.page.getByTestId('join').click();
      await agent.page.waitForSelector('[data-state="live"]', WAIT);
      await agent.page.waitForSelector('[data-peer="alone"]', WAIT);
      expect(await agent.page.getByTestId('peer-state').textContent()).toBe('Waiting for Matti to join…');
      expect(await agent.page.evaluate(() => document.activeElement?.id)).toBe('mute');

      // The customer joins with the microphone chosen in the check.
      await customer.page.getByTestId('join').click();
      await customer.page.waitForSelector('[data-state="live"]', WAIT);
      expect(await customer.page.evaluate(() => document.activeElement?.id)).toBe('mute');
      await agent.page.waitForSelector('[data-peer="joined"]', WAIT);
      // Joined, and soon speaking (the fake microphone never stops).
      expect(await agent.page.getByTestId('peer-state').textContent()).toMatch(/^Matti (joined the call|is speaking)$/);
      await customer.page.waitForSelector('[data-peer="joined"]', WAIT);
      expect(
        await customer.page.evaluate(() => (window as unknown as { __callPage: { stream: MediaStream } }).__callPage.stream.getAudioTracks()[0]!.getSettings().deviceId),
      ).toBe(microphones[1]);

      // Captions keep coming; the newest is in view, above the control bar, never under it.
      await expect.poll(() => customer.page.locator('.caption').count(), WAIT).toBeGreaterThanOrEqual(2);
      await expect.poll(() => agent.page.locator('.caption').count(), WAIT).toBeGreaterThanOrEqual(2);
      for (const side of [agent, customer]) {
        const placed = await side.page.evaluate(() => {
          const newest = [...document.querySelectorAll('.caption')].at(-1)!.getBoundingClientRect();
          const log = document.getElementById('captions-log')!.getBoundingClientRect();
          const controls = document.getElementById('controls')!.getBoundingClientRect();
          return { newestBottom: newest.bottom, newestTop: newest.top, logTop: log.top, logBottom: log.bottom, controlsTop: controls.top, pageScrolls: document.documentElement.scrollHeight > innerHeight };
        });
        expect(placed.newestBottom).toBeLessThanOrEqual(placed.logBottom + 1);
        expect(placed.newestTop).toBeGreaterThanOrEqual(placed.logTop - 1);
        expect(placed.logBottom).toBeLessThanOrEqual(placed.controlsTop);
        expect(placed.pageScrolls).toBe(false);
      }

      // The line saying what the other side does, in its "speaking" colour, reads at 4.5:1 at least.
      for (const side of [agent, customer]) {
        await side.page.evaluate(() => (document.getElementById('app')!.dataset.otherSpeaking = 'true'));
        expect(await contrastOf(side.page, '#peer-state')).toBeGreaterThanOrEqual(4.5);
      }
      expect(await english()).toEqual([]);
      for (const side of [agent, customer]) expect(await seriousAxeViolations(side.page)).toEqual([]);
      const shots = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots' : tmp;
      await customer.page.screenshot({ path: path.join(shots, 'call-desktop-es.png') });

      // The customer leaves: the agent's page says so.
      await customer.page.getByTestId('hang-up').click();
      await agent.page.waitForSelector('[data-peer="left"]', WAIT);
      expect(await agent.page.getByTestId('peer-state').textContent()).toBe('Matti left the call');
      expect(await english()).toEqual([]);
      expect([...agent.errors, ...customer.errors]).toEqual([]);
    } finally {
      for (const side of [agent, customer]) await side.context.close();
    }
  }, TEST_TIMEOUT_MS);

  for (const [language, locale, colorScheme] of [['de', 'de-DE', 'light'], ['ar', 'ar-EG', 'dark']] as const) {
    it(`in ${language} (${colorScheme}): no English word before and after Join, with the device check; no serious axe violation`, async () => {
      const call = await createCall('test', { agent_language: 'en', customer_language: language, agent_name: 'Ilona', video: true }, 10, 'Zeta Oy');
      const customer = await open(call.customerUrl, t.url, { locale, colorScheme });
      const english = () => englishWordsOn(customer.page, language, NOT_THE_PAGES_WORDS);
      try {
        await customer.page.getByTestId('join').waitFor(WAIT);
        expect(await customer.page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
        await customer.page.getByTestId('check-devices').click();
        await expect.poll(() => customer.page.getByTestId('preview').evaluate((video: HTMLVideoElement) => video.videoWidth), WAIT).toBeGreaterThan(0);
        expect(await english()).toEqual([]);
        expect(await seriousAxeViolations(customer.page)).toEqual([]);
        await customer.page.getByTestId('join').click();
        await customer.page.waitForSelector('[data-peer="alone"]', WAIT);
        expect(await english()).toEqual([]);
        expect(await seriousAxeViolations(customer.page)).toEqual([]);
        await customer.page.getByTestId('hang-up').click();
        await customer.page.waitForSelector('[data-state="left"]', WAIT);
        expect(await english()).toEqual([]);
        expect(customer.errors).toEqual([]);
      } finally {
        await customer.context.close();
      }
    }, TEST_TIMEOUT_MS);
  }
});
