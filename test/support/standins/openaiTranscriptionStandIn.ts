// A stand-in for OpenAI's transcription endpoint: a real HTTP server on 127.0.0.1 speaking
// `POST /v1/audio/transcriptions` (multipart/form-data: file, model, response_format, language, prompt, ...)
// and answering as OpenAI does: `{text}` for json, `{task, language: 'finnish', duration, text, segments}`
// for verbose_json (whisper names the language in English), plain text for text/srt/vtt, and OpenAI's error
// bodies (401 for a wrong key, 400 for a missing model or file, an unsupported extension, audio that is no
// audio, verbose_json asked of a gpt-4o model).
//
// It records every request with the uploaded file's bytes, and can be scripted to fail (`failNext`) or stall
// (`hang`). It does not use the generic `startStandInServer` of standInServer.ts: that one keeps bodies as
// UTF-8 text, which mangles binary uploads; this one parses the raw bytes with busboy and offers the same
// controls (url, requests, failNext, hang, reset, close).

import busboy from 'busboy';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AudioError, inspectAudio } from '../../../src/audio/inspect.js';

export interface UploadedFile {
  filename: string;
  /** The part's Content-Type as the client sent it. */
  mimeType: string;
  bytes: number;
  data: Buffer;
}

export interface RecordedTranscriptionRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The text fields (repeated names as arrays). */
  fields: Record<string, string | string[]>;
  file: UploadedFile | null;
  /** The status the stand-in answered with. */
  status: number;
}

export interface Transcript {
  text: string;
  /** Language in whisper's style: an English name in lower case (`finnish`). */
  language: string;
}

export interface OpenAiTranscriptionStandIn {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Base URL for the SDK (`<url>/v1`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Every request received, in order (scripted failures and hangs included). */
  readonly requests: RecordedTranscriptionRequest[];
  /** The transcript answered from now on. */
  setTranscript(transcript: Transcript): void;
  /** Answer the next `count` requests with this status and OpenAI's error body for it (or `body`). */
  failNext(count: number, status: number, body?: unknown, headers?: Record<string, string>): void;
  /** Hold the next `count` requests for `ms` before answering. */
  hang(ms: number, count?: number): void;
  /** Hold the next request until `release()`; `arrived` settles once it is being held. */
  holdNext(): { arrived: Promise<void>; release(): void };
  reset(): void;
  close(): Promise<void>;
}

export const DEFAULT_TRANSCRIPT: Transcript = { text: 'Hei, tämä on ääniviesti.', language: 'finnish' };

/** The formats OpenAI takes, by file name extension. */
const SUPPORTED_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Bad request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  404: { type: 'invalid_request_error', code: null, message: 'Not found.' },
  413: { type: 'invalid_request_error', code: null, message: 'Maximum content size limit (26214400) exceeded.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

export function openAiErrorBody(status: number, message?: string, param: string | null = null) {
  const known = ERRORS[status] ?? { type: 'server_error', code: null, message: `Error ${status}.` };
  return { error: { message: message ?? known.message, type: known.type, param, code: known.code } };
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface ParsedBody {
  fields: Record<string, string | string[]>;
  file: UploadedFile | null;
  tooLarge: boolean;
  error: string | null;
}

function parseMultipart(req: IncomingMessage): Promise<ParsedBody> {
  return new Promise((resolve) => {
    const result: ParsedBody = { fields: {}, file: null, tooLarge: false, error: null };
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_UPLOAD_BYTES } });
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
      req.resume();
      req.on('end', () => resolve(result));
      return;
    }
    const pending: Promise<void>[] = [];
    parser.on('field', (name, value) => {
      const existing = result.fields[name];
      result.fields[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      pending.push(
        new Promise<void>((done) => {
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('limit', () => {
            result.tooLarge = true;
          });
          stream.on('close', () => {
            if (name === 'file' && !result.file) {
              const data = Buffer.concat(chunks);
              result.file = { filename: info.filename ?? '', mimeType: info.mimeType, bytes: data.length, data };
            }
            done();
          });
        }),
      );
    });
    parser.on('error', (error: unknown) => {
      result.error = error instanceof Error ? error.message : String(error);
      resolve(result);
    });
    parser.on('close', () => {
      void Promise.all(pending).then(() => resolve(result));
    });
    req.pipe(parser);
  });
}

/** English name of a code in whisper's style (`fi` -> `finnish`). */
function whisperLanguageName(code: string): string {
  try {
    return (new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code).toLowerCase();
  } catch {
    return code.toLowerCase();
  }
}

const field = (fields: ParsedBody['fields'], name: string): string | undefined => {
  const value = fields[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
};

export async function startOpenAiTranscriptionStandIn(
  options: { apiKey?: string; transcript?: Transcript } = {},
): Promise<OpenAiTranscriptionStandIn> {
  const apiKey = options.apiKey ?? 'sk-test-transcription-stand-in';
  let transcript = options.transcript ?? DEFAULT_TRANSCRIPT;
  const requests: RecordedTranscriptionRequest[] = [];
  let failures: Answer[] = [];
  let hangs: number[] = [];
  let gates: Array<{ arrive(): void; released: Promise<void> }> = [];
  const timers = new Set<NodeJS.Timeout>();

  async function answer(req: IncomingMessage, parsed: ParsedBody): Promise<Answer> {
    if (req.headers.authorization !== `Bearer ${apiKey}`) return { status: 401, body: openAiErrorBody(401) };
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    if (req.method !== 'POST' || path !== '/v1/audio/transcriptions') {
      return { status: 404, body: openAiErrorBody(404, `Invalid URL (${req.method} ${path})`) };
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      return { status: 400, body: openAiErrorBody(400, 'Expected a multipart/form-data body.') };
    }
    if (parsed.error) return { status: 400, body: openAiErrorBody(400, `Could not parse multipart form: ${parsed.error}`) };
    if (parsed.tooLarge) return { status: 413, body: openAiErrorBody(413) };
    const model = field(parsed.fields, 'model');
    if (!model) return { status: 400, body: openAiErrorBody(400, 'you must provide a model parameter', 'model') };
    const file = parsed.file;
    if (!file) return { status: 400, body: openAiErrorBody(400, "Missing required parameter: 'file'.", 'file') };
    const extension = file.filename.includes('.') ? file.filename.split('.').pop()!.toLowerCase() : '';
    if (!SUPPORTED_EXTENSIONS.includes(extension)) {
      return {
        status: 400,
        body: openAiErrorBody(400, `Invalid file format. Supported formats: ${JSON.stringify(SUPPORTED_EXTENSIONS)}`, 'file'),
      };
    }
    const format = field(parsed.fields, 'response_format') ?? 'json';
    const whisper = model.startsWith('whisper');
    if (!whisper && format !== 'json' && format !== 'text') {
      return {
        status: 400,
        body: openAiErrorBody(400, `response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, 'response_format'),
      };
    }
    let duration: number;
    try {
      duration = (await inspectAudio(file.data)).durationSeconds;
    } catch (error) {
      if (error instanceof AudioError) {
        return { status: 400, body: openAiErrorBody(400, 'Audio file might be corrupted or unsupported', 'file') };
      }
      throw error;
    }
    const hint = field(parsed.fields, 'language');
    const language = hint ? whisperLanguageName(hint) : transcript.language;
    const text = transcript.text;
    switch (format) {
      case 'json':
        return {
          status: 200,
          body: whisper
            ? { text, usage: { type: 'duration', seconds: Math.ceil(duration) } }
            : { text, usage: { type: 'tokens', input_tokens: Math.ceil(duration * 10), output_tokens: 12, total_tokens: Math.ceil(duration * 10) + 12 } },
        };
      case 'verbose_json':
        return {
          status: 200,
          body: {
            task: 'transcribe',
            language,
            duration,
            text,
            segments: [
              { id: 0, seek: 0, start: 0, end: duration, text: ` ${text}`, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
            ],
            usage: { type: 'duration', seconds: Math.ceil(duration) },
          },
        };
      case 'text':
        return { status: 200, body: `${text}\n` };
      default:
        return { status: 400, body: openAiErrorBody(400, `Unsupported response_format '${format}' in this stand-in.`, 'response_format') };
    }
  }

  const send = (res: ServerResponse, reply: Answer) => {
    if (res.destroyed || res.writableEnded) return;
    const headers: Record<string, string> = { ...(reply.headers ?? {}) };
    let payload: string;
    if (typeof reply.body === 'string') {
      payload = reply.body;
      headers['content-type'] ??= 'text/plain; charset=utf-8';
    } else {
      payload = JSON.stringify(reply.body);
      headers['content-type'] ??= 'application/json';
    }
    res.writeHead(reply.status, headers);
    res.end(payload);
  };

  const server = createServer((req, res) => {
    void (async () => {
      const multipart = String(req.headers['content-type'] ?? '').startsWith('multipart/form-data');
      let parsed: ParsedBody = { fields: {}, file: null, tooLarge: false, error: null };
      if (multipart) {
        parsed = await parseMultipart(req);
      } else {
        req.resume();
        await new Promise<void>((resolve) => req.on('end', resolve));
      }
      const record: RecordedTranscriptionRequest = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://stand-in').pathname,
        headers: req.headers,
        fields: parsed.fields,
        file: parsed.file,
        status: 0,
      };
      requests.push(record);

      const hangMs = hangs.shift();
      if (hangMs !== undefined) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, hangMs);
          timers.add(timer);
          res.on('close', () => {
            clearTimeout(timer);
            timers.delete(timer);
            resolve();
          });
        });
        if (res.destroyed) return;
      }
      const gate = gates.shift();
      if (gate) {
        gate.arrive();
        await gate.released;
        if (res.destroyed) return;
      }
      let reply = failures.shift();
      if (!reply) {
        try {
          reply = await answer(req, parsed);
        } catch (error) {
          reply = { status: 500, body: openAiErrorBody(500), headers: { 'x-stand-in-error': String(error) } };
        }
      }
      record.status = reply.status;
      send(res, reply);
    })();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseUrl: `${url}/v1`,
    apiKey,
    requests,
    setTranscript(next) {
      transcript = next;
    },
    failNext(count, status, body, headers) {
      for (let i = 0; i < count; i++) failures.push({ status, body: body ?? openAiErrorBody(status), headers });
    },
    hang(ms, count = 1) {
      for (let i = 0; i < count; i++) hangs.push(ms);
    },
    holdNext() {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      gates.push({ arrive, released });
      return { arrived, release };
    },
    reset() {
      requests.length = 0;
      failures = [];
      hangs = [];
      gates = [];
      transcript = options.transcript ?? DEFAULT_TRANSCRIPT;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
