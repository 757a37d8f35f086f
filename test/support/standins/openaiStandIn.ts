// A stand-in for OpenAI chat completions (`POST /v1/chat/completions`) that "translates" batches
// asked for with a json_schema response format: it reads the target language code and the glossary
// from the system message (as a model would follow them) and the texts from the user message's JSON
// array, and answers `{translations:[{text: '<target>:' + text, source_language}]}` as the message content.

import { fakeDetect, fakeTranslate, startStandInServer, type RecordedRequest, type StandInServer } from './standInServer.js';

export interface OpenAiStandIn extends StandInServer {
  /** Base URL for the SDK (`<url>/v1`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The chat completion requests received (bodies), in order. */
  completionRequests(): ChatRequestBody[];
  /** Answer the next completion with this message content instead of the fake translation. */
  answerNextWith(content: string): void;
}

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: {
    type: string;
    json_schema?: { name?: string; strict?: boolean; schema?: { properties?: Record<string, unknown> } };
  };
  [key: string]: unknown;
}

const STATUS_ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Bad request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

export function openAiError(status: number, message?: string) {
  const known = STATUS_ERRORS[status] ?? { type: 'server_error', code: null, message: `Error ${status}.` };
  return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
}

export async function startOpenAiStandIn(options: { apiKey?: string } = {}): Promise<OpenAiStandIn> {
  const apiKey = options.apiKey ?? 'sk-test-stand-in';
  const scriptedContents: string[] = [];
  let completionCount = 0;

  const handle = (request: RecordedRequest) => {
    if (request.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, body: openAiError(401) };
    }
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
      return { status: 404, body: openAiError(404, `Invalid URL (${request.method} ${request.path})`) };
    }
    const body = request.body as ChatRequestBody | undefined;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return { status: 400, body: openAiError(400, "Missing required parameter: 'model' or 'messages'.") };
    }
    const format = body.response_format;
    if (
      format?.type !== 'json_schema' ||
      format.json_schema?.strict !== true ||
      !format.json_schema.name ||
      !format.json_schema.schema?.properties?.translations
    ) {
      return { status: 400, body: openAiError(400, 'This stand-in answers json_schema translation requests only.') };
    }
    const system = body.messages.find((message) => message.role === 'system')?.content ?? '';
    const user = body.messages.find((message) => message.role === 'user')?.content ?? '';
    let texts: unknown;
    try {
      texts = JSON.parse(user);
    } catch {
      texts = undefined;
    }
    if (!Array.isArray(texts) || !texts.every((text) => typeof text === 'string')) {
      return { status: 400, body: openAiError(400, 'The stand-in expects the texts as a JSON array of strings.') };
    }
    const target = /language code: ([A-Za-z0-9-]+)\)/.exec(system)?.[1] ?? 'unknown';
    const glossaryLine = system.split('\n').find((line) => line.startsWith('Glossary'));
    const glossary = glossaryLine ? (JSON.parse(glossaryLine.slice(glossaryLine.indexOf('{'))) as Record<string, string>) : {};

    const content =
      scriptedContents.shift() ??
      JSON.stringify({
        translations: (texts as string[]).map((text) => ({
          text: fakeTranslate(text, target, glossary),
          source_language: fakeDetect(text),
        })),
      });
    completionCount += 1;
    return {
      status: 200,
      headers: { 'x-request-id': `req_standin_${completionCount}` },
      body: {
        id: `chatcmpl-standin${completionCount}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, refusal: null, annotations: [] },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: Math.ceil((system.length + user.length) / 4),
          completion_tokens: Math.ceil(content.length / 4),
          total_tokens: Math.ceil((system.length + user.length + content.length) / 4),
        },
        system_fingerprint: 'fp_standin',
      },
    };
  };

  const server = await startStandInServer(handle, (status) => openAiError(status));
  const resetServer = server.reset;
  return Object.assign(server, {
    reset() {
      resetServer();
      scriptedContents.length = 0;
    },
    baseUrl: `${server.url}/v1`,
    apiKey,
    completionRequests: () =>
      server.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as ChatRequestBody),
    answerNextWith(content: string) {
      scriptedContents.push(content);
    },
  });
}
