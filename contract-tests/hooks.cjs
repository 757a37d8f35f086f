// Dredd hooks (CommonJS: Dredd loads hook files with require(), and in a "type": "module" package a
// .js hook file would be skipped with only a warning). Run through `npm run test:contract`, which
// starts the server (and a stand-in Twilio) and passes their settings in CONTRACT_* variables.
//
// Dredd makes one transaction per operation and documented status. Every one is sent, made to happen
// for real: the hooks create the objects it needs and the failing condition its status documents
// (PROVOKE below: one way per status, which an operation's entry in OPERATIONS may replace). A status
// with no way to provoke it fails the run, so a status added to the contract must be covered here;
// the few that cannot be provoked against the server are skipped with a reason the summary prints.
//
// Dredd's own body check (gavel) ignores keywords such as `additionalProperties`, ranges and formats,
// so afterEach validates every JSON answer against the contract's schema with ajv, and a 422 answer
// must name the problem (loc and type) that the operation's 422 example names.
//
// Defaults: /v1 operations use a test key with every scope, /admin ones the admin token, `{org_id}`
// is the organization made in beforeAll, the body is the contract's example, and each transaction
// gets a fresh Idempotency-Key (Dredd sends the contract's one example value everywhere) and its own
// client address (X-Forwarded-For; the server runs with TRUST_PROXY=1), so the refusals provoked on
// purpose do not add up to the failed-attempt limit of one address.
const hooks = require('hooks');
const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const { default: Ajv } = require('ajv');
const addFormats = require('ajv-formats');

const ROOT = path.resolve(__dirname, '..');
const SPEC_PATH = process.env.CONTRACT_SPEC_PATH || path.join(ROOT, 'openapi/openapi.yaml');
const SERVER_URL = (process.env.CONTRACT_SERVER_URL || '').replace(/\/+$/, '');
const ADMIN_TOKEN = process.env.CONTRACT_ADMIN_TOKEN || '';
const TWILIO = JSON.parse(process.env.CONTRACT_TWILIO || 'null'); // { accountSid, authToken, refused, failing }
const VERBOSE = ['1', 'true', 'yes'].includes((process.env.CONTRACT_VERBOSE || '').toLowerCase());
const FETCH_TIMEOUT_MS = Number(process.env.CONTRACT_FETCH_TIMEOUT_MS || 15_000);
const VOICE_FILE = path.join(ROOT, 'test/fixtures/audio/chromium-opus.webm');
/** Where the 429 transactions come from: an address that has used up its failed attempts. */
const GUESSER_ADDRESS = '198.51.100.7';

// ---------------------------------------------------------------------------------------------
// Making objects: one helper per kind, used by the entries below.
// ---------------------------------------------------------------------------------------------

async function call(method, urlPath, { token, body, form, multipart, headers = {}, expect } = {}) {
  const response = await fetch(SERVER_URL + urlPath, {
    method,
    headers: {
      Accept: 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : form ? new URLSearchParams(form) : multipart,
    redirect: 'manual',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  const text = await response.text();
  if (expect !== undefined && ![expect].flat().includes(response.status)) {
    throw new Error(`${method} ${urlPath}: expected ${expect}, got ${response.status} ${text.slice(0, 300)}`);
  }
  return text && /json/.test(response.headers.get('content-type') || '') ? JSON.parse(text) : text;
}

const phoneNumberBody = () => ({
  number: `+1415${String(randomBytes(4).readUInt32BE() % 10_000_000).padStart(7, '0')}`,
  mode: 'new_call',
  agent_language: 'en',
  agent_name: 'Alice',
  customer_languages: ['es', 'fr'],
  metadata: { queue: 'support' },
});
const WEBHOOK_ENDPOINT = { url: 'https://hooks.example.invalid/contract', enabled_events: ['*'], description: 'Helpdesk ticket updates' };

/** What entries use: organizations, keys and the objects of the API. */
const ctx = {
  orgId: undefined,
  /** API keys ({ id, key }): test and live of the organization (balance 100), live of one without balance. */
  keys: {},
  get defaultParams() {
    return { org_id: this.orgId };
  },
  admin: (method, urlPath, body, expect) => call(method, urlPath, { token: ADMIN_TOKEN, body, expect }),
  api: (method, urlPath, body, expect, key = ctx.keys.test) => call(method, urlPath, { token: key.key, body, expect }),
  createOrg: (body = {}) => ctx.admin('POST', '/admin/orgs', { name: 'Dredd Contract Org', ...body }, 201),
  async createKey(mode, scopes, orgId = ctx.orgId) {
    const created = await ctx.admin('POST', `/admin/orgs/${orgId}/keys`, { mode, ...(scopes ? { scopes } : {}) }, 201);
    return { id: created.id, key: created.key };
  },
  /** A test key with every scope but `scope` (made once per scope). */
  keyWithout(scope) {
    ctx.scopeless[scope] ??= ctx.createKey('test', ctx.scopes.filter((s) => s !== scope));
    return ctx.scopeless[scope];
  },
  scopeless: {},
  createApp: () => ctx.admin('POST', '/admin/apps', { name: 'Contract App', redirect_uris: ['https://app.example/cb'], scopes: ['account:read'] }, 201),
  // Dredd turns the contract's examples into required keys, so objects carry the examples' metadata.
  createCall: (overrides = {}, key) =>
    ctx.api('POST', '/v1/calls', { agent_language: 'en', agent_name: 'Alice', customer_language: 'fi', customer_name: 'Matti', video: false, metadata: { ticket: 4711, priority: 'high' }, ...overrides }, 201, key),
  async endedCall(key) {
    const created = await ctx.createCall({}, key);
    await ctx.api('POST', `/v1/calls/${created.id}/end`, undefined, 200, key);
    return created;
  },
  createSession: (overrides = {}, key) =>
    ctx.api('POST', '/v1/sessions', { agent_language: 'en', agent_name: 'Alice', customer_name: 'Matti', customer_language: 'fi', metadata: { ticket: 4711 }, ...overrides }, 201, key),
  async closedSession(key) {
    const session = await ctx.createSession({}, key);
    await ctx.api('POST', `/v1/sessions/${session.id}/close`, undefined, 200, key);
    return session;
  },
  /** A voice message in a new session: { session, message }. */
  async voiceMessage() {
    const session = await ctx.createSession();
    const message = await call('POST', `/v1/sessions/${session.id}/voice`, { token: ctx.keys.test.key, multipart: voiceForm({ sender: 'agent' }), expect: 201 });
    return { session, message };
  },
  /** A phone number of its own (a number is registered once per mode), with the example's other fields. */
  createPhoneNumber: (key) => ctx.api('POST', '/v1/phone_numbers', phoneNumberBody(), 201, key),
  createWebhookEndpoint: (key) => ctx.api('POST', '/v1/webhook_endpoints', WEBHOOK_ENDPOINT, 201, key),
  /** An endpoint with one delivery (the event of a new session): { endpoint, delivery }. */
  async webhookDelivery() {
    const endpoint = await ctx.createWebhookEndpoint();
    await ctx.createSession();
    const [delivery] = await ctx.api('GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`, undefined, 200);
    return { endpoint, delivery };
  },
  /** A member of the organization signed in to the console: { cookie }. */
  async signedInMember() {
    const email = `member-${randomBytes(6).toString('hex')}@example.com`;
    const password = 'contract-password-long';
    await ctx.admin('POST', `/admin/orgs/${ctx.orgId}/members`, { email, password }, 201);
    const jar = new Map();
    const visit = async (urlPath, form) => {
      const response = await fetch(SERVER_URL + urlPath, {
        method: form ? 'POST' : 'GET',
        headers: { Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
        body: form ? new URLSearchParams(form) : undefined,
        redirect: 'manual',
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      return response;
    };
    const page = await (await visit('/console/sign-in')).text();
    const signedIn = await visit('/console/sign-in', { email, password, csrf_token: csrfOf(page), return_to: '' });
    if (signedIn.status !== 303) throw new Error(`console sign-in answered ${signedIn.status}`);
    return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
  },
  /** An app and a signed-in member on its consent page: { app, member, csrf }. */
  async consent() {
    const [app, member] = await Promise.all([ctx.createApp(), ctx.signedInMember()]);
    const page = await call('GET', `/oauth2/authorize?${new URLSearchParams(authorizeQuery(app))}`, { headers: { Cookie: member.cookie }, expect: 200 });
    return { app, member, csrf: csrfOf(page) };
  },
  /** A member's approval of an app: { app, code }. */
  async authorizationCode() {
    const { app, member, csrf } = await ctx.consent();
    const response = await fetch(`${SERVER_URL}/oauth2/authorize`, {
      method: 'POST',
      headers: { Cookie: member.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...authorizeQuery(app), decision: 'allow', csrf_token: csrf }),
      redirect: 'manual',
    });
    const code = new URL(response.headers.get('location') || 'x:/').searchParams.get('code');
    if (!code) throw new Error(`the consent form answered ${response.status} without a code`);
    return { app, code };
  },
  /** The key in a link's fragment (`#k=...`). */
  callKeyOf(url) {
    const match = /#k=([^&]+)/.exec(url || '');
    if (!match) throw new Error(`no #k= key in link ${url}`);
    return decodeURIComponent(match[1]);
  },
};

const csrfOf = (html) => {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no csrf_token in the page');
  return match[1];
};

/** A multipart body with the voice fixture as `audio`, and `fields`. */
function voiceForm(fields = {}, audio = fs.readFileSync(VOICE_FILE)) {
  const form = new FormData();
  form.append('audio', new Blob([audio], { type: 'audio/webm' }), 'voice.webm');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

/** The same as bytes Dredd can send: { body (Buffer), contentType }. */
async function multipartBody(form) {
  const request = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') };
}

// ---------------------------------------------------------------------------------------------
// What a prepare function returns (all optional):
//   params   { name: value }  path parameters (over ctx.defaultParams, unless exampleParams)
//   exampleParams  true       keep the contract's example path parameters (ids unknown here)
//   query    { name: value }  replaces the query string Dredd made
//   body     object           sent as JSON instead of the contract's example
//   form     object           sent as application/x-www-form-urlencoded
//   multipart FormData        sent as multipart/form-data
//   headers  { name: value }  added to (or replacing) the request headers; undefined removes one
//   key      { key }          the API key of a /v1 operation (default: the test key)
//   address  string           the client address (X-Forwarded-For)
// ---------------------------------------------------------------------------------------------
const withCall = async (ctx) => ({ params: { call_id: (await ctx.createCall()).id } });
const withEndedCall = async (ctx) => ({ params: { call_id: (await ctx.endedCall()).id } });
const withSession = async (ctx) => ({ params: { session_id: (await ctx.createSession()).id } });
const withClosedSession = async (ctx) => ({ params: { session_id: (await ctx.closedSession()).id } });
const asCallSide = (made = (ctx) => ctx.createCall()) => async (ctx) => {
  const created = await made(ctx);
  return { params: { call_id: created.id }, headers: { 'X-Call-Key': ctx.callKeyOf(created.customer_url) } };
};
const asCustomer = (made = (ctx) => ctx.createSession()) => async (ctx) => {
  const session = await made(ctx);
  return { params: { session_id: session.id }, headers: { 'X-Chat-Key': ctx.callKeyOf(session.customer_url) } };
};
/** A live session of the organization `key` belongs to, as the agent or as the customer. */
const liveSession = (keyName, { asCustomer: customer = false } = {}) => async (ctx) => {
  const key = ctx.keys[keyName];
  const session = await ctx.createSession({}, key);
  return customer
    ? { params: { session_id: session.id }, headers: { 'X-Chat-Key': ctx.callKeyOf(session.customer_url) } }
    : { params: { session_id: session.id }, key };
};
const withVoice = (prepare) => async (ctx, t) => {
  const prepared = await prepare(ctx, t);
  return { ...prepared, multipart: voiceForm(prepared.headers?.['X-Chat-Key'] ? {} : { sender: 'agent' }) };
};
const withPhoneNumber = async (ctx) => ({ params: { phone_number_id: (await ctx.createPhoneNumber()).id } });
const withWebhookEndpoint = async (ctx) => ({ params: { webhook_endpoint_id: (await ctx.createWebhookEndpoint()).id } });
const withDelivery = async (ctx) => {
  const { endpoint, delivery } = await ctx.webhookDelivery();
  return { params: { webhook_endpoint_id: endpoint.id, delivery_id: delivery.id } };
};
const withVoiceMessage = async (ctx) => {
  const { session, message } = await ctx.voiceMessage();
  return { params: { session_id: session.id, message_id: message.id } };
};
/** A live call ready to dial (customer language known) in the organization of `keyName`, with a telephony connector. */
const dialable = (keyName, to) => async (ctx) => {
  const key = ctx.keys[keyName];
  return { params: { call_id: (await ctx.createCall({}, key)).id }, key, body: { side: 'customer', to } };
};
/** A new member (role `admin`) of the organization: the member's path parameters. */
const withMember = (role = 'admin') => async (ctx) => {
  const member = await ctx.admin('POST', `/admin/orgs/${ctx.orgId}/members`, { email: `member-${randomBytes(6).toString('hex')}@example.com`, password: 'contract-password-long', role }, 201);
  return { params: { org_id: ctx.orgId, member_id: member.id } };
};
/** The only owner of a new organization, whom no change may take away. */
const withLastOwner = async (ctx) => {
  const org = await ctx.createOrg();
  const owner = await ctx.admin('POST', `/admin/orgs/${org.org_id}/members`, { email: 'last-owner@example.com', password: 'contract-password-long', role: 'owner' }, 201);
  // PATCH sends the example ({ role: viewer }): demoting the last owner.
  return { params: { org_id: org.org_id, member_id: owner.id } };
};
const skipped = (reason) => ({ skip: reason });
const TRANSCRIPT_RENDERING = 'a transcript as WebVTT or text: Dredd compares text bodies literally, and the times are the call\'s own (test/media/transcripts.db.test.ts checks them)';
const htmlPages = (...statuses) =>
  Object.fromEntries(statuses.map((status) => [status, skipped('an HTML page: Dredd compares text bodies literally, and the page holds per-visitor tokens (test/oauth/oauth.db.test.ts checks the pages)')]));
/** The query (or form) of an authorization request for `app`. */
const authorizeQuery = (app, overrides = {}) => ({
  response_type: 'code',
  client_id: app.client_id,
  redirect_uri: app.redirect_uris[0],
  scope: app.scopes.join(' '),
  state: 'af0ifjsldkj',
  ...overrides,
});

const IN_PROGRESS =
  'a 409 while a request with the same Idempotency-Key still runs: nothing in a black-box run holds one open (test/integration/billing.db.test.ts covers it)';

// ---------------------------------------------------------------------------------------------
// The table: what each operation needs beyond the defaults, by status. `ok` prepares the success
// answer(s); a status key replaces the generic way to provoke that status (PROVOKE below).
// ---------------------------------------------------------------------------------------------
const OPERATIONS = {
  // admin
  'DELETE /admin/keys/{key_id}': { ok: async (ctx) => ({ params: { key_id: (await ctx.createKey('test')).id } }) },
  // The `before` examples name rows this server does not have: the first page instead.
  'GET /admin/orgs': { ok: async () => ({ query: {} }), 404: async () => ({ query: { before: 'org_unknown0000000000' } }) },
  'GET /admin/orgs/{org_id}/ledger': { ok: async () => ({ query: {} }) },
  // An organization of its own: the example turns transcripts off, which the shared one's calls keep.
  'PATCH /admin/orgs/{org_id}': { ok: async (ctx) => ({ params: { org_id: (await ctx.createOrg()).org_id } }) },
  'DELETE /admin/apps/{client_id}': { ok: async (ctx) => ({ params: { client_id: (await ctx.createApp()).client_id } }) },
  'POST /admin/orgs/{org_id}/credit': { 409: async (ctx) => ({ params: { org_id: (await ctx.createOrg({ balance: null })).org_id } }) },
  'POST /admin/orgs/{org_id}/members': {
    409: async (ctx, t) => {
      const org = await ctx.createOrg();
      await ctx.admin('POST', `/admin/orgs/${org.org_id}/members`, JSON.parse(t.request.body), 201);
      return { params: { org_id: org.org_id } };
    },
  },

  'PATCH /admin/orgs/{org_id}/members/{member_id}': { ok: withMember(), 409: withLastOwner },
  'DELETE /admin/orgs/{org_id}/members/{member_id}': { ok: withMember(), 409: withLastOwner },
  'POST /admin/orgs/{org_id}/members/{member_id}/password_reset': { ok: withMember() },

  // calls
  'POST /v1/calls': { 402: async (ctx) => ({ key: ctx.keys.unfunded }), 409: skipped(IN_PROGRESS) },
  'GET /v1/calls/{call_id}': { ok: withCall },
  // One transaction per documented media type: JSON here; WebVTT and text are bodies Dredd would compare literally.
  'GET /v1/calls/{call_id}/transcript': {
    ok: async (ctx, transaction) => {
      const mediaType = (headerValue(transaction.expected.headers, 'Content-Type') || '').split(';')[0].trim();
      if (mediaType !== 'application/json') return void skip(transaction, TRANSCRIPT_RENDERING);
      return { ...(await withEndedCall(ctx)), query: {} };
    },
  },
  'DELETE /v1/calls/{call_id}/transcript': { ok: withCall },
  // Either read scope will do: refused only without both.
  'GET /v1/search': { 403: async (ctx) => ({ key: await ctx.createKey('test', ctx.scopes.filter((scope) => scope !== 'calls:read' && scope !== 'sessions:read')) }) },
  'POST /v1/calls/{call_id}/end': { ok: withCall, 409: withEndedCall },
  'POST /v1/calls/{call_id}/link': { ok: withCall, 409: withEndedCall },
  'POST /v1/calls/{call_id}/phone-line': { ok: withCall, 409: withEndedCall },
  'POST /v1/calls/{call_id}/dial': {
    ok: dialable('live', '+358401234567'),
    400: withCall, // test mode
    // A live call cannot start without balance: the call starts funded, then the balance is debited.
    402: async (ctx) => {
      const prepared = await dialable('live', '+358401234567')(ctx);
      const org = await ctx.createOrg({ balance: 1 });
      await ctx.admin('PUT', `/admin/orgs/${org.org_id}/telephony`, ctx.telephony, 200);
      const key = await ctx.createKey('live', ['calls:write'], org.org_id);
      const created = await ctx.createCall({}, key);
      await ctx.admin('POST', `/admin/orgs/${org.org_id}/credit`, { amount: -1 }, 200);
      return { ...prepared, params: { call_id: created.id }, key };
    },
    409: withEndedCall,
    502: dialable('live', TWILIO?.failing),
  },

  // call sides (X-Call-Key from the link's #k= fragment)
  'GET /calls/public/{call_id}': { ok: asCallSide() },
  'POST /calls/public/{call_id}/me': { ok: asCallSide(), 409: asCallSide((ctx) => ctx.endedCall()) },
  'POST /calls/public/{call_id}/end': { ok: asCallSide(), 409: asCallSide((ctx) => ctx.endedCall()) },

  // sessions
  'POST /v1/sessions': { 409: skipped(IN_PROGRESS) },
  'GET /v1/sessions/{session_id}': { ok: withSession },
  'DELETE /v1/sessions/{session_id}': { ok: withSession },
  'POST /v1/sessions/{session_id}/close': { ok: withSession, 409: withClosedSession },
  'POST /v1/sessions/{session_id}/customer-link': { ok: withSession, 409: withClosedSession },
  'GET /v1/sessions/{session_id}/messages': { ok: withSession },
  'POST /v1/sessions/{session_id}/messages': {
    ok: withSession,
    402: liveSession('unfunded'),
    409: withClosedSession,
    502: liveSession('live'),
  },
  'POST /v1/sessions/{session_id}/typing': { ok: withSession, 409: withClosedSession },
  'POST /v1/sessions/{session_id}/voice': {
    ok: withVoice(withSession),
    402: withVoice(liveSession('unfunded')),
    409: withVoice(withClosedSession),
    404: async () => ({ exampleParams: true, multipart: voiceForm({ sender: 'agent' }) }),
    413: async (ctx) => ({ ...(await withSession(ctx)), multipart: voiceForm({ sender: 'agent' }, Buffer.alloc(10 * 1024 * 1024 + 1)) }),
    502: withVoice(liveSession('live')),
  },
  'GET /v1/sessions/{session_id}/messages/{message_id}/audio': {
    ok: withVoiceMessage,
    404: async (ctx) => ({ params: { session_id: (await ctx.createSession()).id, message_id: 999999 } }),
  },

  // the customer's chat page (X-Chat-Key from customer_url's #k= fragment)
  'GET /chat/public/{session_id}': { ok: asCustomer() },
  'GET /chat/public/{session_id}/messages': { ok: asCustomer() },
  'POST /chat/public/{session_id}/messages': {
    ok: asCustomer(),
    402: liveSession('unfunded', { asCustomer: true }),
    409: asCustomer((ctx) => ctx.closedSession()),
    502: liveSession('live', { asCustomer: true }),
  },
  'POST /chat/public/{session_id}/typing': { ok: asCustomer(), 409: asCustomer((ctx) => ctx.closedSession()) },
  'GET /chat/public/{session_id}/stream': { ok: asCustomer() },
  'POST /chat/public/{session_id}/voice': {
    ok: withVoice(asCustomer()),
    402: withVoice(liveSession('unfunded', { asCustomer: true })),
    409: withVoice(asCustomer((ctx) => ctx.closedSession())),
    413: async (ctx) => ({ ...(await asCustomer()(ctx)), multipart: voiceForm({}, Buffer.alloc(10 * 1024 * 1024 + 1)) }),
    502: withVoice(liveSession('live', { asCustomer: true })),
  },
  'GET /chat/public/{session_id}/messages/{message_id}/audio': {
    ok: async (ctx) => {
      const { session, message } = await ctx.voiceMessage();
      return { params: { session_id: session.id, message_id: message.id }, headers: { 'X-Chat-Key': ctx.callKeyOf(session.customer_url) } };
    },
    404: async (ctx) => {
      const prepared = await asCustomer()(ctx);
      return { ...prepared, params: { ...prepared.params, message_id: 999999 } };
    },
  },

  // translation
  'POST /v1/translate': { 402: async (ctx) => ({ key: ctx.keys.unfunded }), 409: skipped(IN_PROGRESS), 502: async (ctx) => ({ key: ctx.keys.live }) },

  // phone numbers (the contract's organization has a telephony connector)
  'POST /v1/phone_numbers': {
    ok: async () => ({ body: phoneNumberBody() }),
    400: async (ctx) => ({ key: await ctx.createKey('test', ['calls:write'], (await ctx.createOrg()).org_id), body: phoneNumberBody() }),
    409: async (ctx) => {
      const body = phoneNumberBody();
      await ctx.api('POST', '/v1/phone_numbers', body, 201);
      return { body };
    },
  },
  'GET /v1/phone_numbers/{phone_number_id}': { ok: withPhoneNumber },
  'DELETE /v1/phone_numbers/{phone_number_id}': { ok: withPhoneNumber },

  // webhooks: a host under .invalid (RFC 2606) never resolves, so the contract run sends nothing out
  'POST /v1/webhook_endpoints': {
    ok: async () => ({ body: WEBHOOK_ENDPOINT }),
    // At most 16 endpoints per organization and mode: a new organization's test key fills them.
    409: async (ctx) => {
      const key = await ctx.createKey('test', ['webhooks:write'], (await ctx.createOrg()).org_id);
      for (let i = 0; i < 16; i++) await ctx.createWebhookEndpoint(key);
      return { key, body: WEBHOOK_ENDPOINT };
    },
  },
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}': { ok: withWebhookEndpoint },
  'PATCH /v1/webhook_endpoints/{webhook_endpoint_id}': { ok: withWebhookEndpoint },
  'DELETE /v1/webhook_endpoints/{webhook_endpoint_id}': { ok: withWebhookEndpoint },
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret': { ok: withWebhookEndpoint, 409: skipped(IN_PROGRESS) },
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries': { ok: async (ctx) => ({ ...(await withWebhookEndpoint(ctx)), query: {} }) },
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/resend': {
    ok: withDelivery,
    409: async (ctx) => {
      const prepared = await withDelivery(ctx);
      await ctx.api('PATCH', `/v1/webhook_endpoints/${prepared.params.webhook_endpoint_id}`, { disabled: true }, 200);
      return prepared;
    },
  },

  // oauth (Dredd does not use examples of form bodies)
  'POST /oauth2/token': {
    ok: async (ctx) => {
      const { app, code } = await ctx.authorizationCode();
      return { form: { grant_type: 'authorization_code', code, redirect_uri: app.redirect_uris[0], client_id: app.client_id, client_secret: app.client_secret } };
    },
    400: async (ctx) => {
      const app = await ctx.createApp();
      return { form: { grant_type: 'refresh_token', refresh_token: 'spk_rt_not_a_real_token', client_id: app.client_id, client_secret: app.client_secret } };
    },
    401: async (ctx) => {
      const app = await ctx.createApp();
      const basic = Buffer.from(`${app.client_id}:not-the-secret`).toString('base64');
      return { form: { grant_type: 'refresh_token', refresh_token: 'spk_rt_not_a_real_token' }, headers: { Authorization: `Basic ${basic}` } };
    },
  },
  'POST /oauth2/revoke': {
    ok: async (ctx) => {
      const app = await ctx.createApp();
      return { form: { token: 'spk_rt_not_a_real_token', client_id: app.client_id, client_secret: app.client_secret } };
    },
    400: async (ctx) => {
      const app = await ctx.createApp();
      return { form: { client_id: app.client_id, client_secret: app.client_secret } };
    },
    401: async (ctx) => {
      const app = await ctx.createApp();
      const basic = Buffer.from(`${app.client_id}:not-the-secret`).toString('base64');
      return { form: { token: 'spk_rt_not_a_real_token' }, headers: { Authorization: `Basic ${basic}` } };
    },
  },
  // The consent page (a browser flow): the query or form of an app made here; a signed-in member's cookie.
  'GET /oauth2/authorize': {
    302: async (ctx) => ({ query: authorizeQuery(await ctx.createApp(), { response_type: 'token' }) }), // back with unsupported_response_type
    303: async (ctx) => ({ query: authorizeQuery(await ctx.createApp()) }), // not signed in
    ...htmlPages(200, 400),
  },
  'POST /oauth2/authorize': {
    302: async (ctx) => {
      const { app, member, csrf } = await ctx.consent();
      return { form: { ...authorizeQuery(app), decision: 'allow', csrf_token: csrf }, headers: { Cookie: member.cookie } };
    },
    303: async (ctx) => ({ form: { ...authorizeQuery(await ctx.createApp()), decision: 'allow', csrf_token: 'csrf_none' } }),
    ...htmlPages(400, 403),
  },

  'GET /readyz': { 503: skipped('answered only while the database is unreachable or the server is stopping') },
};

// ---------------------------------------------------------------------------------------------
// The generic way to provoke each status, from the operation's kind of authentication.
// ---------------------------------------------------------------------------------------------
const PROVOKE = {
  // No credential, or one that is wrong (for the page keys, of an object that exists).
  401: async (ctx, t, op, entry) => {
    if (op.auth === 'api') return { key: null, exampleParams: true };
    if (op.auth === 'admin') return { headers: { Authorization: 'Bearer adm_not_the_token' }, exampleParams: true };
    const prepared = (entry.ok ? await entry.ok(ctx, t) : undefined) || {};
    const header = op.auth === 'callKey' ? 'X-Call-Key' : 'X-Chat-Key';
    return { ...prepared, headers: { ...prepared.headers, [header]: 'ck_not_the_key' } };
  },
  // A key with every scope but the operation's.
  403: async (ctx, t, op) => ({ key: await ctx.keyWithout(op.scope), exampleParams: true }),
  // The contract's example ids, which no object here has.
  404: async () => ({ exampleParams: true }),
  // The request that succeeds, with the one problem the operation's 422 example names.
  422: async (ctx, t, op, entry) => {
    const prepared = (entry.ok ? await entry.ok(ctx, t) : undefined) || {};
    return breakInput(op, prepared, t);
  },
  // /v1: a key whose rate limit is used up; others: an address that used up its failed attempts. Used up again
  // just before (one request when still used up): both limits forget a request after a while, and on a loaded
  // machine Dredd reaches these transactions minutes after the start.
  429: async (ctx, t, op) => {
    if (op.auth !== 'api') {
      await useUpFailedAttempts();
      return { address: GUESSER_ADDRESS, exampleParams: true };
    }
    await useUpLimitedKey();
    return { key: ctx.keys.limited, exampleParams: true };
  },
};

/** Ways to break one input so that the validator reports `type` at it. */
const BREAK = {
  required: (container, name) => delete container[name],
  maxLength: (container, name, schema) => (container[name] = 'x'.repeat(schema.maxLength + 1)),
  maximum: (container, name, schema) => (container[name] = schema.maximum + 1),
  minimum: (container, name, schema) => (container[name] = schema.minimum - 1),
  enum: (container, name) => (container[name] = 'not-an-allowed-value'),
  type: (container, name) => (container[name] = 'not-a-number'),
  url_private_address: (container, name) => (container[name] = 'https://127.0.0.1/hook'),
};

function breakInput(op, prepared, t) {
  const problem = op.invalid;
  if (!problem) throw new Error('its 422 answer has no example naming a problem to provoke');
  const [where, name] = problem.loc;
  const fn = BREAK[problem.type];
  if (!fn) throw new Error(`no way to provoke a 422 of type ${problem.type}: add one to BREAK`);
  const out = { ...prepared };
  if (where === 'body' && prepared.multipart) {
    if (problem.type !== 'required') throw new Error(`no way to provoke a 422 of type ${problem.type} in a multipart body`);
    out.multipart.delete(name);
  } else if (where === 'body') {
    out.body = { ...(prepared.body ?? JSON.parse(t.request.body || '{}')) };
    fn(out.body, name, op.bodySchema?.properties?.[name] || {});
  } else if (where === 'path') {
    out.params = { ...ctx.defaultParams, ...prepared.params };
    fn(out.params, name, op.parameters[name]);
  } else if (where === 'query') {
    out.query = { ...Object.fromEntries(new URL(t.request.uri, 'http://x').searchParams), ...prepared.query };
    fn(out.query, name, op.parameters[name]);
  } else if (where === 'header') {
    // Header names are case-insensitive (the server reports them in lower case).
    const declared = Object.keys(op.parameters).find((parameter) => parameter.toLowerCase() === name.toLowerCase());
    out.headers = { ...prepared.headers };
    fn(out.headers, declared, op.parameters[declared]);
  } else throw new Error(`no way to break a ${where} input`);
  return out;
}

// ---------------------------------------------------------------------------------------------

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const pointer = (parts) => '#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const refParts = (ref) => ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
const at = (spec, parts) => parts.reduce((node, part) => node?.[part], spec);

/** A node and the path to it, following $refs. */
function follow(spec, parts) {
  let node = at(spec, parts);
  while (node && typeof node.$ref === 'string') {
    parts = refParts(node.$ref);
    node = at(spec, parts);
  }
  return { node, parts };
}

/** "METHOD /path" -> what the hooks need of the operation, from the contract. */
function readContract() {
  const spec = YAML.parse(fs.readFileSync(SPEC_PATH, 'utf8'));
  const operations = new Map();
  for (const [apiPath, item] of Object.entries(spec.paths || {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const schemes = (op.security || spec.security || []).flatMap((requirement) => Object.keys(requirement));
      const auth = schemes.includes('AdminToken')
        ? 'admin'
        : schemes.includes('CallKey')
          ? 'callKey'
          : schemes.includes('ChatKey')
            ? 'chatKey'
            : schemes.includes('BearerAuth') || schemes.includes('ApiKeyAuth')
              ? 'api'
              : 'none';
      const parameters = {};
      for (const parameter of [...(item.parameters || []), ...(op.parameters || [])]) {
        const resolved = parameter.$ref ? follow(spec, refParts(parameter.$ref)).node : parameter;
        parameters[resolved.name] = resolved.schema?.$ref ? follow(spec, refParts(resolved.schema.$ref)).node : resolved.schema;
      }
      const invalid = follow(spec, ['paths', apiPath, method, 'responses', '422']).node?.content?.['application/json']?.example?.detail?.[0];
      const bodySchemaRef = op.requestBody?.content?.['application/json']?.schema;
      operations.set(`${method.toUpperCase()} ${apiPath}`, {
        apiPath,
        method,
        operationId: op.operationId,
        scope: op['x-scope'],
        auth,
        parameters,
        invalid,
        bodySchema: bodySchemaRef?.$ref ? follow(spec, refParts(bodySchemaRef.$ref)).node : bodySchemaRef,
      });
    }
  }
  const scopes = spec.components?.schemas?.Scope?.enum;
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true, validateSchema: false });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(spec, 'contract');
  /** The validator of an answer's body, or undefined when the contract gives no JSON schema for it. */
  const answerSchema = (op, status, mediaType) => {
    const { node, parts } = follow(spec, ['paths', op.apiPath, op.method, 'responses', String(status)]);
    if (!node?.content?.[mediaType]?.schema) return undefined;
    return ajv.getSchema(`contract${pointer([...parts, 'content', mediaType, 'schema'])}`);
  };
  return { operations, scopes, answerSchema };
}

let contract;
let setupError;
const report = { sent: [], byStatus: new Map(), skipped: new Map(), schemaChecked: 0 };
/** What afterEach checks, per transaction name. */
const checks = new Map();
let addressCounter = 0;

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

/** Sends `count` requests, `parallel` at a time. */
async function burst(count, parallel, send) {
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) {
      next++;
      await send();
    }
  }));
}

hooks.beforeAll(async (transactions, done) => {
  try {
    if (!SERVER_URL || !ADMIN_TOKEN) throw new Error('CONTRACT_SERVER_URL and CONTRACT_ADMIN_TOKEN must be set (run npm run test:contract)');
    if (!TWILIO) throw new Error('CONTRACT_TWILIO must be set (run npm run test:contract)');
    contract = readContract();
    ctx.scopes = contract.scopes;
    const telephony = (ctx.telephony = { account_sid: TWILIO.accountSid, auth_token: TWILIO.authToken, from_number: '+15005550006' });
    const org = await ctx.createOrg({ balance: 100 });
    ctx.orgId = org.org_id;
    await ctx.admin('PUT', `/admin/orgs/${ctx.orgId}/telephony`, telephony, 200);
    const unfunded = await ctx.createOrg({ balance: 0 });
    [ctx.keys.test, ctx.keys.live, ctx.keys.unfunded, ctx.keys.limited] = await Promise.all([
      ctx.createKey('test', ctx.scopes),
      ctx.createKey('live', ctx.scopes),
      ctx.createKey('live', ctx.scopes, unfunded.org_id),
      ctx.createKey('test', []),
    ]);
  } catch (err) {
    setupError = err instanceof Error ? err.message : String(err);
    console.error(`contract hooks: setup failed: ${setupError}`);
  }
  done();
});

/** Uses up the limited key's requests (a key without scopes: each is counted, then refused 403). */
async function useUpLimitedKey() {
  const first = await fetch(`${SERVER_URL}/v1/account`, { headers: { Authorization: `Bearer ${ctx.keys.limited.key}` } });
  await first.text();
  if (first.status === 429) return;
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));
  await burst(remaining, 16, () => call('GET', '/v1/account', { token: ctx.keys.limited.key, expect: 403 }));
  await call('GET', '/v1/account', { token: ctx.keys.limited.key, expect: 429 });
}

/** Uses up the guessing address's failed attempts. */
async function useUpFailedAttempts() {
  for (let guesses = 0; !(await isLimited()); guesses++) if (guesses > 10_000) throw new Error('the failed-attempt limit never applied');
}

/** A wrong admin token from the guessing address (a failed attempt): whether it got 429. */
async function isLimited() {
  const response = await fetch(`${SERVER_URL}/admin/orgs/${ctx.orgId}`, { headers: { Authorization: 'Bearer adm_a_guess', 'X-Forwarded-For': GUESSER_ADDRESS } });
  await response.text();
  return response.status === 429;
}

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
  const request = transaction.request;
  const method = request.method.toUpperCase();
  const template = transaction.origin.resourceName;
  const name = `${method} ${template}`;
  const op = contract.operations.get(name);
  if (!op) throw new Error(`no operation ${name} in ${path.relative(ROOT, SPEC_PATH)}`);

  const status = Number(transaction.expected.statusCode);
  const mediaType = (headerValue(transaction.expected.headers, 'Content-Type') || '').split(';')[0].trim();
  const entry = OPERATIONS[name] || {};
  const success = status >= 200 && status < 300;
  const how = entry.all ?? entry[status] ?? (success ? entry.ok ?? (async () => ({})) : PROVOKE[status]);
  if (how && how.skip) return skip(transaction, how.skip);
  if (success && mediaType === 'text/event-stream') return skip(transaction, 'an endless text/event-stream, whose end Dredd would wait for (test/integration/eventStreams.db.test.ts checks the streams)');
  if (!how) throw new Error(`no way to provoke ${status}: add one to OPERATIONS (or PROVOKE) in contract-tests/hooks.cjs`);

  const headers = request.headers;
  // One example Idempotency-Key shared by several operations would be refused (422) as reused.
  if (headerValue(headers, 'Idempotency-Key') !== undefined) setHeader(headers, 'Idempotency-Key', randomUUID());

  const prepared = (await how(ctx, transaction, op, entry)) || {};
  if (transaction.skip) return;

  setHeader(headers, 'Authorization', undefined);
  if (op.auth === 'admin') setHeader(headers, 'Authorization', `Bearer ${ADMIN_TOKEN}`);
  if (op.auth === 'api') {
    const apiKey = prepared.key === undefined ? ctx.keys.test : prepared.key;
    if (apiKey) setHeader(headers, 'Authorization', `Bearer ${apiKey.key}`);
  }
  addressCounter++;
  setHeader(headers, 'X-Forwarded-For', prepared.address ?? `198.18.${addressCounter >> 8}.${addressCounter & 255}`);

  const params = prepared.exampleParams ? {} : { ...ctx.defaultParams, ...(prepared.params || {}) };
  const uri = prepared.exampleParams ? request.uri : buildUri(template, params, request.uri, prepared.query);
  const prefix = transaction.fullPath.endsWith(request.uri) ? transaction.fullPath.slice(0, transaction.fullPath.length - request.uri.length) : '';
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
  if (prepared.multipart !== undefined) {
    const { body, contentType } = await multipartBody(prepared.multipart);
    request.body = body;
    setHeader(headers, 'Content-Type', contentType);
  }
  for (const [header, value] of Object.entries(prepared.headers || {})) setHeader(headers, header, value);
  setHeader(headers, 'Content-Length', undefined); // Dredd recomputes it from the body

  checks.set(transaction.name, { op, status, mediaType, invalid: status === 422 ? op.invalid : undefined });
  report.sent.push(`${transaction.name}  [${op.operationId}: ${method} ${uri}]`);
  report.byStatus.set(status, (report.byStatus.get(status) || 0) + 1);
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

// What gavel does not check: the whole JSON schema of the answer, and the problem a 422 names.
hooks.afterEach((transaction) => {
  const check = checks.get(transaction.name);
  if (!check || transaction.skip || !transaction.real) return;
  const { op, status, mediaType, invalid } = check;
  if (Number(transaction.real.statusCode) !== status || !/json/.test(mediaType)) return;
  let body;
  try {
    body = JSON.parse(transaction.real.body);
  } catch {
    transaction.fail = 'the answer is not JSON';
    return;
  }
  const validate = contract.answerSchema(op, status, mediaType);
  if (validate) report.schemaChecked++;
  if (validate && !validate(body)) {
    const problems = validate.errors.map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`);
    transaction.fail = `the answer does not match the contract's schema (ajv): ${problems.join('; ')}`;
    return;
  }
  if (invalid && !body.detail.some((item) => JSON.stringify(item.loc) === JSON.stringify(invalid.loc) && item.type === invalid.type)) {
    transaction.fail = `the 422 does not name the problem of the contract's example (${JSON.stringify(invalid.loc)} ${invalid.type}): ${transaction.real.body}`;
  }
});

hooks.afterAll((transactions, done) => {
  const counts = [...report.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
  const lines = [
    '',
    `contract hooks: ${report.sent.length} transaction(s) sent (${counts.join(', ')}); ${report.schemaChecked} JSON answer(s) also checked against the contract's schema with ajv`,
  ];
  if (VERBOSE) for (const name of report.sent) lines.push(`  ${name}`);
  for (const [reason, names] of report.skipped) {
    lines.push(`contract hooks: skipped ${names.length}: ${reason}`);
    for (const name of names) lines.push(`  ${name}`);
  }
  console.log(lines.join('\n'));
  done();
});
