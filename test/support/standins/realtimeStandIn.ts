// A stand-in for OpenAI's realtime WebSockets: a real `ws` server on 127.0.0.1 (port 0) speaking
//   - the translation protocol at `/translations` (any path ending so), `?model=...`:
//       client session.update | session.input_audio_buffer.append | session.close
//       server session.created | session.updated | session.output_audio.delta |
//              session.input_transcript.delta | session.output_transcript.delta | session.closed | error
//   - the general realtime protocol at any other path (`/`), `?model=...`:
//       client session.update | input_audio_buffer.append | response.create
//       server session.created | session.updated | input_audio_buffer.speech_started|speech_stopped|
//              committed | response.created | response.output_audio.delta |
//              response.output_audio_transcript.delta|done | response.done |
//              conversation.item.input_audio_transcription.completed | error
//     (with `legacyEventNames` the older response.audio.delta / response.audio_transcript.* names).
// Upgrades need `Authorization: Bearer <apiKey>` (401 otherwise); `rejectNext` refuses upgrades.
//
// "Interpretation" is deterministic: input is consumed in 200 ms frames (9,600 bytes); every frame
// gives output audio of the same length whose samples are the input samples negated (-32768 -> 32767).
// Frames whose samples are all within +-64 count as silence and give no transcript.
//   translation: per speech frame, input transcript delta 'speech ' (when audio.input.transcription is
//     configured) and output transcript delta '[<audio.output.language>] speech '; output audio for
//     every frame, silence included.
//   realtime: speech frames form a turn; the first silent frame after speech ends it (speech_stopped,
//     committed) and, when turn_detection.create_response is not false and `autoResponse` is on, a
//     response whose audio is the turn's frames negated, with transcript '[<target>] speech ' per frame
//     (target = the code in "into <Language> (<code>)" of the instructions); the input transcription
//     ('speech' per frame) completes after the response's transcript is done. response.create answers
//     every turn not answered yet.

import { createServer, STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export type RealtimeEvent = { type: string; [key: string]: unknown };

export const FRAME_BYTES = 9_600;

export interface RealtimeStandInConnection {
  readonly id: number;
  readonly kind: 'translation' | 'realtime';
  readonly path: string;
  readonly model: string | null;
  readonly headers: IncomingHttpHeaders;
  /** Every client event received, parsed, in order. */
  readonly received: RealtimeEvent[];
  /** Every server event sent, in order. */
  readonly sent: RealtimeEvent[];
  /** Resolves once the server-side socket has closed. */
  readonly closed: Promise<void>;
  /** All appended audio, decoded and concatenated. */
  audio(): Buffer;
  /** The client events of one type. */
  events(type: string): RealtimeEvent[];
  send(event: RealtimeEvent): void;
}

export interface UpgradeAttempt {
  path: string;
  model: string | null;
  /** 101 when accepted. */
  status: number;
}

export interface RealtimeStandIn {
  /** `ws://127.0.0.1:<port>` (use as OPENAI_REALTIME_URL). */
  readonly url: string;
  readonly apiKey: string;
  readonly connections: RealtimeStandInConnection[];
  readonly upgrades: UpgradeAttempt[];
  /** Close every server-side socket abruptly (no close frame). */
  dropConnections(): void;
  /** Refuse the next `count` upgrades with this HTTP status. */
  rejectNext(count: number, status: number): void;
  /** Send an `error` event (the session stays open) on every open connection. */
  sendError(error?: { type?: string; code?: string | null; message?: string }): void;
  /** When false, the realtime protocol never answers a turn by itself (clients must send response.create). */
  autoResponse: boolean;
  close(): Promise<void>;
}

interface Options {
  apiKey?: string;
  legacyEventNames?: boolean;
  autoResponse?: boolean;
}

const SILENCE_LEVEL = 64;

export function negatePcm16(pcm: Buffer): Buffer {
  const out = Buffer.alloc(pcm.length - (pcm.length % 2));
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    const sample = pcm.readInt16LE(i);
    out.writeInt16LE(sample === -32768 ? 32767 : -sample, i);
  }
  return out;
}

function isSilent(pcm: Buffer): boolean {
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    if (Math.abs(pcm.readInt16LE(i)) > SILENCE_LEVEL) return false;
  }
  return true;
}

let idCounter = 0;
const nextId = (prefix: string) => `${prefix}_${(++idCounter).toString(36).padStart(6, '0')}`;

export async function startRealtimeStandIn(options: Options = {}): Promise<RealtimeStandIn> {
  const apiKey = options.apiKey ?? 'sk-test-realtime';
  const legacy = options.legacyEventNames ?? false;
  const connections: RealtimeStandInConnection[] = [];
  const upgrades: UpgradeAttempt[] = [];
  const sockets = new Set<WebSocket>();
  let rejections: number[] = [];
  let connectionCount = 0;

  const standIn: RealtimeStandIn = {
    url: '',
    apiKey,
    connections,
    upgrades,
    autoResponse: options.autoResponse ?? true,
    dropConnections() {
      for (const socket of sockets) socket.terminate();
    },
    rejectNext(count, status) {
      rejections = Array.from({ length: count }, () => status);
    },
    sendError(error) {
      for (const socket of sockets) {
        send(socket, null, {
          type: 'error',
          event_id: nextId('event'),
          error: {
            type: error?.type ?? 'invalid_request_error',
            code: error?.code ?? 'scripted_error',
            message: error?.message ?? 'A scripted error from the stand-in.',
            param: null,
            event_id: null,
          },
        });
      }
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function send(socket: WebSocket, record: RealtimeEvent[] | null, event: RealtimeEvent) {
    if (socket.readyState !== socket.OPEN) return;
    record?.push(event);
    socket.send(JSON.stringify(event));
  }

  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('upgrade required');
  });

  const refuse = (socket: Duplex, status: number) => {
    const body = JSON.stringify({
      error: {
        type: status === 401 ? 'invalid_request_error' : 'server_error',
        code: status === 401 ? 'invalid_api_key' : null,
        message: status === 401 ? 'Incorrect API key provided.' : `Error ${status}.`,
      },
    });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {});
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const model = url.searchParams.get('model');
    const scripted = rejections.shift();
    if (scripted !== undefined) {
      upgrades.push({ path: url.pathname, model, status: scripted });
      refuse(socket, scripted);
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      upgrades.push({ path: url.pathname, model, status: 401 });
      refuse(socket, 401);
      return;
    }
    upgrades.push({ path: url.pathname, model, status: 101 });
    wss.handleUpgrade(req, socket, head, (ws) => {
      const kind = url.pathname.endsWith('/translations') ? 'translation' : 'realtime';
      accept(ws, kind, url.pathname, model, req.headers);
    });
  });

  function accept(
    ws: WebSocket,
    kind: 'translation' | 'realtime',
    path: string,
    model: string | null,
    headers: IncomingHttpHeaders,
  ) {
    sockets.add(ws);
    const received: RealtimeEvent[] = [];
    const sent: RealtimeEvent[] = [];
    const audioParts: Buffer[] = [];
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    const connection: RealtimeStandInConnection = {
      id: ++connectionCount,
      kind,
      path,
      model,
      headers,
      received,
      sent,
      closed,
      audio: () => Buffer.concat(audioParts),
      events: (type) => received.filter((event) => event.type === type),
      send: (event) => send(ws, sent, event),
    };
    connections.push(connection);
    const emit = (event: RealtimeEvent) => send(ws, sent, { event_id: nextId('event'), ...event });

    ws.on('error', () => {});
    ws.on('close', () => sockets.delete(ws));

    const sessionId = nextId('sess');
    let session: Record<string, any> =
      kind === 'translation'
        ? { id: sessionId, object: 'realtime.translation_session', model, audio: { input: {}, output: { language: 'en' } } }
        : { id: sessionId, object: 'realtime.session', type: 'realtime', model, instructions: '', audio: { input: {}, output: {} } };
    emit({ type: 'session.created', session });

    let pending = Buffer.alloc(0);
    let elapsedMs = 0;
    // Realtime protocol state.
    let inSpeech = false;
    let turnFrames: Buffer[] = [];
    let unanswered: Buffer[] = [];
    let pendingTranscripts: { itemId: string; frames: number }[] = [];
    let previousItem: string | null = null;

    const mergeSession = (update: Record<string, any>) => {
      session = {
        ...session,
        ...update,
        audio: {
          input: { ...(session.audio?.input ?? {}), ...(update.audio?.input ?? {}) },
          output: { ...(session.audio?.output ?? {}), ...(update.audio?.output ?? {}) },
        },
      };
    };

    const target = () => {
      if (kind === 'translation') return String(session.audio?.output?.language ?? 'en');
      const match = /into [^()]*\(([A-Za-z]{2,3}(?:-[A-Za-z0-9]+)*)\)/.exec(String(session.instructions ?? ''));
      return match?.[1] ?? '??';
    };

    const translateFrame = (frame: Buffer) => {
      emit({
        type: 'session.output_audio.delta',
        delta: negatePcm16(frame).toString('base64'),
        sample_rate: 24_000,
        channels: 1,
        format: 'pcm16',
        elapsed_ms: elapsedMs,
      });
      if (!isSilent(frame)) {
        if (session.audio?.input?.transcription) {
          emit({ type: 'session.input_transcript.delta', delta: 'speech ', elapsed_ms: elapsedMs });
        }
        emit({ type: 'session.output_transcript.delta', delta: `[${target()}] speech `, elapsed_ms: elapsedMs });
      }
      elapsedMs += 200;
    };

    const respond = () => {
      const frames = unanswered;
      unanswered = [];
      const responseId = nextId('resp');
      const itemId = nextId('item');
      emit({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress' } });
      let transcript = '';
      for (const frame of frames) {
        emit({
          type: legacy ? 'response.audio.delta' : 'response.output_audio.delta',
          response_id: responseId,
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: negatePcm16(frame).toString('base64'),
        });
        const delta = `[${target()}] speech `;
        transcript += delta;
        emit({
          type: legacy ? 'response.audio_transcript.delta' : 'response.output_audio_transcript.delta',
          response_id: responseId,
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta,
        });
      }
      emit({
        type: legacy ? 'response.audio_transcript.done' : 'response.output_audio_transcript.done',
        response_id: responseId,
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        transcript,
      });
      emit({ type: 'response.done', response: { id: responseId, object: 'realtime.response', status: 'completed' } });
      for (const { itemId: inputItem, frames: count } of pendingTranscripts) {
        emit({
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: inputItem,
          content_index: 0,
          transcript: Array.from({ length: count }, () => 'speech').join(' '),
        });
      }
      pendingTranscripts = [];
    };

    const realtimeFrame = (frame: Buffer) => {
      const silent = isSilent(frame);
      if (!silent) {
        if (!inSpeech) {
          inSpeech = true;
          emit({ type: 'input_audio_buffer.speech_started', audio_start_ms: elapsedMs, item_id: nextId('item') });
        }
        turnFrames.push(frame);
      } else if (inSpeech) {
        inSpeech = false;
        const itemId = nextId('item');
        emit({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: elapsedMs, item_id: itemId });
        emit({ type: 'input_audio_buffer.committed', previous_item_id: previousItem, item_id: itemId });
        previousItem = itemId;
        unanswered.push(...turnFrames);
        pendingTranscripts.push({ itemId, frames: turnFrames.length });
        turnFrames = [];
        const createResponse = session.audio?.input?.turn_detection?.create_response !== false;
        if (standIn.autoResponse && createResponse && session.audio?.input?.turn_detection) respond();
      }
      elapsedMs += 200;
    };

    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let event: RealtimeEvent;
      try {
        event = JSON.parse(data.toString());
      } catch {
        emit({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'Invalid JSON.' } });
        return;
      }
      received.push(event);
      switch (event.type) {
        case 'session.update': {
          const update = (event.session ?? {}) as Record<string, any>;
          if (kind === 'realtime' && update.type !== 'realtime') {
            emit({ type: 'error', error: { type: 'invalid_request_error', code: 'missing_session_type', message: 'session.type is required.' } });
            return;
          }
          mergeSession(update);
          emit({ type: 'session.updated', session });
          return;
        }
        case 'session.input_audio_buffer.append':
        case 'input_audio_buffer.append': {
          const expected = kind === 'translation' ? 'session.input_audio_buffer.append' : 'input_audio_buffer.append';
          if (event.type !== expected) {
            emit({ type: 'error', error: { type: 'invalid_request_error', code: 'unknown_event', message: `Unknown event ${event.type}.` } });
            return;
          }
          const chunk = Buffer.from(String(event.audio ?? ''), 'base64');
          audioParts.push(chunk);
          pending = Buffer.concat([pending, chunk]);
          while (pending.length >= FRAME_BYTES) {
            const frame = pending.subarray(0, FRAME_BYTES);
            pending = pending.subarray(FRAME_BYTES);
            if (kind === 'translation') translateFrame(frame);
            else realtimeFrame(frame);
          }
          return;
        }
        case 'response.create':
          if (kind === 'realtime') {
            if (turnFrames.length && !inSpeech) unanswered.push(...turnFrames.splice(0));
            respond();
          }
          return;
        case 'session.close':
          if (kind === 'translation') {
            if (pending.length) translateFrame(pending);
            pending = Buffer.alloc(0);
            emit({ type: 'session.closed', reason: 'close_requested' });
            ws.close(1000, 'session closed');
          }
          return;
        default:
          emit({ type: 'error', error: { type: 'invalid_request_error', code: 'unknown_event', message: `Unknown event ${event.type}.` } });
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  (standIn as { url: string }).url = `ws://127.0.0.1:${port}`;
  return standIn;
}
