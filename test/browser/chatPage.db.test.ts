// The customer's chat page (`/chat/{session_id}#k=<key>`) in chromium against the real server: a
// translated conversation that updates live, text and voice (fake microphone) from the customer,
// typing, closing, a replaced link, a missing key, and an API error shown as a notice.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, PAGE_WAIT_MS, recordCspViolations } from '../support/browser.js';
import { axeOncePerLayout, englishWordsOn, seriousAxeViolations } from '../support/pageChecks.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const WAIT = { timeout: PAGE_WAIT_MS };
const POLL = { timeout: PAGE_WAIT_MS, interval: 200 };

/** A mono 16-bit PCM WAV: a gliding tone with a slow tremolo, so the fake microphone is never silent. */
function toneWav(seconds: number, sampleRate = 48_000): Buffer {
  const samples = seconds * sampleRate;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  let phase = 0;
  for (let i = 0; i < samples; i++) {
    const t = i / sampleRate;
    phase += (2 * Math.PI * (300 + 200 * Math.sin(2 * Math.PI * 0.5 * t))) / sampleRate;
    const level = 0.35 + 0.25 * Math.sin(2 * Math.PI * 3 * t);
    wav.writeInt16LE(Math.round(Math.sin(phase) * level * 32767), 44 + i * 2);
  }
  return wav;
}

describe('the customer chat page in chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let tmp: string;
  let wav: Buffer;

  beforeAll(async () => {
    t = await startTestServer();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'lia-chat-page-'));
    wav = toneWav(4);
    const wavPath = path.join(tmp, 'microphone.wav');
    await writeFile(wavPath, wav);
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
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The page at the test server for a customer_url (whose origin is the configured PUBLIC_BASE_URL). */
  const pageUrl = (customerUrl: string) => {
    const link = new URL(customerUrl);
    expect(link.pathname).toMatch(/^\/chat\/ses_/);
    expect(link.hash).toMatch(/^#k=.+/);
    return `${t.url}${link.pathname}${link.hash}`;
  };

  /** A new page that records requests leaving the server and script errors. */
  async function openPage(url: string, locale?: string, colorScheme: 'light' | 'dark' = 'light', width = 420) {
    const page = await browser.newPage({ viewport: { width, height: 800 }, colorScheme, ...(locale ? { locale } : {}) });
    const foreign: string[] = [];
    const errors: string[] = [];
    // The page must work under its own Content-Security-Policy: anything it blocks is an error.
    recordCspViolations(page, errors);
    page.on('request', (request) => {
      const target = request.url();
      if (!target.startsWith(t.url) && !target.startsWith('blob:') && !target.startsWith('data:')) foreign.push(target);
    });
    page.on('pageerror', (error) => errors.push(String(error)));
    // Notes the multipart fields the page builds (the browser does not expose a Blob body to the test),
    // and when, by the page's own clock, it announces typing (the test's clock would add its own delays).
    await page.addInitScript(() => {
      const fields: { name: string; type?: string; filename?: string | null; size?: number; value?: string }[] = [];
      (window as unknown as { formFields: typeof fields }).formFields = fields;
      const typingPosts: number[] = [];
      (window as unknown as { typingPosts: number[] }).typingPosts = typingPosts;
      const originalFetch = window.fetch;
      window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
        if (init?.method === 'POST' && String(input).endsWith('/typing')) typingPosts.push(Date.now());
        return originalFetch(input, init);
      };
      const append = FormData.prototype.append;
      FormData.prototype.append = function (this: FormData, name: string, value: string | Blob, filename?: string) {
        if (value instanceof Blob) fields.push({ name, type: value.type, filename: filename ?? null, size: value.size });
        else fields.push({ name, value });
        return (append as (...args: unknown[]) => void).apply(this, [name, value, filename].slice(0, arguments.length));
      } as typeof FormData.prototype.append;
    });
    const answer = await page.goto(url);
    // Framed by integrators' sites, yet locked to its own scripts.
    expect(answer!.headers()['content-security-policy']).toMatch(/default-src 'self'.*script-src 'self'.*frame-ancestors \*/);
    expect(answer!.headers()['x-content-type-options']).toBe('nosniff');
    return { page, foreign, errors };
  }

  const texts = (page: Page, testId: string) => page.getByTestId(testId).allTextContents();

  it('shows the conversation translated and live, sends text and voice, follows typing, a new link and closing', async () => {
    const orgId = await t.createOrg({ name: 'Acme Support' });
    const { key } = await t.createKey(orgId, 'test');
    const api = t.client(key);

    const created = await api.POST('/v1/sessions', {
      body: { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice' },
    });
    expect(created.response.status).toBe(201);
    const session = created.data!;
    const session_id = session.id;
    const sessionPath = { params: { path: { session_id } } };
    const listMessages = async () => {
      const { data, response } = await api.GET('/v1/sessions/{session_id}/messages', sessionPath);
      expect(response.status).toBe(200);
      return data!.messages;
    };

    // A message posted before the page opens comes with the history.
    const first = await api.POST('/v1/sessions/{session_id}/messages', {
      ...sessionPath,
      body: { sender: 'agent', text: 'Welcome to Acme support.', author_name: 'Alice' },
    });
    expect(first.response.status).toBe(201);

    const { page, foreign, errors } = await openPage(pageUrl(session.customer_url!));
    await expect.poll(() => page.getByTestId('agent-name').textContent(), POLL).toBe('Alice');
    expect(await page.getByTestId('company').textContent()).toBe('Acme Support');
    await page.getByTestId('message-text').filter({ hasText: '[fi] Welcome to Acme support.' }).waitFor(WAIT);

    // An agent's message arrives live, in the customer's language, with the original at hand.
    const sent = await api.POST('/v1/sessions/{session_id}/messages', {
      ...sessionPath,
      body: { sender: 'agent', text: 'Hello, how can I help you?', author_name: 'Alice' },
    });
    expect(sent.response.status).toBe(201);
    const live = page.getByTestId('message').filter({ hasText: '[fi] Hello, how can I help you?' });
    await live.waitFor(WAIT);
    expect(await live.getByTestId('message-text').textContent()).toBe('[fi] Hello, how can I help you?');
    const original = live.getByTestId('message-original');
    expect(await original.isVisible()).toBe(false);
    await live.getByText('Show original').click();
    await original.waitFor({ state: 'visible', ...WAIT });
    expect(await original.textContent()).toBe('Hello, how can I help you?');
    expect(await page.getByTestId('message').count()).toBe(2); // history + stream, no duplicates

    // The customer types (typing announced at most every 2 s) and sends with Enter, then with the button.
    const input = page.getByTestId('composer-input');
    await input.click();
    const typingStarted = Date.now();
    await input.pressSequentially('Tilaukseni on myöhässä.', { delay: 120 });
    const typingTook = Date.now() - typingStarted;
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await listMessages()).filter((m) => m.sender === 'customer').map((m) => m.text), POLL)
      .toEqual(['Tilaukseni on myöhässä.']);
    await page.getByTestId('message-text').filter({ hasText: 'Tilaukseni on myöhässä.' }).waitFor(WAIT);
    expect(await input.inputValue()).toBe('');
    const typingPosts = await page.evaluate(() => (window as unknown as { typingPosts: number[] }).typingPosts);
    expect(typingPosts.length).toBeGreaterThanOrEqual(1);
    expect(typingPosts.length).toBeLessThanOrEqual(Math.floor(typingTook / 2000) + 1);
    for (let i = 1; i < typingPosts.length; i++) expect(typingPosts[i] - typingPosts[i - 1]).toBeGreaterThanOrEqual(1900);

    await input.fill('Tilausnumero on 4711.');
    await page.getByTestId('send-button').click();
    await expect
      .poll(async () => (await listMessages()).filter((m) => m.sender === 'customer').map((m) => m.text), POLL)
      .toEqual(['Tilaukseni on myöhässä.', 'Tilausnumero on 4711.']);
    await expect.poll(() => texts(page, 'message-text'), POLL).toContain('Tilausnumero on 4711.');
    // The customer's own messages are shown once (the POST answer and the stream carry the same id).
    await expect.poll(() => page.getByTestId('message').count(), POLL).toBe(4);

    // The agent's typing shows the indicator, which goes away by itself.
    const typing = await api.POST('/v1/sessions/{session_id}/typing', {
      ...sessionPath,
      body: { sender: 'agent', author_name: 'Alice' },
    });
    expect(typing.response.status).toBe(204);
    await page.getByTestId('typing').waitFor({ state: 'visible', ...WAIT });
    expect(await page.getByTestId('typing').textContent()).toContain('Alice is typing…');
    await page.getByTestId('typing').waitFor({ state: 'hidden', ...WAIT });

    // A voice message from the fake microphone: record, stop, sent as multipart `audio`.
    const uploads: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith(`/chat/public/${session_id}/voice`)) {
        uploads.push(request.headers()['content-type'] ?? '');
      }
    });
    const record = page.getByTestId('record-button');
    expect(await record.isEnabled()).toBe(true);
    await record.click();
    await page.getByTestId('recording').waitFor({ state: 'visible', ...WAIT });
    expect(await record.getAttribute('aria-pressed')).toBe('true');
    // Record for about three seconds of the page's own clock.
    await page.waitForFunction(
      () => /Recording 0:0[3-9]/.test(document.getElementById('recording-text')?.textContent ?? ''),
      null,
      WAIT,
    );
    const voiceAnswer = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith(`/chat/public/${session_id}/voice`),
      WAIT,
    );
    await record.click();
    const voiceResponse = await voiceAnswer;
    expect(voiceResponse.status(), await voiceResponse.text()).toBe(201);
    const voiceMessage = page.locator('[data-testid="message"][data-kind="voice"][data-sender="customer"]');
    await voiceMessage.waitFor(WAIT);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatch(/^multipart\/form-data; boundary=/);
    const [field, hint] = await page.evaluate(() => (window as unknown as { formFields: unknown[] }).formFields);
    expect(field).toMatchObject({ name: 'audio', type: 'audio/webm;codecs=opus', filename: 'voice-message.webm' });
    // The page's language goes with the recording, as with a text message (language_hint).
    expect(hint).toEqual({ name: 'language_hint', value: await page.evaluate(() => navigator.language) });
    const player = voiceMessage.getByTestId('audio-player');
    expect(await player.evaluate((audio: HTMLAudioElement) => audio.controls)).toBe(true);
    await expect.poll(() => player.evaluate((audio: HTMLAudioElement) => audio.src), POLL).toMatch(/^blob:/);
    // The recording fetched with the key decodes in the browser and lasts about as long as recorded.
    await expect
      .poll(() => player.evaluate((audio: HTMLAudioElement) => (Number.isFinite(audio.duration) ? audio.duration : 0)), POLL)
      .toBeGreaterThan(1.5);
    await expect.poll(async () => (await listMessages()).filter((m) => m.kind === 'voice'), POLL).toHaveLength(1);
    const [storedVoice] = (await listMessages()).filter((m) => m.kind === 'voice');
    expect(storedVoice.sender).toBe('customer');
    expect(storedVoice.audio_url).toBeTruthy();
    expect(storedVoice.duration_seconds).toBeGreaterThan(1.5);
    expect(await voiceMessage.getByTestId('message-text').textContent()).toBe(storedVoice.customer_text);

    // An agent's voice message (a WAV posted through the API) plays on the page too.
    const form = new FormData();
    form.append('sender', 'agent');
    form.append('author_name', 'Alice');
    form.append('audio', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'agent.wav');
    const agentVoice = await fetch(`${t.url}/v1/sessions/${session_id}/voice`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: form,
    });
    expect(agentVoice.status).toBe(201);
    const agentVoiceMessage = page.locator('[data-testid="message"][data-kind="voice"][data-sender="agent"]');
    await agentVoiceMessage.waitFor(WAIT);
    await expect
      .poll(() => agentVoiceMessage.getByTestId('audio-player').evaluate((audio: HTMLAudioElement) => audio.duration), POLL)
      .toBeCloseTo(4, 0);

    // A new customer link: the page open with the old link and a page opened with it are refused.
    const relinked = await api.POST('/v1/sessions/{session_id}/customer-link', sessionPath);
    expect(relinked.response.status).toBe(200);
    const newUrl = relinked.data!.customer_url!;
    expect(newUrl).not.toBe(session.customer_url);
    await page.getByTestId('invalid-link').waitFor({ state: 'visible', ...WAIT });
    expect(await page.getByTestId('invalid-link').textContent()).toContain('This chat link is no longer valid');
    expect(await page.getByTestId('message').count()).toBe(0);
    expect(await page.getByTestId('composer-input').isVisible()).toBe(false);

    const stale = await openPage(pageUrl(session.customer_url!));
    await stale.page.getByTestId('invalid-link').waitFor({ state: 'visible', ...WAIT });
    expect(await stale.page.getByTestId('message').count()).toBe(0);

    // The new link shows the whole conversation and works.
    const fresh = await openPage(pageUrl(newUrl));
    await expect.poll(() => fresh.page.getByTestId('message').count(), POLL).toBe(6);
    expect(await fresh.page.getByTestId('invalid-link').isVisible()).toBe(false);
    expect(await fresh.page.getByTestId('composer-input').isEnabled()).toBe(true);

    // Closing the session: the banner appears live and the composer is disabled.
    const closed = await api.POST('/v1/sessions/{session_id}/close', sessionPath);
    expect(closed.response.status).toBe(200);
    await fresh.page.getByTestId('closed-banner').waitFor({ state: 'visible', ...WAIT });
    expect(await fresh.page.getByTestId('composer-input').isDisabled()).toBe(true);
    expect(await fresh.page.getByTestId('send-button').isDisabled()).toBe(true);
    expect(await fresh.page.getByTestId('record-button').isDisabled()).toBe(true);
    expect(await fresh.page.getByTestId('message').count()).toBe(6);

    // Opened again after closing: closed from the start, the conversation still readable.
    await fresh.page.reload();
    await fresh.page.getByTestId('closed-banner').waitFor({ state: 'visible', ...WAIT });
    await expect.poll(() => fresh.page.getByTestId('message').count(), POLL).toBe(6);
    expect(await fresh.page.getByTestId('composer-input').isDisabled()).toBe(true);

    for (const opened of [{ foreign, errors }, stale, fresh]) {
      expect(opened.foreign).toEqual([]);
      expect(opened.errors).toEqual([]);
    }
    await Promise.all([page.close(), stale.page.close(), fresh.page.close()]);
  });

  it('a session closed while the page was connecting its stream shows as closed once the stream is open', async () => {
    const orgId = await t.createOrg();
    const api = t.client((await t.createKey(orgId, 'test')).key);
    const { data: session } = await api.POST('/v1/sessions', { body: { agent_language: 'en', customer_language: 'fi' } });
    const page = await browser.newPage();
    // The page has loaded the open session and asks for its stream; the session closes before the stream
    // begins, so the stream itself never carries session.closed.
    let streamAsked!: () => void;
    const asked = new Promise<void>((resolve) => (streamAsked = resolve));
    let releaseStream!: () => void;
    const released = new Promise<void>((resolve) => (releaseStream = resolve));
    await page.route('**/stream', async (route) => {
      streamAsked();
      await released;
      await route.continue();
    });
    await page.goto(pageUrl(session!.customer_url!));
    await asked;
    expect(await page.getByTestId('closed-banner').isVisible()).toBe(false);
    const closed = await api.POST('/v1/sessions/{session_id}/close', { params: { path: { session_id: session!.id } } });
    expect(closed.response.status).toBe(200);
    releaseStream();
    await page.getByTestId('closed-banner').waitFor({ state: 'visible', ...WAIT });
    expect(await page.getByTestId('composer-input').isDisabled()).toBe(true);
    await page.close();
  });

  it('shows the invalid-link state without a key or with a wrong one', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const { data: session } = await t.client(key).POST('/v1/sessions', {
      body: { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice' },
    });
    const link = new URL(session!.customer_url!);

    for (const url of [`${t.url}${link.pathname}`, `${t.url}${link.pathname}#k=sk_wrong_key`]) {
      const { page, foreign, errors } = await openPage(url);
      await page.getByTestId('invalid-link').waitFor({ state: 'visible', ...WAIT });
      expect(await page.getByTestId('composer-input').isVisible()).toBe(false);
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it("speaks the customer's language from the shared catalogue: Spanish words, Arabic right to left, English otherwise", async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const expected = { es: ['es', 'ltr', 'Escribe un mensaje…'], ar: ['ar', 'rtl', 'اكتب رسالة…'], fi: ['en', 'ltr', 'Write a message…'] };
    for (const [language, [lang, dir, placeholder]] of Object.entries(expected)) {
      const { data: session } = await t.client(key).POST('/v1/sessions', {
        body: { agent_language: 'en', customer_language: language, agent_name: 'Alice' },
      });
      const { page, errors } = await openPage(pageUrl(session!.customer_url!));
      await page.getByTestId('composer').waitFor({ state: 'visible', ...WAIT });
      await expect.poll(() => page.getAttribute('html', 'lang'), POLL).toBe(lang);
      expect(await page.getAttribute('html', 'dir')).toBe(dir);
      expect(await page.getByTestId('composer-input').getAttribute('placeholder')).toBe(placeholder);
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it('shows an API error (402 of a live organization without balance) as a notice and keeps the text', async () => {
    const orgId = await t.createOrg({ name: 'Broke Ltd', balance: 0 });
    const { key } = await t.createKey(orgId, 'live');
    const created = await t.client(key).POST('/v1/sessions', {
      body: { agent_language: 'en', customer_language: 'fi', agent_name: 'Bob' },
    });
    expect(created.response.status).toBe(201);

    const { page, errors } = await openPage(pageUrl(created.data!.customer_url!));
    await expect.poll(() => page.getByTestId('agent-name').textContent(), POLL).toBe('Bob');
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/messages'));
    await page.getByTestId('composer-input').fill('Hei, onko ketään paikalla?');
    await page.getByTestId('send-button').click();
    expect((await answer).status()).toBe(402);
    await page.getByTestId('notice').waitFor({ state: 'visible', ...WAIT });
    const detail = ((await (await answer).json()) as { detail: string }).detail;
    expect(await page.getByTestId('notice').textContent()).toContain(detail);
    expect(await page.getByTestId('composer-input').inputValue()).toBe('Hei, onko ketään paikalla?');
    expect(await page.getByTestId('message').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows an API error on a Spanish page in Spanish, without the English detail', async () => {
    const orgId = await t.createOrg({ name: 'Zeta Oy', balance: 0 });
    const { key } = await t.createKey(orgId, 'live');
    const { data: session } = await t.client(key).POST('/v1/sessions', { body: { agent_language: 'en', customer_language: 'es', agent_name: 'Ilona' } });
    const { page, errors } = await openPage(pageUrl(session!.customer_url!), 'es-ES');
    await page.getByTestId('composer').waitFor({ state: 'visible', ...WAIT });
    await page.getByTestId('composer-input').fill('¿Hay alguien ahí?');
    await page.getByTestId('send-button').click();
    await page.getByTestId('notice').waitFor({ state: 'visible', ...WAIT });
    expect(await page.getByTestId('notice-text').textContent()).toBe(
      'No se pudo enviar tu mensaje: el servicio no está disponible para esta empresa en este momento.',
    );
    expect(await englishWordsOn(page, 'es', AGENTS_OWN_TEXT)).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  /** What on the chat page is the agent's own: their messages (as translated for the customer) and originals. */
  const AGENTS_OWN_TEXT = ['.from-agent .text', '.from-agent .author', '.original p'];
  const axeOnce = axeOncePerLayout();

  for (const [language, locale, colorScheme] of [['es', 'es-ES', 'light'], ['de', 'de-DE', 'light'], ['ar', 'ar-EG', 'dark']] as const) {
    it(`in ${language} (${colorScheme}, 390 px): no English word outside the agent's own text, in every state; no serious axe violation`, async () => {
      const orgId = await t.createOrg({ name: 'Zeta Oy' });
      const { key } = await t.createKey(orgId, 'test');
      const api = t.client(key);
      const { data: session } = await api.POST('/v1/sessions', { body: { agent_language: 'en', customer_language: language, agent_name: 'Ilona' } });
      const sessionPath = { params: { path: { session_id: session!.id } } };
      await api.POST('/v1/sessions/{session_id}/messages', { ...sessionPath, body: { sender: 'agent', text: 'Welcome, how can I help you?' } });
      const voice = new FormData();
      voice.append('sender', 'agent');
      voice.append('audio', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'agent.wav');
      expect((await fetch(`${t.url}/v1/sessions/${session!.id}/voice`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: voice })).status).toBe(201);

      const { page, errors } = await openPage(pageUrl(session!.customer_url!), locale, colorScheme, 390);
      await expect.poll(() => page.getByTestId('message').count(), POLL).toBe(2);
      // A phone's width: nothing scrolls sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
      const english = () => englishWordsOn(page, language, AGENTS_OWN_TEXT);
      await page.locator('.original summary').first().click();
      // The agent's own words are English: the check sees them when it is not told to leave them out.
      expect(await englishWordsOn(page, language, [])).toEqual(expect.arrayContaining(['help', 'you']));
      expect(await english()).toEqual([]);
      expect(await axeOnce(page, 'messages')).toEqual([]);

      // The customer writes; the agent types.
      await page.getByTestId('composer-input').fill('Danke');
      await page.getByTestId('send-button').click();
      await expect.poll(() => page.getByTestId('message').count(), POLL).toBe(3);
      await api.POST('/v1/sessions/{session_id}/typing', { ...sessionPath, body: { sender: 'agent' } });
      await page.getByTestId('typing').waitFor({ state: 'visible', ...WAIT });
      expect(await english()).toEqual([]);

      // The screenshots of docs/chats.md are rewritten only when asked (UPDATE_SCREENSHOTS=1).
      if (process.env.UPDATE_SCREENSHOTS === '1' && language !== 'de') await page.screenshot({ path: `docs/screenshots/chat-${language}.png` });

      // Recording a voice message, then cancelling it.
      await page.getByTestId('record-button').click();
      await page.waitForFunction(() => /\d:0[1-9]/.test(document.getElementById('recording-text')?.textContent ?? ''), null, WAIT);
      expect(await english()).toEqual([]);
      await page.getByTestId('cancel-recording').click();
      await page.getByTestId('recording').waitFor({ state: 'hidden', ...WAIT });

      // Closed: the banner and the disabled composer.
      await api.POST('/v1/sessions/{session_id}/close', sessionPath);
      await page.getByTestId('closed-banner').waitFor({ state: 'visible', ...WAIT });
      expect(await english()).toEqual([]);
      expect(await axeOnce(page, 'closed')).toEqual([]);

      // A link without its key, and a replaced link.
      const link = new URL(session!.customer_url!);
      const missing = await openPage(`${t.url}${link.pathname}`, locale);
      await missing.page.getByTestId('invalid-link').waitFor({ state: 'visible', ...WAIT });
      expect(await englishWordsOn(missing.page, language, [])).toEqual([]);
      expect(await axeOnce(missing.page, 'link without its key')).toEqual([]);
      expect([...errors, ...missing.errors]).toEqual([]);
      await Promise.all([page.close(), missing.page.close()]);
    });
  }

  it('"Hola" as a first message from a Spanish page teaches the session Spanish: the agent\'s replies arrive in Spanish', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const api = t.client(key);
    const { data: session } = await api.POST('/v1/sessions', { body: { agent_language: 'en', agent_name: 'Ilona' } });
    expect(session!.customer_language).toBeNull();
    const sessionPath = { params: { path: { session_id: session!.id } } };

    const { page, errors } = await openPage(pageUrl(session!.customer_url!), 'es-ES');
    await page.getByTestId('composer').waitFor({ state: 'visible', ...WAIT });
    expect(await page.getAttribute('html', 'lang')).toBe('es');
    const posted = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/messages'));
    await page.getByTestId('composer-input').fill('Hola');
    await page.keyboard.press('Enter');
    expect((await posted).postDataJSON()).toEqual({ text: 'Hola', language_hint: 'es-ES' });
    await page.getByTestId('message-text').filter({ hasText: 'Hola' }).waitFor(WAIT);

    const learned = await api.GET('/v1/sessions/{session_id}', sessionPath);
    expect(learned.data!.customer_language).toBe('es-ES');
    const [hola] = (await api.GET('/v1/sessions/{session_id}/messages', sessionPath)).data!.messages;
    expect(hola).toMatchObject({ sender: 'customer', text: 'Hola', language: 'es-ES' });

    const reply = await api.POST('/v1/sessions/{session_id}/messages', { ...sessionPath, body: { sender: 'agent', text: 'Hello! How can I help you?' } });
    expect(reply.data!.customer_text).toBe('[es-ES] Hello! How can I help you?');
    await page.getByTestId('message-text').filter({ hasText: '[es-ES] Hello! How can I help you?' }).waitFor(WAIT);
    expect(await page.getByTestId('message').filter({ hasText: 'Hello!' }).locator('summary').textContent()).toBe('Ver original (inglés)');
    expect(errors).toEqual([]);
    await page.close();
  });
});
