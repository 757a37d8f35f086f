// Dredd hooks (CommonJS: Dredd loads hook files with require(), and in a "type": "module" package a
// .js hook file would be skipped with only a warning). Run through `npm run test:contract`, which
// starts the server and passes CONTRACT_SERVER_URL and CONTRACT_ADMIN_TOKEN.
//
// What is checked: one Dredd transaction exists per documented status; only the 2xx ones are sent
// (every operation has a handler: codegen:check and the type check refuse one without), except
// endless text/event-stream answers. Everything else is skipped with a reason that the
// summary at the end lists.
//
// To cover a new operation, add an entry to OPERATIONS below (keyed by "METHOD /path/template" as in
// the contract) when the defaults are not enough. Defaults: /v1 operations get the test key,
// /admin operations the admin token, `{org_id}` is the organization made in beforeAll, the
// request body is the contract's example, and an Idempotency-Key header (Dredd sends the
// contract's example value, the same for every operation) gets a fresh value per transaction.
const hooks = require('hooks');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '..');
const SPEC_PATH = process.env.CONTRACT_SPEC_PATH || path.join(ROOT, 'openapi/openapi.yaml');
const SERVER_URL = (process.env.CONTRACT_SERVER_URL || '').replace(/\/+$/, '');
const ADMIN_TOKEN = process.env.CONTRACT_ADMIN_TOKEN || '';
const FETCH_TIMEOUT_MS = Number(process.env.CONTRACT_FETCH_TIMEOUT_MS || 15_000);

// ---------------------------------------------------------------------------------------------
// The table: one entry per operation that needs more than the defaults.
//
//   skip:    'reason'                  never send it (the reason is printed)
//   key:     'test' | 'live'           which API key a /v1 operation uses (default 'test')
//   prepare: async (ctx, transaction) => ({
//              params?:  { name: value }   path parameters (merged over ctx.defaultParams)
//              query?:   { name: value }   replaces the query string Dredd made
//              body?:    object            sent as JSON instead of the contract's example
//              form?:    object            sent as application/x-www-form-urlencoded
//              headers?: { name: value }   added to (or replacing) the request headers
//            })
// ---------------------------------------------------------------------------------------------
const withCall = async (ctx) => ({ params: { call_id: (await ctx.createCall()).id } });
const withSession = async (ctx) => ({ params: { session_id: (await ctx.createSession()).id } });
const asCustomer = async (ctx) => {
  const session = await ctx.createSession();
  return { params: { session_id: session.id }, headers: { 'X-Chat-Key': ctx.callKeyOf(session.customer_url) } };
};
const asCallSide = (side) => async (ctx) => {
  const call = await ctx.createCall();
  return { params: { call_id: call.id }, headers: { 'X-Call-Key': ctx.callKeyOf(call[`${side}_url`]) } };
};

const WEBHOOK_ENDPOINT = { url: 'https://hooks.example.invalid/contract', enabled_events: ['*'], description: 'Helpdesk ticket updates' };
const withWebhookEndpoint = async (ctx) => ({
  params: { webhook_endpoint_id: (await ctx.api('POST', '/v1/webhook_endpoints', WEBHOOK_ENDPOINT, 201)).id },
});

const OPERATIONS = {
  // admin
  'DELETE /admin/keys/{key_id}': {
    prepare: async (ctx) => ({ params: { key_id: (await ctx.createKey('test')).id } }),
  },
  // The `before` examples name rows this server does not have: the first page instead.
  'GET /admin/orgs': { prepare: async () => ({ query: {} }) },
  'GET /admin/orgs/{org_id}/ledger': { prepare: async () => ({ query: {} }) },
  'DELETE /admin/apps/{client_id}': {
    prepare: async (ctx) => ({ params: { client_id: (await ctx.createApp()).client_id } }),
  },

  // calls
  'GET /v1/calls/{call_id}': { prepare: withCall },
  'POST /v1/calls/{call_id}/end': { prepare: withCall },
  'POST /v1/calls/{call_id}/link': { prepare: withCall },
  'POST /v1/calls/{call_id}/phone-line': { prepare: withCall },
  'POST /v1/calls/{call_id}/dial': {
    skip: 'its 200 needs live mode, a telephony connector and a stand-in Twilio (TWILIO_API_BASE_URL)',
  },

  // call sides (X-Call-Key from the link's #k= fragment)
  'GET /calls/public/{call_id}': { prepare: asCallSide('customer') },
  'POST /calls/public/{call_id}/me': { prepare: asCallSide('customer') },
  'POST /calls/public/{call_id}/end': { prepare: asCallSide('customer') },

  // sessions
  'GET /v1/sessions/{session_id}': { prepare: withSession },
  'DELETE /v1/sessions/{session_id}': { prepare: withSession },
  'POST /v1/sessions/{session_id}/close': { prepare: withSession },
  'POST /v1/sessions/{session_id}/customer-link': { prepare: withSession },
  'GET /v1/sessions/{session_id}/messages': { prepare: withSession },
  'POST /v1/sessions/{session_id}/messages': { prepare: withSession },
  'POST /v1/sessions/{session_id}/typing': { prepare: withSession },
  'GET /v1/sessions/{session_id}/messages/{message_id}/audio': {
    skip: 'needs a voice message; the audio answer is checked by the integration tests',
  },

  // the customer's chat page (X-Chat-Key from customer_url's #k= fragment)
  'GET /chat/public/{session_id}': { prepare: asCustomer },
  'GET /chat/public/{session_id}/messages': { prepare: asCustomer },
  'POST /chat/public/{session_id}/messages': { prepare: asCustomer },
  'POST /chat/public/{session_id}/typing': { prepare: asCustomer },
  'POST /chat/public/{session_id}/voice': {
    skip: 'multipart audio upload: the contract has no example body and Dredd sends text bodies only',
  },
  'GET /chat/public/{session_id}/messages/{message_id}/audio': {
    skip: 'needs a voice message; the audio answer is checked by the integration tests',
  },
  'POST /v1/sessions/{session_id}/voice': {
    skip: 'multipart audio upload: the contract has no example body and Dredd sends text bodies only',
  },

  // webhooks: a host under .invalid (RFC 2606) never resolves, so the contract run sends nothing out
  'POST /v1/webhook_endpoints': { prepare: async () => ({ body: WEBHOOK_ENDPOINT }) },
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}': { prepare: withWebhookEndpoint },
  'PATCH /v1/webhook_endpoints/{webhook_endpoint_id}': { prepare: withWebhookEndpoint },
  'DELETE /v1/webhook_endpoints/{webhook_endpoint_id}': { prepare: withWebhookEndpoint },
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret': { prepare: withWebhookEndpoint },
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries': { prepare: async (ctx) => ({ ...(await withWebhookEndpoint(ctx)), query: {} }) },
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/resend': {
    prepare: async (ctx) => {
      const { params } = await withWebhookEndpoint(ctx);
      await ctx.createSession();
      const [delivery] = await ctx.api('GET', `/v1/webhook_endpoints/${params.webhook_endpoint_id}/deliveries`, undefined, 200);
      return { params: { ...params, delivery_id: delivery.id } };
    },
  },

  // oauth (Dredd does not use examples of form bodies)
  'POST /oauth2/token': { skip: 'needs a code, which only a member approving on the consent page makes (test/oauth drives it)' },
  'POST /oauth2/revoke': {
    prepare: async (ctx) => {
      const app = await ctx.createApp();
      return { form: { token: 'spk_rt_not_a_real_token', client_id: app.client_id, client_secret: app.client_secret } };
    },
  },
  'GET /oauth2/authorize': { skip: 'a browser page (x-page: HTML, cookies, redirects); test/oauth drives it' },
  'POST /oauth2/authorize': { skip: 'a browser page (x-page: HTML, cookies, redirects); test/oauth drives it' },
};

// ---------------------------------------------------------------------------------------------

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** "METHOD /path" -> { operationId, tag, auth }, from the contract. */
function readOperations() {
  const spec = YAML.parse(fs.readFileSync(SPEC_PATH, 'utf8'));
  const operations = new Map();
  for (const [apiPath, item] of Object.entries(spec.paths || {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags && op.tags[0]) || 'untagged';
      const schemes = (op.security || spec.security || []).flatMap((requirement) => Object.keys(requirement));
      const auth = schemes.includes('AdminToken')
        ? 'admin'
        : schemes.includes('CallKey')
          ? 'callKey'
          : schemes.includes('BearerAuth') || schemes.includes('ApiKeyAuth')
            ? 'api'
            : 'none';
      operations.set(`${method.toUpperCase()} ${apiPath}`, {
        operationId: op.operationId,
        tag,
        auth,
      });
    }
  }
  const scopes = (spec.components && spec.components.schemas && spec.components.schemas.Scope
    && spec.components.schemas.Scope.enum) || undefined;
  return { operations, scopes };
}

async function call(method, urlPath, { token, body, headers = {}, expect } = {}) {
  const response = await fetch(SERVER_URL + urlPath, {
    method,
    headers: {
      Accept: 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  const text = await response.text();
  if (expect !== undefined && response.status !== expect) {
    throw new Error(`${method} ${urlPath}: expected ${expect}, got ${response.status} ${text.slice(0, 300)}`);
  }
  return text ? JSON.parse(text) : undefined;
}

/** What entries can use: the organization and keys from beforeAll and helpers to make objects. */
const ctx = {
  orgId: undefined,
  liveKey: undefined, // { id, key }
  testKey: undefined, // { id, key }
  adminToken: ADMIN_TOKEN,
  /** Path parameters every transaction gets unless its entry says otherwise. */
  get defaultParams() {
    return { org_id: this.orgId };
  },
  admin: (method, urlPath, body, expect) => call(method, urlPath, { token: ADMIN_TOKEN, body, expect }),
  api: (method, urlPath, body, expect, mode = 'test') =>
    call(method, urlPath, { token: (mode === 'live' ? ctx.liveKey : ctx.testKey).key, body, expect }),
  async createKey(mode, scopes) {
    const created = await ctx.admin('POST', `/admin/orgs/${ctx.orgId}/keys`, { mode, ...(scopes ? { scopes } : {}) }, 201);
    return { id: created.id, key: created.key };
  },
  createApp: () => ctx.admin('POST', '/admin/apps', { name: 'Contract App', redirect_uris: ['https://app.example/cb'], scopes: ['account:read'] }, 201),
  createCall: (overrides = {}, mode = 'test') =>
    ctx.api('POST', '/v1/calls', { agent_language: 'en', agent_name: 'Alice', customer_language: 'fi', customer_name: 'Matti', video: false, metadata: { ticket: 4711, priority: 'high' }, ...overrides }, 201, mode),
  createSession: (overrides = {}, mode = 'test') =>
    // Dredd turns the contract's examples into required keys, so objects carry the examples' metadata.
    ctx.api('POST', '/v1/sessions', { agent_language: 'en', agent_name: 'Alice', customer_name: 'Matti', metadata: { ticket: 4711 }, ...overrides }, 201, mode),
  /** The key in a link's fragment (`#k=...`). */
  callKeyOf(url) {
    const match = /#k=([^&]+)/.exec(url || '');
    if (!match) throw new Error(`no #k= key in link ${url}`);
    return decodeURIComponent(match[1]);
  },
};

let catalogue = { operations: new Map(), scopes: undefined };
let setupError;
const report = { checked: [], skipped: new Map() };

function skip(transaction, reason) {
  transaction.skip = true;
  if (!report.skipped.has(reason)) report.skipped.set(reason, []);
  report.skipped.get(reason).push(transaction.name);
}

function headerValue(headers, name) {
  const key = Object.keys(headers || {}).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function setHeader(headers, name, value) {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  if (value !== undefined) headers[name] = value;
}

function buildUri(template, params, originalUri, query) {
  const missing = [];
  const filled = template.replace(/\{([^}]+)\}/g, (_, name) => {
    if (params[name] === undefined || params[name] === null) {
      missing.push(name);
      return `{${name}}`;
    }
    return encodeURIComponent(String(params[name]));
  });
  if (missing.length) {
    throw new Error(`no value for path parameter(s) ${missing.join(', ')}: add a prepare entry to OPERATIONS in contract-tests/hooks.cjs`);
  }
  if (query) {
    const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
    return search ? `${filled}?${search}` : filled;
  }
  const q = originalUri.indexOf('?');
  return q === -1 ? filled : filled + originalUri.slice(q);
}

hooks.beforeAll(async (transactions, done) => {
  try {
    if (!SERVER_URL || !ADMIN_TOKEN) throw new Error('CONTRACT_SERVER_URL and CONTRACT_ADMIN_TOKEN must be set (run npm run test:contract)');
    catalogue = readOperations();
    const org = await ctx.admin('POST', '/admin/orgs', { name: 'Dredd Contract Org', balance: 100 }, 201);
    ctx.orgId = org.org_id;
    ctx.liveKey = await ctx.createKey('live', catalogue.scopes);
    ctx.testKey = await ctx.createKey('test', catalogue.scopes);
  } catch (err) {
    setupError = err instanceof Error ? err.message : String(err);
    console.error(`contract hooks: setup failed: ${setupError}`);
  }
  done();
});

hooks.beforeEach(async (transaction, done) => {
  try {
    await prepareTransaction(transaction);
  } catch (err) {
    transaction.fail = `contract hooks: ${err instanceof Error ? err.message : String(err)}`;
  }
  done();
});

async function prepareTransaction(transaction) {
  if (setupError) {
    transaction.fail = `setup failed: ${setupError}`;
    return;
  }
  const method = transaction.request.method.toUpperCase();
  const template = transaction.origin.resourceName;
  const key = `${method} ${template}`;
  const op = catalogue.operations.get(key);
  if (!op) throw new Error(`no operation ${key} in ${path.relative(ROOT, SPEC_PATH)}`);

  const status = Number(transaction.expected.statusCode);
  if (!(status >= 200 && status < 300)) return skip(transaction, 'non-2xx status (one Dredd transaction per documented status)');
  if (/^text\/event-stream/i.test(headerValue(transaction.expected.headers, 'Content-Type') || '')) {
    return skip(transaction, 'text/event-stream (never ends)');
  }
  const entry = OPERATIONS[key] || {};
  if (entry.skip) return skip(transaction, `OPERATIONS table: ${entry.skip}`);

  const request = transaction.request;
  const headers = request.headers;
  setHeader(headers, 'Authorization', undefined);
  if (op.auth === 'admin') setHeader(headers, 'Authorization', `Bearer ${ADMIN_TOKEN}`);
  if (op.auth === 'api') {
    const apiKey = entry.key === 'live' ? ctx.liveKey : ctx.testKey;
    setHeader(headers, 'Authorization', `Bearer ${apiKey.key}`);
  }

  // One example Idempotency-Key shared by several operations would be refused (422) as reused.
  if (headerValue(headers, 'Idempotency-Key') !== undefined) setHeader(headers, 'Idempotency-Key', randomUUID());

  const prepared = (entry.prepare ? await entry.prepare(ctx, transaction) : undefined) || {};
  const params = { ...ctx.defaultParams, ...(prepared.params || {}) };
  const uri = buildUri(template, params, request.uri, prepared.query);
  const prefix = transaction.fullPath.endsWith(request.uri)
    ? transaction.fullPath.slice(0, transaction.fullPath.length - request.uri.length)
    : '';
  request.uri = uri;
  transaction.fullPath = prefix + uri;

  if (prepared.body !== undefined) {
    request.body = JSON.stringify(prepared.body);
    setHeader(headers, 'Content-Type', 'application/json');
  }
  if (prepared.form !== undefined) {
    request.body = new URLSearchParams(Object.entries(prepared.form).map(([k, v]) => [k, String(v)])).toString();
    setHeader(headers, 'Content-Type', 'application/x-www-form-urlencoded');
  }
  for (const [name, value] of Object.entries(prepared.headers || {})) setHeader(headers, name, value);
  setHeader(headers, 'Content-Length', undefined); // Dredd recomputes it from the body

  report.checked.push(`${transaction.name}  [${op.operationId}: ${method} ${uri}]`);
}

// Express answers `application/json; charset=utf-8`; Dredd compares Content-Type exactly.
hooks.beforeEachValidation((transaction) => {
  const headers = transaction.real && transaction.real.headers;
  if (!headers) return;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === 'content-type' && typeof headers[name] === 'string') {
      headers[name] = headers[name].replace(/\s*;\s*charset=[^;]*/i, '');
    }
  }
});

hooks.afterAll((transactions, done) => {
  const lines = ['', `contract hooks: ${report.checked.length} transaction(s) sent:`];
  for (const name of report.checked) lines.push(`  ${name}`);
  for (const [reason, names] of report.skipped) {
    lines.push(`contract hooks: skipped ${names.length}: ${reason}`);
    if (!reason.startsWith('non-2xx')) for (const name of names) lines.push(`  ${name}`);
  }
  console.log(lines.join('\n'));
  done();
});
