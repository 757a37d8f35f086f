import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Interpreter, InterpreterCaption, InterpreterStatus } from '../../src/calls/media/interpreter.js';
import { PauseCaptions } from '../../src/interpretation/captions.js';
import { TRANSLATION_OUTPUT_LANGUAGES, translationModelSpeaks } from '../../src/interpretation/languages.js';
import {
  createOpenAiInterpreterFactory,
  type InterpreterLogLevel,
  type OpenAiInterpreterFactoryOptions,
} from '../../src/interpretation/openai/index.js';
import {
  FRAME_BYTES,
  negatePcm16,
  startRealtimeStandIn,
  type RealtimeStandIn,
  type RealtimeStandInConnection,
} from '../support/standins/realtimeStandIn.js';

/** Deterministic non-silent PCM16: `ms` of audio at 24 kHz, distinct per `seed`. */
function speech(ms: number, seed = 1): Buffer {
  const samples = (ms * 24_000) / 1000;
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const magnitude = 200 + ((i * 37 + seed * 101) % 9000);
    pcm.writeInt16LE(i % 2 ? magnitude : -magnitude, i * 2);
  }
  return pcm;
}

const silence = (ms: number) => Buffer.alloc(((ms * 24_000) / 1000) * 2);

type Log = { level: InterpreterLogLevel; message: string; details?: Record<string, unknown> };

interface Recorder {
  audio: Buffer[];
  captions: InterpreterCaption[];
  statuses: InterpreterStatus[];
  logs: Log[];
  /** The interpreter's callbacks, which record into the lists above. */
  onAudio(pcm: Buffer): void;
  onCaption(caption: InterpreterCaption): void;
  onStatus(status: InterpreterStatus): void;
  logger(level: InterpreterLogLevel, message: string, details?: Record<string, unknown>): void;
  output(): Buffer;
  finals(): InterpreterCaption[];
  states(): string[];
  /**
   * What `find` returns once it returns something: asked now and again after each thing recorded, never on a
   * clock (a loaded machine makes the wait longer, the test's own timeout bounds it).
   */
  until<T>(find: () => T | undefined | null | false): Promise<T>;
}

function recorder(): Recorder {
  const waiting = new Set<() => void>();
  const recorded = <T>(list: T[], item: T) => {
    list.push(item);
    for (const check of [...waiting]) check();
  };
  const r: Recorder = {
    audio: [],
    captions: [],
    statuses: [],
    logs: [],
    onAudio: (pcm) => recorded(r.audio, pcm),
    onCaption: (caption) => recorded(r.captions, caption),
    onStatus: (status) => recorded(r.statuses, status),
    logger: (level, message, details) => recorded(r.logs, { level, message, details }),
    output: () => Buffer.concat(r.audio),
    finals: () => r.captions.filter((caption) => caption.final),
    states: () => r.statuses.map((status) => status.state),
    until: (find) =>
      new Promise((resolve) => {
        const check = () => {
          const found = find();
          if (!found) return;
          waiting.delete(check);
          resolve(found);
        };
        waiting.add(check);
        check();
      }),
  };
  return r;
}

/**
 * From here on the interpreter's timers (caption pause, reconnect backoff, setup limit) run on a clock the test
 * moves (vi.advanceTimersByTime): what they decide then depends on the order of events, never on how late a
 * loaded machine delivers them. Undone after each test.
 */
const useTestClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

let standIn: RealtimeStandIn | null = null;
const interpreters: Interpreter[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(interpreters.splice(0).map((interpreter) => interpreter.close()));
  await standIn?.close();
  standIn = null;
});

function start(
  stand: RealtimeStandIn,
  direction: { source: string; target: string },
  overrides: Partial<OpenAiInterpreterFactoryOptions> = {},
) {
  const rec = recorder();
  const factory = createOpenAiInterpreterFactory({
    apiKey: stand.apiKey,
    realtimeUrl: stand.url,
    reconnect: { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 3 },
    captionPauseMs: 150,
    responseFallbackMs: 50,
    closeTimeoutMs: 1_000,
    // A loaded machine can take seconds over a local handshake; no test here is about the setup limit.
    setupTimeoutMs: 60_000,
    logger: rec.logger,
    ...overrides,
  });
  const interpreter = factory({
    sourceLanguage: direction.source,
    targetLanguage: direction.target,
    onAudio: rec.onAudio,
    onCaption: rec.onCaption,
    onStatus: rec.onStatus,
  });
  interpreters.push(interpreter);
  return { interpreter, rec };
}

const connected = (rec: Recorder, count = 1) =>
  rec.until(() => rec.states().filter((state) => state === 'connected').length >= count);

const appendedAudio = (connection: RealtimeStandInConnection, type: string) =>
  connection.events(type).map((event) => Buffer.from(String(event.audio), 'base64'));

describe('OpenAI realtime interpreter: translation endpoint', () => {
  it('uses /translations for a supported target, frames audio in 200 ms and delivers audio and captions', async () => {
    standIn = await startRealtimeStandIn();
    useTestClock();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'es' });
    expect(interpreter.provenance).toEqual({ engine: 'openai', model: 'gpt-realtime-translate' });
    await connected(rec);
    expect(rec.statuses).toEqual([{ state: 'connected' }]);

    const connection = standIn.connections[0]!;
    expect(connection.kind).toBe('translation');
    expect(connection.path).toBe('/translations');
    expect(connection.model).toBe('gpt-realtime-translate');
    expect(connection.headers.authorization).toBe(`Bearer ${standIn.apiKey}`);
    expect(connection.received[0]).toEqual({
      type: 'session.update',
      session: {
        audio: {
          input: { transcription: { model: 'gpt-realtime-whisper' } },
          output: { language: 'es' },
        },
      },
    });

    // 3 frames and a bit, pushed in odd-sized pieces.
    const pushed = speech(620, 3);
    const cuts = [1_000, 4_321, 9_600, 7, 12_000];
    let offset = 0;
    for (const cut of cuts) {
      interpreter.push(pushed.subarray(offset, offset + cut));
      offset += cut;
    }
    interpreter.push(pushed.subarray(offset));

    await rec.until(() => rec.output().length >= 3 * FRAME_BYTES);
    const frames = appendedAudio(connection, 'session.input_audio_buffer.append');
    expect(frames.map((frame) => frame.length)).toEqual([FRAME_BYTES, FRAME_BYTES, FRAME_BYTES]);
    expect(Buffer.concat(frames).equals(pushed.subarray(0, 3 * FRAME_BYTES))).toBe(true);
    expect(rec.output().equals(negatePcm16(pushed.subarray(0, 3 * FRAME_BYTES)))).toBe(true);

    // Partial captions while speaking; the final one only once the speaker paused (captionPauseMs on the test's clock).
    const spokenSoFar = { original: 'speech speech speech', translated: '[es] speech [es] speech [es] speech' };
    await rec.until(() => rec.captions.at(-1)?.original === spokenSoFar.original && rec.captions.at(-1)?.translated === spokenSoFar.translated);
    expect(rec.finals()).toEqual([]);
    vi.advanceTimersByTime(150);
    const final = rec.finals()[0];
    expect(final).toEqual({ final: true, original: 'speech speech speech', translated: '[es] speech [es] speech [es] speech' });
    const partials = rec.captions.filter((caption) => !caption.final);
    expect(partials.length).toBeGreaterThan(0);
    expect(partials.at(-1)).toEqual({ final: false, original: 'speech speech speech', translated: '[es] speech [es] speech [es] speech' });
    expect(rec.captions.at(-1)).toEqual(final);
  });

  it('maps regional tags to the primary language (pt-BR -> pt)', async () => {
    standIn = await startRealtimeStandIn();
    const { rec } = start(standIn, { source: 'fi', target: 'pt-BR' });
    await connected(rec);
    const update = standIn.connections[0]!.received[0] as unknown as { session: { audio: { output: { language: string } } } };
    expect(standIn.connections[0]!.kind).toBe('translation');
    expect(update.session.audio.output.language).toBe('pt');
  });

  it('logs upstream error events without failing the session', async () => {
    standIn = await startRealtimeStandIn();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'de' });
    await connected(rec);
    standIn.sendError({ type: 'invalid_request_error', code: 'bad_thing', message: 'Something was off.' });
    const logged = await rec.until(() => rec.logs.find((log) => log.message.includes('upstream error')));
    expect(logged.level).toBe('warn');
    expect(logged.details).toMatchObject({ code: 'bad_thing', message: 'Something was off.' });
    interpreter.push(speech(200));
    await rec.until(() => rec.output().length >= FRAME_BYTES);
    expect(rec.states()).toEqual(['connected']);
  });

  it('close sends session.close and the socket closes; later pushes and callbacks are ignored', async () => {
    standIn = await startRealtimeStandIn();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'fr' });
    await connected(rec);
    interpreter.push(speech(200));
    interpreter.push(speech(100, 2)); // half a frame, sent before session.close
    await rec.until(() => rec.output().length >= FRAME_BYTES);
    await interpreter.close();
    const connection = standIn.connections[0]!;
    await connection.closed;
    const types = connection.received.map((event) => event.type);
    expect(types.at(-1)).toBe('session.close');
    const frames = appendedAudio(connection, 'session.input_audio_buffer.append');
    expect(frames.map((frame) => frame.length)).toEqual([FRAME_BYTES, FRAME_BYTES / 2]);
    const before = { audio: rec.audio.length, captions: rec.captions.length, statuses: rec.statuses.length };
    interpreter.push(speech(400));
    await interpreter.close();
    expect(rec.audio.length).toBe(before.audio);
    expect(rec.statuses.length).toBe(before.statuses);
    // The pending caption was made final by close, before callbacks stopped.
    expect(rec.captions.at(-1)?.final).toBe(true);
    expect(standIn.connections).toHaveLength(1);
  });
});

describe('OpenAI realtime interpreter: general realtime endpoint', () => {
  it('uses the realtime API with interpreter instructions for a target the translation model cannot speak', async () => {
    expect(translationModelSpeaks('sw')).toBe(false);
    standIn = await startRealtimeStandIn();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'sw' });
    expect(interpreter.provenance).toEqual({ engine: 'openai', model: 'gpt-realtime' });
    await connected(rec);
    const connection = standIn.connections[0]!;
    expect(connection.kind).toBe('realtime');
    expect(connection.path).toBe('/');
    expect(connection.model).toBe('gpt-realtime');
    const update = connection.received[0] as { type: string; session: Record<string, any> };
    expect(update.type).toBe('session.update');
    expect(update.session.type).toBe('realtime');
    expect(update.session.instructions).toContain('from English (en) into Swahili (sw)');
    expect(update.session.instructions).toMatch(/speak only the translation/i);
    expect(update.session.instructions).toMatch(/never answer/i);
    expect(update.session.audio.input.format).toEqual({ type: 'audio/pcm', rate: 24000 });
    expect(update.session.audio.input.turn_detection).toMatchObject({ type: 'server_vad' });
    expect(update.session.audio.input.transcription).toEqual({ model: 'gpt-4o-mini-transcribe', language: 'en' });
    expect(update.session.audio.output).toEqual({ format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' });

    const spoken = speech(400, 7);
    interpreter.push(spoken);
    interpreter.push(silence(200)); // the pause ends the turn (server VAD)

    await rec.until(() => rec.output().length >= spoken.length);
    expect(rec.output().equals(negatePcm16(spoken))).toBe(true);
    const frames = appendedAudio(connection, 'input_audio_buffer.append');
    expect(frames.every((frame) => frame.length === FRAME_BYTES)).toBe(true);
    expect(Buffer.concat(frames).equals(Buffer.concat([spoken, silence(200)]))).toBe(true);
    expect(connection.events('session.input_audio_buffer.append')).toHaveLength(0);
    // The server created the response itself: no response.create needed.
    expect(connection.events('response.create')).toHaveLength(0);

    const final = await rec.until(() => rec.finals()[0]);
    expect(final).toEqual({ final: true, original: 'speech speech', translated: '[sw] speech [sw] speech' });
    expect(rec.captions.some((caption) => !caption.final && caption.translated === '[sw] speech')).toBe(true);
  });

  it('accepts the older event names (response.audio.delta, response.audio_transcript.*)', async () => {
    standIn = await startRealtimeStandIn({ legacyEventNames: true });
    const { interpreter, rec } = start(standIn, { source: 'de', target: 'th' });
    await connected(rec);
    const spoken = speech(200, 9);
    interpreter.push(spoken);
    interpreter.push(silence(200));
    await rec.until(() => rec.output().length >= spoken.length);
    expect(rec.output().equals(negatePcm16(spoken))).toBe(true);
    expect(await rec.until(() => rec.finals()[0])).toEqual({
      final: true,
      original: 'speech',
      translated: '[th] speech',
    });
  });

  it('sends response.create when the server does not answer a committed turn', async () => {
    standIn = await startRealtimeStandIn({ autoResponse: false });
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'sv' });
    await connected(rec);
    const spoken = speech(200, 4);
    interpreter.push(spoken);
    interpreter.push(silence(200));
    await rec.until(() => rec.output().length >= spoken.length);
    expect(standIn.connections[0]!.events('response.create')).toHaveLength(1);
    expect(rec.output().equals(negatePcm16(spoken))).toBe(true);
  });

  it('close closes the socket (no session.close on this protocol)', async () => {
    standIn = await startRealtimeStandIn();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'sw' });
    await connected(rec);
    await interpreter.close();
    const connection = standIn.connections[0]!;
    await connection.closed;
    expect(connection.events('session.close')).toHaveLength(0);
  });
});

describe('OpenAI realtime interpreter: connection status', () => {
  it('reconnects after the upstream drops and audio flows again', async () => {
    standIn = await startRealtimeStandIn();
    const { interpreter, rec } = start(standIn, { source: 'en', target: 'es' });
    await connected(rec);
    interpreter.push(speech(200));
    await rec.until(() => rec.output().length >= FRAME_BYTES);

    standIn.dropConnections();
    await rec.until(() => rec.states().includes('reconnecting'));
    await connected(rec, 2);
    expect(rec.states()).toEqual(['connected', 'reconnecting', 'connected']);
    expect(rec.statuses[1]!.message).toMatch(/lost/);
    expect(standIn.connections).toHaveLength(2);
    const second = standIn.connections[1]!;
    expect(second.received[0]!.type).toBe('session.update');

    const before = rec.output().length;
    const again = speech(200, 5);
    interpreter.push(again);
    await rec.until(() => rec.output().length >= before + FRAME_BYTES);
    expect(rec.output().subarray(before).equals(negatePcm16(again))).toBe(true);
    expect(appendedAudio(second, 'session.input_audio_buffer.append')).toHaveLength(1);
  });

  it('fails at once on 401 at the upgrade, without retrying', async () => {
    standIn = await startRealtimeStandIn();
    useTestClock();
    const { rec } = start(standIn, { source: 'en', target: 'es' }, { apiKey: 'sk-wrong' });
    const failed = await rec.until(() => rec.statuses.find((status) => status.state === 'failed'));
    expect(failed.message).toMatch(/401/);
    expect(failed.message).toMatch(/OPENAI_API_KEY/);
    expect(rec.states()).toEqual(['failed']);
    // Nothing is left scheduled (a retry would be a timer on the test's clock), and none comes however far it moves.
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(rec.logs.filter((log) => log.message.endsWith(': reconnecting'))).toEqual([]);
    expect(standIn.upgrades).toEqual([{ path: '/translations', model: 'gpt-realtime-translate', status: 401 }]);
  });

  it('fails at once on 403 at the upgrade', async () => {
    standIn = await startRealtimeStandIn();
    standIn.rejectNext(1, 403);
    useTestClock();
    const { rec } = start(standIn, { source: 'en', target: 'sw' });
    const failed = await rec.until(() => rec.statuses.find((status) => status.state === 'failed'));
    expect(failed.message).toMatch(/403/);
    expect(rec.states()).toEqual(['failed']);
    expect(vi.getTimerCount()).toBe(0);
    expect(standIn.upgrades).toHaveLength(1);
  });

  it('fails after maxAttempts reconnect attempts', async () => {
    standIn = await startRealtimeStandIn();
    standIn.rejectNext(10, 503);
    useTestClock();
    const { rec } = start(standIn, { source: 'en', target: 'es' }, { reconnect: { initialDelayMs: 10, maxDelayMs: 40, maxAttempts: 2 } });
    // Each refused connection schedules the next attempt (at most 40 ms on the test's clock) as it ends.
    const ended = () => rec.logs.filter((log) => log.message.endsWith(': upstream connection ended')).length;
    for (const attempt of [1, 2]) {
      await rec.until(() => ended() === attempt);
      vi.advanceTimersByTime(40);
    }
    const failed = await rec.until(() => rec.statuses.find((status) => status.state === 'failed'));
    expect(rec.states()).toEqual(['reconnecting', 'failed']);
    expect(failed.message).toMatch(/2 reconnect attempts failed/);
    expect(failed.message).toMatch(/503/);
    // Given up for good: nothing is left scheduled that could try a fourth time.
    expect(vi.getTimerCount()).toBe(0);
    expect(standIn.upgrades.map((upgrade) => upgrade.status)).toEqual([503, 503, 503]);
  });

  it('keeps only the newest audio while no session is up (bounded), then sends it', async () => {
    standIn = await startRealtimeStandIn();
    standIn.rejectNext(1, 503);
    const { interpreter, rec } = start(
      standIn,
      { source: 'en', target: 'es' },
      { reconnect: { initialDelayMs: 150, maxDelayMs: 150, maxAttempts: 3 }, maxQueuedMs: 400 },
    );
    await rec.until(() => rec.states().includes('reconnecting'));
    const frames = [1, 2, 3, 4, 5].map((seed) => speech(200, seed));
    for (const frame of frames) interpreter.push(frame);
    await connected(rec);
    await rec.until(() => rec.output().length >= 2 * FRAME_BYTES);
    const sent = appendedAudio(standIn.connections[0]!, 'session.input_audio_buffer.append');
    expect(Buffer.concat(sent).equals(Buffer.concat(frames.slice(3)))).toBe(true);
  });

  it('never throws: a bad URL or a missing key reports failed', async () => {
    const rec = recorder();
    const make = (options: OpenAiInterpreterFactoryOptions) =>
      createOpenAiInterpreterFactory(options)({
        sourceLanguage: 'en',
        targetLanguage: 'es',
        onAudio: () => {},
        onCaption: () => {},
        onStatus: rec.onStatus,
      });
    const bad = make({ apiKey: 'k', realtimeUrl: 'http://127.0.0.1:1' });
    const keyless = make({ apiKey: '', realtimeUrl: 'ws://127.0.0.1:1' });
    expect(() => bad.push(speech(200))).not.toThrow();
    await rec.until(() => rec.statuses.filter((status) => status.state === 'failed').length === 2);
    expect(rec.statuses.map((status) => status.message).join('\n')).toMatch(/ws:\/\/ or wss:\/\//);
    expect(rec.statuses.map((status) => status.message).join('\n')).toMatch(/OPENAI_API_KEY/);
    await bad.close();
    await keyless.close();
  });
});

describe('languages and captions', () => {
  it('lists the 13 output languages of gpt-realtime-translate', () => {
    expect([...TRANSLATION_OUTPUT_LANGUAGES].sort()).toEqual(
      ['de', 'en', 'es', 'fr', 'hi', 'id', 'it', 'ja', 'ko', 'pt', 'ru', 'vi', 'zh'],
    );
    expect(translationModelSpeaks('zh-Hant')).toBe(true);
    expect(translationModelSpeaks('ar')).toBe(false);
  });

  it('finalises a long caption at a sentence end without waiting for a pause', () => {
    const captions: InterpreterCaption[] = [];
    const assembler = new PauseCaptions((caption) => captions.push(caption), { pauseMs: 60_000, maxChars: 20 });
    assembler.addOriginal('Hola a todos, ');
    assembler.addTranslated('Hello everyone, ');
    assembler.addTranslated('welcome to the call. ');
    expect(captions.at(-1)).toEqual({ final: true, original: 'Hola a todos,', translated: 'Hello everyone, welcome to the call.' });
    assembler.addTranslated('Next');
    expect(captions.at(-1)).toEqual({ final: false, original: '', translated: 'Next' });
    assembler.flush();
    expect(captions.at(-1)).toEqual({ final: true, original: '', translated: 'Next' });
    assembler.dispose();
  });
});
