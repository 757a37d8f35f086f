// A stand-in for the DeepL API v2 endpoints deepl-node's Translator calls for text and glossaries:
//   POST   /v2/translate            form: text (repeated), target_lang, source_lang?, context?,
//                                   glossary_id?, show_billed_characters
//   POST   /v2/glossaries           form: name, source_lang, target_lang, entries_format=tsv, entries
//   GET    /v2/glossaries           -> {glossaries: [GlossaryInfo]}
//   GET    /v2/glossaries/{id}      -> GlossaryInfo
//   DELETE /v2/glossaries/{id}      -> 204
// Auth: `Authorization: DeepL-Auth-Key <key>` (403 otherwise). Errors are `{message}` JSON, with
// DeepL's statuses: 400, 403, 404, 429 (too many requests), 456 (quota exceeded), 5xx.

import { randomUUID } from 'node:crypto';
import { fakeDetect, fakeTranslate, startStandInServer, type RecordedRequest, type StandInServer } from './standInServer.js';

export interface StoredGlossary {
  glossary_id: string;
  name: string;
  ready: boolean;
  source_lang: string;
  target_lang: string;
  creation_time: string;
  entry_count: number;
  entries: Record<string, string>;
}

export interface DeepLStandIn extends StandInServer {
  readonly apiKey: string;
  /** Glossaries on the "account", by id. */
  readonly glossaries: Map<string, StoredGlossary>;
  /** The form fields of each `POST /v2/translate` received, in order. */
  translateRequests(): URLSearchParams[];
  /** The form fields of each `POST /v2/glossaries` received, in order. */
  glossaryCreations(): URLSearchParams[];
  /** Language pairs (`en>fi`) for which glossary creation is refused with 400. */
  readonly unsupportedGlossaryPairs: Set<string>;
}

const MESSAGES: Record<number, string> = {
  400: 'Bad request',
  403: 'Forbidden',
  404: 'Not found',
  413: 'Request Entity Too Large',
  429: 'Too many requests',
  456: 'Quota Exceeded',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function deeplError(status: number, message?: string) {
  return { message: message ?? MESSAGES[status] ?? `Error ${status}` };
}

const SOURCE_CODES = new Set(['bg', 'cs', 'da', 'de', 'el', 'en', 'es', 'et', 'fi', 'fr', 'hu', 'id', 'it', 'ja', 'ko', 'lt', 'lv', 'nb', 'nl', 'pl', 'pt', 'ro', 'ru', 'sk', 'sl', 'sv', 'tr', 'uk', 'zh', 'ar', 'he', 'th', 'vi']);
const TARGET_ONLY = new Set(['en-gb', 'en-us', 'pt-br', 'pt-pt', 'es-419', 'zh-hans', 'zh-hant']);

function info(glossary: StoredGlossary) {
  const { entries: _entries, ...rest } = glossary;
  return rest;
}

export async function startDeepLStandIn(options: { apiKey?: string } = {}): Promise<DeepLStandIn> {
  const apiKey = options.apiKey ?? 'deepl-test-key:fx';
  const glossaries = new Map<string, StoredGlossary>();
  const unsupportedGlossaryPairs = new Set<string>();

  const handle = (request: RecordedRequest) => {
    if (request.headers.authorization !== `DeepL-Auth-Key ${apiKey}`) {
      return { status: 403, body: deeplError(403) };
    }
    const form = request.form ?? new URLSearchParams();
    const route = `${request.method} ${request.path}`;

    if (route === 'POST /v2/translate') {
      const texts = form.getAll('text');
      const target = (form.get('target_lang') ?? '').toLowerCase();
      const source = form.get('source_lang')?.toLowerCase() ?? null;
      if (texts.length === 0) return { status: 400, body: deeplError(400, "Parameter 'text' not specified.") };
      if (!SOURCE_CODES.has(target) && !TARGET_ONLY.has(target)) {
        return { status: 400, body: deeplError(400, "Value for 'target_lang' not supported.") };
      }
      if (target === 'en' || target === 'pt') {
        return { status: 400, body: deeplError(400, `targetLang='${target}' is deprecated, please use a regional variant.`) };
      }
      if (source !== null && !SOURCE_CODES.has(source)) {
        return { status: 400, body: deeplError(400, "Value for 'source_lang' not supported.") };
      }
      let entries: Record<string, string> = {};
      const glossaryId = form.get('glossary_id');
      if (glossaryId) {
        if (source === null) return { status: 400, body: deeplError(400, 'Use of a glossary requires the source_lang parameter to be set.') };
        const glossary = glossaries.get(glossaryId);
        if (!glossary) return { status: 404, body: deeplError(404, 'Glossary not found') };
        if (glossary.source_lang !== source || glossary.target_lang !== target.split('-')[0]) {
          return { status: 400, body: deeplError(400, "Glossary language pair doesn't match the request.") };
        }
        entries = glossary.entries;
      }
      return {
        status: 200,
        body: {
          translations: texts.map((text) => ({
            detected_source_language: (source ?? fakeDetect(text)).toUpperCase(),
            text: fakeTranslate(text, form.get('target_lang')!, entries),
            ...(form.get('show_billed_characters') === '1' ? { billed_characters: text.length } : {}),
          })),
        },
      };
    }

    if (route === 'POST /v2/glossaries') {
      const name = form.get('name');
      const source = form.get('source_lang')?.toLowerCase();
      const target = form.get('target_lang')?.toLowerCase();
      if (!name || !source || !target || form.get('entries_format') !== 'tsv' || !form.get('entries')) {
        return { status: 400, body: deeplError(400, 'Missing or invalid glossary parameters.') };
      }
      if (unsupportedGlossaryPairs.has(`${source}>${target}`) || source === target) {
        return { status: 400, body: deeplError(400, 'Unsupported glossary source and target language pair.') };
      }
      const entries: Record<string, string> = {};
      for (const line of form.get('entries')!.split(/\r\n|\n|\r/)) {
        if (!line) continue;
        const [term, rendering, extra] = line.split('\t');
        if (!term || !rendering || extra !== undefined) {
          return { status: 400, body: deeplError(400, `Invalid glossary entry: ${line}`) };
        }
        entries[term] = rendering;
      }
      const glossary: StoredGlossary = {
        glossary_id: randomUUID(),
        name,
        ready: true,
        source_lang: source,
        target_lang: target,
        creation_time: new Date().toISOString(),
        entry_count: Object.keys(entries).length,
        entries,
      };
      glossaries.set(glossary.glossary_id, glossary);
      return { status: 201, body: info(glossary) };
    }

    if (route === 'GET /v2/glossaries') {
      return { status: 200, body: { glossaries: [...glossaries.values()].map(info) } };
    }

    const match = /^\/v2\/glossaries\/([^/]+)$/.exec(request.path);
    if (match) {
      const glossary = glossaries.get(match[1]!);
      if (!glossary) return { status: 404, body: deeplError(404, 'Glossary not found') };
      if (request.method === 'GET') return { status: 200, body: info(glossary) };
      if (request.method === 'DELETE') {
        glossaries.delete(glossary.glossary_id);
        return { status: 204 };
      }
    }
    return { status: 404, body: deeplError(404) };
  };

  const server = await startStandInServer(handle, (status) => deeplError(status));
  const forms = (path: string) =>
    server.requests.filter((r) => r.method === 'POST' && r.path === path).map((r) => r.form ?? new URLSearchParams());
  return Object.assign(server, {
    apiKey,
    glossaries,
    unsupportedGlossaryPairs,
    translateRequests: () => forms('/v2/translate'),
    glossaryCreations: () => forms('/v2/glossaries'),
  });
}
