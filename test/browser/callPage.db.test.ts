// The call page (`/call/{call_id}#k=<key>`) in chromium against the real server, two browser contexts
// (agent and customer) with fake microphone and camera: joining, PCM frames on the stream socket, WAV
// chunks played from the listen socket, WebRTC video between the pages, captions (live mode, the
// realtime stand-in), a language change, hang-ups, and the key in no requested URL.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { launchChromium, recordCspViolations } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const WAIT = { timeout: 20_000 };

/** A mono 16-bit PCM WAV of a gliding tone with a tremolo: the fake microphone is never silent. */
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
    wav.writeInt16LE(Math.round(Math.sin(phase) * (0.35 + 0.25 * Math.sin(2 * Math.PI * 3 * time)) * 32767), 44 + i * 2);
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

const remoteVideoWidth = (page: Page) => page.evaluate(() => (document.getElementById('remote-video') as HTMLVideoElement).videoWidth);

describe('the call page in chromium', () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let browser: Browser;
  let tmp: string;
  const opened: BrowserContext[] = [];

  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-call-page' });
    t = await startTestServer({ AUDIOSOCKET_PORT: '0', OPENAI_API_KEY: 'sk-call-page', OPENAI_REALTIME_URL: realtime.url });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'lia-call-page-'));
    const wavPath = path.join(tmp, 'microphone.wav');
    await writeFile(wavPath, toneWav(4));
    browser = await launchChromium([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
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
  async function open(link: string): Promise<Side> {
    const url = new URL(link);
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    opened.push(context);
    const page = await context.newPage();
    const urls: string[] = [];
    const errors: string[] = [];
    recordCspViolations(page, errors);
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('request', (request) => urls.push(request.url()));
    page.on('websocket', (ws) => urls.push(ws.url()));
    const answer = await page.goto(`${t.url}${url.pathname}${url.hash}`);
    expect(answer!.status()).toBe(200);
    expect(answer!.headers()['content-security-policy']).toMatch(/script-src 'self'.*frame-ancestors \*/);
    return { context, page, urls, errors };
  }

  async function createCall(mode: 'test' | 'live', body: Record<string, unknown>) {
    const orgId = await t.createOrg({ name: 'Acme Support', balance: 10 });
    const { key } = await t.createKey(orgId, mode);
    const res = await fetch(`${t.url}/v1/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    const call = await res.json();
    return { id: call.id as string, agentUrl: call.agent_url as string, customerUrl: call.customer_url as string, key };
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
    await agent.page.screenshot({ path: 'docs/screenshots/call-agent.png' });
    await customer.page.screenshot({ path: 'docs/screenshots/call-customer.png' });

    // A language change on the customer's side: the agent's page reconnects (no reload) and says so.
    const agentPlayed = (await mediaOf(agent.page))!.chunksPlayed;
    await customer.page.getByRole('button', { name: 'Mis ajustes' }).click();
    await customer.page.getByLabel('Idioma').selectOption('fr');
    await customer.page.getByTestId('save').click();
    await expect.poll(() => agent.page.getByTestId('peer-state').textContent(), WAIT).toContain('French');
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
  });
});
