// A stand-in for LibreTranslate's HTTP API:
//   POST /translate  JSON {q: string | string[], source: code | 'auto', target, format, api_key?}
//                    -> {translatedText: string | string[], detectedLanguage?: {language, confidence} | [...]}
//   POST /detect     JSON {q} -> [{language, confidence}]
// Errors are `{error: "..."}` with 400 (bad parameters), 403 (API key), 429 (limits), 500.
// It knows no glossary (LibreTranslate has none): the engine's own pre-replacement shows in `q`.

import { fakeDetect, fakeTranslate, startStandInServer, type RecordedRequest, type StandInServer } from './standInServer.js';

export interface LibreTranslateStandIn extends StandInServer {
  /** The JSON bodies of each `POST /translate` received, in order. */
  translateRequests(): LibreTranslateRequestBody[];
}

export interface LibreTranslateRequestBody {
  q: string | string[];
  source: string;
  target: string;
  format?: string;
  api_key?: string;
  [key: string]: unknown;
}

const LANGUAGES = new Set(['en', 'fi', 'de', 'fr', 'es', 'it', 'pt', 'pb', 'sv', 'ru', 'zh', 'zt', 'ja', 'ar', 'nl', 'pl']);

const MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  403: 'Invalid API key',
  429: 'Too many request limits violations',
  500: 'Internal server error',
  503: 'Service unavailable',
};

export function libreTranslateError(status: number, message?: string) {
  return { error: message ?? MESSAGES[status] ?? `Error ${status}` };
}

export async function startLibreTranslateStandIn(options: { apiKey?: string } = {}): Promise<LibreTranslateStandIn> {
  const handle = (request: RecordedRequest) => {
    const body = request.body as Partial<LibreTranslateRequestBody> | undefined;
    if (request.method !== 'POST' || (request.path !== '/translate' && request.path !== '/detect')) {
      return { status: 404, body: libreTranslateError(404, 'Not Found') };
    }
    if (!body || typeof body !== 'object') return { status: 400, body: libreTranslateError(400, 'Invalid request: missing q parameter') };
    if (options.apiKey !== undefined && body.api_key !== options.apiKey) {
      return { status: 403, body: libreTranslateError(403) };
    }
    const q = body.q;
    const texts = Array.isArray(q) ? q : typeof q === 'string' ? [q] : undefined;
    if (!texts || !texts.every((text) => typeof text === 'string')) {
      return { status: 400, body: libreTranslateError(400, 'Invalid request: missing q parameter') };
    }
    if (request.path === '/detect') {
      return { status: 200, body: texts.map((text) => ({ language: fakeDetect(text), confidence: 90 })) };
    }
    const { source, target } = body;
    if (!source) return { status: 400, body: libreTranslateError(400, 'Invalid request: missing source parameter') };
    if (!target) return { status: 400, body: libreTranslateError(400, 'Invalid request: missing target parameter') };
    if (source !== 'auto' && !LANGUAGES.has(source)) return { status: 400, body: libreTranslateError(400, `${source} is not supported`) };
    if (!LANGUAGES.has(target)) return { status: 400, body: libreTranslateError(400, `${target} is not supported`) };
    const translated = texts.map((text) => fakeTranslate(text, target));
    const detected = texts.map((text) => ({ language: fakeDetect(text), confidence: 90 }));
    return {
      status: 200,
      body: {
        translatedText: Array.isArray(q) ? translated : translated[0],
        ...(source === 'auto' ? { detectedLanguage: Array.isArray(q) ? detected : detected[0] } : {}),
      },
    };
  };

  const server = await startStandInServer(handle, (status) => libreTranslateError(status));
  return Object.assign(server, {
    translateRequests: () =>
      server.requests.filter((r) => r.path === '/translate').map((r) => r.body as LibreTranslateRequestBody),
  });
}
