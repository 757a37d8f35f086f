// One request per call: a valid request for an operation of the contract, bent in one hostile way
// (a field, the body's shape or bytes, its type or encoding, the path, the query, the credentials, the
// Idempotency-Key, an upload), chosen by the seeded generator.
import { deflateSync, gzipSync } from 'node:zlib';
import type { FuzzOperation, Parameter, Schema } from './contract.js';
import type { Random } from './random.js';
import { encodeSegment, hostileSegment, hostileValue, HOSTILE_STRINGS, RawJson, toJson, validValue } from './values.js';

export interface FuzzRequest {
  /** What was bent, for the report. */
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Bent so that the contract refuses it: any answer but a 4xx is a finding (e.g. an unknown field accepted). */
  mustRefuse?: boolean;
}

interface CallFixture {
  id: string;
  agentKey: string;
  customerKey: string;
}

interface SessionFixture {
  id: string;
  chatKey: string;
  messageId: number;
}

/** What the fuzzer made through the admin API before it started, for requests that get past auth. */
export interface Fixtures {
  adminToken: string;
  testKeys: string[];
  liveKey: string;
  /** A test key with only `account:read`. */
  narrowKey: string;
  revokedKey: string;
  /** A test key of another organization. */
  otherOrgKey: string;
  orgId: string;
  otherOrgId: string;
  call: CallFixture;
  session: SessionFixture;
  /** Objects the destructive operations (end, close, delete, new links, revoke) may spend. */
  spare: { call: CallFixture; session: SessionFixture; keyIds: string[] };
}

// Operations that end, rotate or delete what they are given: they get the spare objects.
const DESTRUCTIVE = new Set([
  'endCall',
  'createCallLink',
  'endCallSide',
  'closeSession',
  'deleteSession',
  'createCustomerLink',
  'adminRevokeKey',
]);

const BOUNDARY = 'fuzzBoundary7MA4YWxkTrZu0gW';

export class RequestMaker {
  private sequence = 0;

  constructor(
    private readonly random: Random,
    readonly fixtures: Fixtures,
  ) {}

  make(op: FuzzOperation): FuzzRequest {
    const spend = DESTRUCTIVE.has(op.operationId);
    const call = spend ? this.fixtures.spare.call : this.fixtures.call;
    const session = spend ? this.fixtures.spare.session : this.fixtures.session;
    const request: FuzzRequest = {
      label: 'valid',
      method: op.method,
      path: this.pathOf(op, call, session),
      headers: this.credentials(op, call, session),
    };
    const mediaTypes = Object.keys(op.body?.content ?? {});
    const mediaType = mediaTypes[0];
    if (mediaType) this.setBody(request, mediaType, op.body!.content[mediaType]);
    const query = this.validQuery(op);

    const bends: Array<[number, () => void]> = [
      [1, () => undefined],
      [mediaType === 'application/json' ? 4 : 0, () => this.bendJsonField(request, op.body!.content[mediaType])],
      [mediaType === 'application/json' ? 2 : 0, () => this.bendJsonBody(request, op.body!.content[mediaType])],
      [mediaType === 'application/json' ? 3 : 0, () => this.bendJsonBounds(request, op.body!.content[mediaType])],
      [mediaType === 'multipart/form-data' ? 5 : 0, () => this.bendUpload(request, op)],
      [mediaType ? 1 : 0, () => this.bendContentType(request)],
      [mediaType ? 1 : 0, () => this.bendEncoding(request)],
      [op.parameters.some((p) => p.in === 'path') ? 3 : 0, () => this.bendPath(request, op, call, session)],
      [2, () => this.bendQuery(request, op, query)],
      [2, () => this.bendCredentials(request)],
      [op.method === 'POST' && op.auth === 'api' ? 1 : 0, () => this.bendIdempotency(request)],
      [1, () => this.bendHeaders(request)],
    ];
    this.weighted(bends)();
    if (query.length) request.path += `${request.path.includes('?') ? '&' : '?'}${query.join('&')}`;
    if (request.body !== undefined && request.headers['transfer-encoding'] === undefined) {
      request.headers['content-length'] = String(request.body.length);
    }
    return request;
  }

  private weighted(choices: Array<[number, () => void]>): () => void {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let at = this.random.next() * total;
    for (const [weight, choice] of choices) {
      if (at < weight) return choice;
      at -= weight;
    }
    return choices[0][1];
  }

  private pathOf(op: FuzzOperation, call: CallFixture, session: SessionFixture): string {
    return op.path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeSegment(String(this.validPathValue(name, call, session))));
  }

  private validPathValue(name: string, call: CallFixture, session: SessionFixture): string | number {
    switch (name) {
      case 'call_id':
        return call.id;
      case 'session_id':
        return session.id;
      case 'message_id':
        return session.messageId;
      case 'org_id':
        return this.random.chance(0.9) ? this.fixtures.orgId : this.fixtures.otherOrgId;
      case 'key_id':
        return this.random.pick(this.fixtures.spare.keyIds);
      default:
        return 'unknown';
    }
  }

  private credentials(op: FuzzOperation, call: CallFixture, session: SessionFixture): Record<string, string> {
    switch (op.auth) {
      case 'api':
        return { authorization: `Bearer ${this.random.chance(0.85) ? this.random.pick(this.fixtures.testKeys) : this.fixtures.liveKey}` };
      case 'admin':
        return { authorization: `Bearer ${this.fixtures.adminToken}` };
      case 'callKey':
        return { 'x-call-key': this.random.chance(0.7) ? call.agentKey : call.customerKey };
      case 'chatKey':
        return { 'x-chat-key': session.chatKey };
      default:
        return {};
    }
  }

  private setBody(request: FuzzRequest, mediaType: string, schema: Schema): void {
    if (mediaType === 'multipart/form-data') {
      const fields = validValue(schema, this.random) as Record<string, unknown>;
      request.body = multipart([...Object.entries(fields).map(([name, value]) => field(name, String(value))), file('audio', tinyWav(), 'voice.wav')]);
      request.headers['content-type'] = `multipart/form-data; boundary=${BOUNDARY}`;
    } else if (mediaType === 'application/x-www-form-urlencoded') {
      const fields = validValue(schema, this.random) as Record<string, unknown>;
      request.body = Buffer.from(new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])).toString());
      request.headers['content-type'] = mediaType;
    } else {
      request.body = Buffer.from(toJson(validValue(schema, this.random)));
      request.headers['content-type'] = 'application/json';
    }
  }

  private bendJsonField(request: FuzzRequest, schema: Schema): void {
    const body = validValue(schema, this.random) as Record<string, unknown>;
    const names = [...Object.keys(schema.properties ?? {}), 'metadata', 'extra', '__proto__'];
    const name = this.random.pick(names);
    const propertySchema: Schema = schema.properties?.[name] ?? {};
    if (name === 'metadata' && this.random.chance(0.5)) {
      body.metadata = this.random.oneOf<unknown>([
        () => ({ [this.random.pick(HOSTILE_STRINGS)]: 'value' }),
        () => ({ key: this.random.pick(HOSTILE_STRINGS) }),
        () => Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, { bad: i }])),
        () => Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
        () => ({ nested: new RawJson(`${'['.repeat(3_000)}${']'.repeat(3_000)}`) }),
      ]);
    } else {
      body[name] = hostileValue(this.random, propertySchema);
    }
    request.label = `body field ${name}`;
    request.body = Buffer.from(toJson(body));
  }

  /**
   * A body the contract refuses by its shape alone: a field the operation does not take (a typo of one
   * it does, or one of its own), thousands of them, a list or a free-form object past its bound, a
   * metadata key too long. Each must get a 4xx, and quickly: the server counts before it checks.
   */
  private bendJsonBounds(request: FuzzRequest, schema: Schema): void {
    const body = validValue(schema, this.random) as Record<string, unknown>;
    const properties = Object.entries<Schema>(schema.properties ?? {});
    const lists = properties.filter(([, property]) => property.maxItems !== undefined || property.oneOf?.some((option: Schema) => option.maxItems !== undefined));
    const freeForm = properties.filter(([, property]) => property.maxProperties !== undefined);
    const [label, bend] = this.random.pick<[string, () => void]>([
      [
        'unknown field (a typo)',
        () => {
          const [name] = this.random.pick(properties.length ? properties : [['field', {}]]);
          const cut = Math.floor(this.random.next() * name.length);
          body[`${name.slice(0, cut)}${name.slice(cut + 1)}x`] = body[name] ?? 'value';
        },
      ],
      ['unknown field', () => (body[this.random.pick(['extra', 'constructor', 'toString', 'id', 'livemode'])] = this.random.pick([1, 'x', null, {}]))],
      ['30,000 unknown fields', () => Object.assign(body, Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`f${i}`, { bad: i }])))],
      [
        'list past its maxItems',
        () => {
          if (!lists.length) return void (body.extra = []);
          const [name, property] = this.random.pick(lists);
          const max: number = property.maxItems ?? property.oneOf.find((option: Schema) => option.maxItems !== undefined).maxItems;
          body[name] = Array.from({ length: this.random.pick([max + 1, 50_000]) }, () => ({ bad: true }));
        },
      ],
      [
        'free-form object past its maxProperties',
        () => {
          if (!freeForm.length) return void (body.extra = {});
          const [name, property] = this.random.pick(freeForm);
          body[name] = Object.fromEntries(Array.from({ length: this.random.pick([property.maxProperties + 1, 52_000]) }, (_, i) => [`k${i}`, []]));
        },
      ],
      ['free-form key too long', () => (body[freeForm.length ? this.random.pick(freeForm)[0] : 'extra'] = { ['k'.repeat(this.random.pick([41, 1_001, 100_000]))]: 1 })],
    ]);
    bend();
    request.label = label;
    request.body = Buffer.from(toJson(body));
    request.mustRefuse = true;
  }

  private bendJsonBody(request: FuzzRequest, schema: Schema): void {
    const valid = toJson(validValue(schema, this.random));
    // Made only when chosen: some are a megabyte.
    const [label, text] = this.random.pick<[string, () => string]>([
      ['missing required fields', () => '{}'],
      ['array body', () => '[]'],
      ['string body', () => '"text"'],
      ['number body', () => '1e400'],
      ['null body', () => 'null'],
      ['invalid JSON', () => '{"a": 1,'],
      ['truncated JSON', () => valid.slice(0, Math.max(1, valid.length - 3))],
      ['BOM before JSON', () => `\ufeff${valid}`],
      ['duplicate keys', () => valid.replace(/^\{/, '{"agent_language":"en","agent_language":7,')],
      ['deep nesting', () => `${'['.repeat(20_000)}${']'.repeat(20_000)}`],
      ['deep object', () => `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`],
      ['huge array', () => `[${Array.from({ length: 50_000 }, () => '0').join(',')}]`],
      ['lone surrogate escapes', () => valid.replace(/"(\w+)":"/, '"$1":"\\ud800')],
      ['NUL escapes', () => valid.replace(/"(\w+)":"/, '"$1":"\\u0000')],
      ['proto pollution', () => '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'],
      ['empty body', () => ''],
      ['over 1 MB', () => `{"x":"${'a'.repeat(1_100_000)}"}`],
    ]);
    request.label = label;
    request.body = Buffer.from(text());
  }

  private bendUpload(request: FuzzRequest, op: FuzzOperation): void {
    const sender = op.operationId === 'createVoiceMessage' ? [field('sender', 'agent')] : [];
    const wav = tinyWav();
    const [label, parts, boundary] = this.random.pick<[string, Buffer[], string]>([
      ['upload: several files', [...sender, file('audio', wav, 'a.wav'), file('audio', wav, 'b.wav')], BOUNDARY],
      ['upload: huge field', [...sender, field('author_name', 'x'.repeat(200_000)), file('audio', wav, 'a.wav')], BOUNDARY],
      ['upload: NUL in a field', [...sender, field('author_name', 'a\u0000b'), file('audio', wav, 'a.wav')], BOUNDARY],
      ['upload: surrogate in a field', [...sender, field('author_name', 'a\ud800b'), file('audio', wav, 'a.wav')], BOUNDARY],
      ['upload: no file', sender, BOUNDARY],
      ['upload: empty file', [...sender, file('audio', Buffer.alloc(0), 'a.wav')], BOUNDARY],
      ['upload: not audio', [...sender, file('audio', Buffer.from('%PDF-1.4 not audio at all'), 'a.wav')], BOUNDARY],
      ['upload: garbage audio', [...sender, file('audio', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(2000, 0xff)]), 'a.wav')], BOUNDARY],
      ['upload: odd file name', [...sender, file('audio', wav, '../../\u0000é.wav')], BOUNDARY],
      ['upload: many fields', [...sender, ...Array.from({ length: 200 }, (_, i) => field(`f${i}`, 'x')), file('audio', wav, 'a.wav')], BOUNDARY],
      ['upload: wrong boundary', [...sender, file('audio', wav, 'a.wav')], 'notTheBoundary'],
    ]);
    request.label = label;
    let body = multipart(parts);
    if (this.random.chance(0.25)) {
      body = body.subarray(0, Math.floor(body.length * this.random.next()));
      request.label += ', truncated';
    }
    request.body = body;
    request.headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
  }

  private bendContentType(request: FuzzRequest): void {
    const type = this.random.pick([
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'application/json; charset=latin9',
      'application/json; charset=utf-16',
      'application/json, text/plain',
      'application/*',
      '',
    ]);
    request.label = `Content-Type ${JSON.stringify(type)}`;
    if (type) request.headers['content-type'] = type;
    else delete request.headers['content-type'];
  }

  private bendEncoding(request: FuzzRequest): void {
    const body = request.body ?? Buffer.from('{}');
    const [encoding, bytes] = this.random.pick<[string, Buffer]>([
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['gzip', body],
      ['gzip', gzipSync(body).subarray(0, 12)],
      ['deflate', body],
      ['br', body],
      ['zstd', body],
      ['xz', body],
      ['gzip, gzip', gzipSync(gzipSync(body))],
      ['identity', body],
    ]);
    request.label = `Content-Encoding ${encoding}`;
    request.headers['content-encoding'] = encoding;
    request.body = bytes;
  }

  private bendPath(request: FuzzRequest, op: FuzzOperation, call: CallFixture, session: SessionFixture): void {
    const params = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
    const target = this.random.pick(params);
    const other = this.random.chance(0.2);
    request.label = `path ${target}`;
    request.path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
      if (name !== target) return encodeSegment(String(this.validPathValue(name, call, session)));
      // Sometimes an id of the other organization's kind: the object exists, but not for this caller.
      if (other) return encodeSegment(name === 'org_id' ? this.fixtures.otherOrgId : `${name.split('_')[0]}_doesNotExist123`);
      return hostileSegment(this.random);
    });
  }

  private validQuery(op: FuzzOperation): string[] {
    return op.parameters
      .filter((p) => p.in === 'query' && this.random.chance(0.5))
      .map((p) => `${p.name}=${encodeSegment(String(validValue(p.schema, this.random, p.name)))}`);
  }

  private bendQuery(request: FuzzRequest, op: FuzzOperation, query: string[]): void {
    const declared: Parameter[] = op.parameters.filter((p) => p.in === 'query');
    const name = declared.length && this.random.chance(0.8) ? this.random.pick(declared).name : this.random.pick(['unknown', '__proto__', 'limit[]', 'key']);
    const value = this.random.oneOf([
      () => encodeSegment(String(this.random.pick(HOSTILE_STRINGS))),
      () => this.random.pick(['%E0%A4%A', '%', '%00', '1e300', '-1', '18446744073709551616', '9007199254740993', 'NaN', 'x'.repeat(5_000)]),
      () => `1&${name}=2`,
    ]);
    request.label = `query ${name}`;
    query.push(`${encodeSegment(name)}=${value}`);
  }

  private bendCredentials(request: FuzzRequest): void {
    const { fixtures } = this;
    const key = this.random.pick(fixtures.testKeys);
    const [label, headers] = this.random.pick<[string, Record<string, string>]>([
      ['no credentials', {}],
      ['empty Bearer', { authorization: 'Bearer' }],
      ['Bearer and spaces', { authorization: 'Bearer    ' }],
      ['Basic', { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` }],
      ['lower-case bearer', { authorization: `bearer ${key}` }],
      ['unknown key', { authorization: 'Bearer spk_test_0000000000000000000000000000000000000000' }],
      ['key prefix only', { authorization: 'Bearer spk_live_' }],
      ['revoked key', { authorization: `Bearer ${fixtures.revokedKey}` }],
      ['live key', { authorization: `Bearer ${fixtures.liveKey}` }],
      ['narrow key', { authorization: `Bearer ${fixtures.narrowKey}` }],
      ['other organization', { authorization: `Bearer ${fixtures.otherOrgKey}` }],
      ['admin token on a key operation', { authorization: `Bearer ${fixtures.adminToken}` }],
      ['API key on the admin API', { authorization: `Bearer ${key}` }],
      ['X-Api-Key', { 'x-api-key': key }],
      ['X-Api-Key and Bearer disagree', { 'x-api-key': key, authorization: 'Bearer spk_test_nope' }],
      ['very long token', { authorization: `Bearer ${'a'.repeat(8_000)}` }],
      ['latin-1 token', { authorization: 'Bearer spk_test_\u00e9\u00ff\u00a0' }],
      ['two tokens', { authorization: `Bearer ${key} ${key}` }],
      ['wrong call key', { 'x-call-key': 'ck_wrong' }],
      ['call key of the other side', { 'x-call-key': fixtures.call.customerKey }],
      ['empty call key', { 'x-call-key': '' }],
      ['wrong chat key', { 'x-chat-key': 'chk_wrong' }],
      ['long chat key', { 'x-chat-key': 'k'.repeat(5_000) }],
    ]);
    request.label = `credentials: ${label}`;
    delete request.headers.authorization;
    delete request.headers['x-call-key'];
    delete request.headers['x-chat-key'];
    Object.assign(request.headers, headers);
  }

  private bendIdempotency(request: FuzzRequest): void {
    const value = this.random.pick([
      `fuzz-${this.sequence++}`,
      'fuzz-shared-key',
      '',
      ' ',
      'k'.repeat(256),
      'k'.repeat(5_000),
      '\u00e9\u00ff latin-1',
      'key with spaces',
    ]);
    request.label = `Idempotency-Key ${JSON.stringify(value.slice(0, 20))}`;
    request.headers['idempotency-key'] = value;
  }

  private bendHeaders(request: FuzzRequest): void {
    const [label, headers] = this.random.pick<[string, Record<string, string>]>([
      ['Last-Event-ID garbage', { 'last-event-id': 'evt_\u00ff'.repeat(50) }],
      ['Last-Event-ID unknown', { 'last-event-id': 'evt_doesNotExist' }],
      ['X-Request-Id garbage', { 'x-request-id': 'x'.repeat(500) }],
      ['Accept', { accept: 'text/html;q=0.1, */*;q=0' }],
      ['Transfer-Encoding chunked', { 'transfer-encoding': 'chunked' }],
      ['Expect 100-continue', { expect: '100-continue' }],
      ['X-Forwarded-For', { 'x-forwarded-for': '1.2.3.4, garbage, ::1, 999.1.1.1' }],
    ]);
    request.label = label;
    Object.assign(request.headers, headers);
  }
}

function field(name: string, value: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
}

function file(name: string, content: Buffer, filename: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: audio/wav\r\n\r\n`),
    content,
    Buffer.from('\r\n'),
  ]);
}

const multipart = (parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);

/** A quarter second of silence as a 24 kHz mono PCM16 WAV file. */
export function tinyWav(): Buffer {
  const data = Buffer.alloc(12_000);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(24_000, 24);
  header.writeUInt32LE(48_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
