// The one configuration module: every setting, its default, and its check, read once at start-up.
import { adminTokenWeakness } from './lib/secretStrength.js';

export type TranslationEngineName = 'openai' | 'deepl' | 'libretranslate';

export interface Config {
  port: number;
  host: string;
  /** Where clients reach this server (links, Twilio's callbacks, the OAuth issuer); no trailing slash. */
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  /** How long the database may take before a request gets 503 with Retry-After instead of waiting. */
  databaseTimeouts: DatabaseTimeouts;
  dataDir: string;
  adminToken: string | undefined;
  /**
   * AES-256 key sealing secrets kept at rest (telephony auth tokens). Required with PostgreSQL; unset
   * with the embedded database, a key file generated in DATA_DIR is used (src/secrets/key.ts).
   */
  secretsKey: Buffer | undefined;
  /** Several instances share rate limits and events through this Redis (with DATABASE_URL only). */
  redisUrl: string | undefined;
  /** Prefixes every Redis key and channel of this deployment (deployments may share a Redis). */
  redisPrefix: string;
  /**
   * How long a Redis command may take before it fails (REDIS_COMMAND_TIMEOUT_MS): a Redis that hangs
   * (rather than refusing connections) must not hold requests, which fall back as when it is away.
   */
  redisCommandTimeoutMs: number;
  /** How often the housekeeping jobs run, once per deployment (JOB_INTERVAL_SECONDS). */
  jobIntervalMs: number;
  /**
   * SIGTERM: how long open calls may go on while the instance drains (SHUTDOWN_GRACE_SECONDS; default
   * 10 with REDIS_URL, where other instances take the new clients, 0 alone).
   */
  shutdownGraceMs: number;
  audioSocketPort: number;
  /** The host a PBX dials for AudioSocket lines (phone-line answers). */
  audioSocketHost: string;
  /**
   * Several instances: the port another instance's relayed media reaches this one on, directly rather
   * than through Redis (MEDIA_PEER_PORT; 0: any free one, advertised through Redis; null: `off`, Redis only).
   */
  mediaPeerPort: number | null;
  /** The host other instances dial for it (MEDIA_PEER_HOST; default: HOST, or this machine's first external address). */
  mediaPeerHost: string | undefined;
  /** RTCIceServer entries handed to call sides for the video connection (ICE_SERVERS). */
  iceServers: IceServer[];
  /** A coturn server with `use-auth-secret`: each join gets its own time-limited credentials. */
  turn: TurnSettings | undefined;
  logLevel: string;
  /** Validate every response against the contract (tests switch this on; a violation becomes a 500). */
  validateResponses: boolean;
  /** Requests per window of each API key, and of each app connection (OAuth access tokens). */
  rateLimit: { requestsPerWindow: number; appRequestsPerWindow: number; windowMs: number };
  /** Refused credentials and unknown ids per client address (guessing); beyond: 429 without checking. */
  failedAttempts: { perWindow: number; windowMs: number };
  /**
   * How many proxies in front of the server append to X-Forwarded-For. 0: the client is the TCP peer
   * and X-Forwarded-For is ignored, since any client can write it (and so dodge per-address limits).
   */
  trustProxyHops: number;
  /**
   * API keys kept in memory after a lookup (revocations reach every instance at once; the TTL bounds an
   * entry whose announcement was lost). ttlMs 0: every request looks its key up in the database.
   */
  credentialCache: { ttlMs: number; maxEntries: number };
  /** Comment lines that keep idle event streams open through proxies. */
  sseHeartbeatMs: number;
  /** The organization console: how long a member's sign-in lasts, how many wrong passwords an email may take. */
  console: ConsoleSettings;
  /** How often an instance renews its lease; it is taken for dead after three missed renewals. */
  instanceHeartbeatMs: number;
  /** How long and how many connections a client may hold (README, "Limits and what a client sees"). */
  connections: ConnectionLimits;
  webhooks: WebhookSettings;
  engines: {
    translation: TranslationEngineName | undefined;
    openai: {
      apiKey: string | undefined;
      baseUrl: string | undefined;
      realtimeUrl: string;
      translationModel: string;
      transcriptionModel: string;
      realtimeTranslationModel: string;
      realtimeModel: string;
      /** Per attempt of a REST request (text translation, transcription); the realtime upgrade plus session setup. */
      timeouts: { translationMs: number; transcriptionMs: number; realtimeSetupMs: number };
      /** REST: retries after the first attempt (the SDK's backoff). Realtime: reconnects in a row before giving up. */
      retries: { rest: number; realtimeReconnects: number };
    };
    deepl: { apiKey: string | undefined; baseUrl: string | undefined };
    libreTranslate: { url: string | undefined; apiKey: string | undefined };
    twilioApiBaseUrl: string | undefined;
  };
}

export interface SignInThrottleSettings {
  /** Refused sign-ins (per address, per email) within the window before any delay (SIGN_IN_FREE_FAILURES). */
  freeFailures: number;
  /** The longest delay, however many refusals (SIGN_IN_MAX_DELAY_SECONDS). */
  maxDelayMs: number;
  /** Refusals older than this no longer count. */
  windowMs: number;
}

export interface ConsoleSettings {
  /** A console session ends this long after sign-in (CONSOLE_SESSION_TTL_SECONDS, default 12 hours). */
  sessionTtlMs: number;
  /** The sign-in slow-down (src/ratelimit/signInThrottle.ts): refusals per address and per email before it starts, its ceiling. */
  signInThrottle: SignInThrottleSettings;
}

export interface WebhookSettings {
  /**
   * Deliver to loopback, private, link-local and unique-local addresses, and to http:// URLs in live
   * mode (WEBHOOK_ALLOW_PRIVATE_ADDRESSES; off by default: a webhook URL must not reach the server's
   * own network). Tests and single-machine setups switch it on.
   */
  allowPrivateAddresses: boolean;
  /** One delivery attempt: connecting, sending and the receiver's answer (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** How often an instance looks for deliveries that are due (retries); new events are sent at once. */
  pollIntervalMs: number;
  /** Attempts in flight at once in this instance, all endpoints together (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /**
   * Attempts in flight at once for one organization's endpoints of one mode, across every instance
   * sharing the database (WEBHOOK_CONCURRENCY_PER_ORGANIZATION): endpoints that hang take this many
   * slots, never everyone's.
   */
  perOrganization: number;
  /** Attempts in flight at once to one endpoint, across every instance (WEBHOOK_CONCURRENCY_PER_ENDPOINT). */
  perEndpoint: number;
}

export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export interface TurnSettings {
  urls: string[];
  /** coturn's `static-auth-secret`. */
  secret: string;
  /**
   * How long TURN credentials stay valid from when they are made (a join answer, a renewal on the
   * signalling socket, which comes every half of it): short, so credentials stop soon after the call.
   */
  ttlSeconds: number;
}

/** What an ICE server's URL may start with (RFC 7064, RFC 7065). */
const ICE_URL = /^(stun|stuns|turn|turns):[^\s]+$/;

/** The problems of one ICE_SERVERS entry, each naming the entry. */
function iceServerProblems(entry: unknown, index: number): string[] {
  const where = `ICE_SERVERS[${index}]`;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return [`${where} must be an object like {"urls":"stun:stun.example.org:3478"}`];
  const { urls, username, credential } = entry as Record<string, unknown>;
  const list = typeof urls === 'string' ? [urls] : Array.isArray(urls) ? urls : null;
  if (!list || !list.length || !list.every((url) => typeof url === 'string')) return [`${where}.urls must be a URL or a non-empty array of URLs`];
  const problems = (list as string[])
    .filter((url) => !ICE_URL.test(url))
    .map((url) => `${where}.urls: "${url}" is not a stun:, stuns:, turn: or turns: URL`);
  for (const [name, value] of Object.entries({ username, credential })) {
    if (value !== undefined && typeof value !== 'string') problems.push(`${where}.${name} must be a string`);
  }
  // Browsers refuse a TURN server without credentials (RTCPeerConnection throws InvalidAccessError).
  if ((list as string[]).some((url) => /^turns?:/.test(url)) && (typeof username !== 'string' || typeof credential !== 'string')) {
    problems.push(`${where} is a TURN server: give "username" and "credential", or use TURN_URLS and TURN_SECRET for per-join credentials`);
  }
  return problems;
}

export interface ConnectionLimits {
  /** Open event streams per API key (GET /v1/events and session streams together). */
  eventStreamsPerKey: number;
  /** Open customer chat streams per session. */
  chatStreamsPerSession: number;
  /**
   * A stream whose credential has an end (a rolled key's overlap) looks whether it still works at least this
   * often, and at that end: a clock that was moved is noticed within this.
   */
  credentialExpiryCheckMs: number;
  /** Open media sockets per side of a call, counted separately for stream and listen sockets. */
  mediaSocketsPerSide: number;
  /** A request's headers must arrive within this (408). */
  httpHeadersTimeoutMs: number;
  /** A whole request, body included, must arrive within this (408). */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  httpKeepAliveTimeoutMs: number;
  /** A connection that sends nothing for this long while the server is not answering it is closed. */
  httpIdleTimeoutMs: number;
  /** A PBX must send its line's UUID within this. */
  audioSocketUuidTimeoutMs: number;
  /** A joined phone line that sends no message for this long is hung up. */
  audioSocketIdleTimeoutMs: number;
}

export interface DatabaseTimeouts {
  /** PostgreSQL's statement_timeout: a statement running longer is cancelled (PGlite has none). */
  statementMs: number;
  /** Opening a connection to PostgreSQL. */
  connectMs: number;
  /** Waiting for a free connection from the pool (PGlite's single connection included). */
  acquireMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const ENGINES: TranslationEngineName[] = ['openai', 'deepl', 'libretranslate'];

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const text = (name: string) => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const redisPrefix = () => {
    const value = env.REDIS_PREFIX ?? 'lia:';
    if (!/^[\x21-\x7e]{0,64}$/.test(value)) problems.push(`REDIS_PREFIX must be at most 64 printable characters without spaces, got "${value}"`);
    return value;
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const url = (name: string, protocols: string[]) => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error();
      return raw.replace(/\/+$/, '');
    } catch {
      // The message is printed: a password in the URL is not.
      const shown = raw.replace(/(\/\/[^/@:]*):[^/@]*@/, '$1:[redacted]@');
      problems.push(`${name} must be a ${protocols.join(' or ')} URL, got "${shown}"`);
      return undefined;
    }
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T | undefined) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T)) {
      problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };
  const iceServers = (): IceServer[] => {
    const raw = text('ICE_SERVERS');
    if (raw === undefined) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed)) {
      problems.push('ICE_SERVERS must be a JSON array of RTCIceServer objects, e.g. [{"urls":"stun:stun.example.org:3478"}]');
      return [];
    }
    const entryProblems = parsed.flatMap(iceServerProblems);
    problems.push(...entryProblems);
    return entryProblems.length ? [] : (parsed as IceServer[]);
  };
  const turn = (): TurnSettings | undefined => {
    const urls = text('TURN_URLS')?.split(',').map((url) => url.trim()).filter(Boolean);
    const secret = text('TURN_SECRET');
    const ttlSeconds = integer('TURN_CREDENTIAL_TTL_SECONDS', 600, 60, 7 * 24 * 3600);
    if (!urls?.length && secret === undefined) return undefined;
    if (!urls?.length) problems.push('TURN_SECRET is set but TURN_URLS is not: name the TURN server, e.g. turn:turn.example.org:3478');
    if (secret === undefined) problems.push("TURN_URLS is set but TURN_SECRET is not: give coturn's static-auth-secret");
    for (const url of urls ?? []) {
      if (!/^turns?:[^\s]+$/.test(url)) problems.push(`TURN_URLS: "${url}" is not a turn: or turns: URL`);
    }
    // Not printed: the secret itself never reaches a message.
    if (secret !== undefined && secret.length < 16) problems.push('TURN_SECRET must be at least 16 characters (e.g. openssl rand -hex 32)');
    return urls?.length && secret !== undefined ? { urls, secret, ttlSeconds } : undefined;
  };
  const secretsKey = () => {
    const raw = text('SECRETS_KEY');
    if (raw === undefined) return undefined;
    const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    // The value is a secret: the message never shows it.
    if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(raw) && key.toString('base64') !== raw)) {
      problems.push('SECRETS_KEY must be 32 bytes, as 44 base64 or 64 hex characters (e.g. openssl rand -base64 32)');
      return undefined;
    }
    return key;
  };
  const flag = (name: string) => ['1', 'true', 'yes'].includes((text(name) ?? '').toLowerCase());

  const port = integer('PORT', 8080, 0, 65535);
  const adminToken = text('ADMIN_TOKEN');
  const adminTokenProblem = adminToken === undefined ? undefined : adminTokenWeakness(adminToken);
  if (adminTokenProblem) problems.push(adminTokenProblem);
  const openai = {
    apiKey: text('OPENAI_API_KEY'),
    baseUrl: url('OPENAI_BASE_URL', ['http:', 'https:']),
    realtimeUrl: url('OPENAI_REALTIME_URL', ['ws:', 'wss:']) ?? 'wss://api.openai.com/v1/realtime',
    translationModel: text('OPENAI_TRANSLATION_MODEL') ?? 'gpt-4.1-mini',
    transcriptionModel: text('OPENAI_TRANSCRIPTION_MODEL') ?? 'gpt-4o-mini-transcribe',
    realtimeTranslationModel: text('OPENAI_REALTIME_TRANSLATION_MODEL') ?? 'gpt-realtime-translate',
    realtimeModel: text('OPENAI_REALTIME_MODEL') ?? 'gpt-realtime',
    timeouts: { translationMs: 30_000, transcriptionMs: 60_000, realtimeSetupMs: 10_000 },
    retries: { rest: 2, realtimeReconnects: 6 },
  };
  const deepl = { apiKey: text('DEEPL_API_KEY'), baseUrl: url('DEEPL_BASE_URL', ['http:', 'https:']) };
  const libreTranslate = {
    url: url('LIBRETRANSLATE_URL', ['http:', 'https:']),
    apiKey: text('LIBRETRANSLATE_API_KEY'),
  };
  // Default engine: the first whose settings are present (docs/translation-and-billing.md, "Engines").
  const defaultEngine: TranslationEngineName | undefined = openai.apiKey
    ? 'openai'
    : deepl.apiKey
      ? 'deepl'
      : libreTranslate.url
        ? 'libretranslate'
        : undefined;

  const connections: ConnectionLimits = {
    eventStreamsPerKey: integer('EVENT_STREAMS_PER_KEY', 50, 1, 100_000),
    chatStreamsPerSession: integer('CHAT_STREAMS_PER_SESSION', 10, 1, 1_000),
    credentialExpiryCheckMs: integer('CREDENTIAL_EXPIRY_CHECK_MS', 60_000, 10, 3_600_000),
    mediaSocketsPerSide: integer('MEDIA_SOCKETS_PER_SIDE', 10, 1, 1_000),
    httpHeadersTimeoutMs: integer('HTTP_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000),
    httpRequestTimeoutMs: integer('HTTP_REQUEST_TIMEOUT_MS', 120_000, 100, 3_600_000),
    httpKeepAliveTimeoutMs: integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    httpIdleTimeoutMs: integer('HTTP_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    audioSocketUuidTimeoutMs: integer('AUDIOSOCKET_UUID_TIMEOUT_MS', 10_000, 100, 600_000),
    audioSocketIdleTimeoutMs: integer('AUDIOSOCKET_IDLE_TIMEOUT_MS', 15_000, 100, 3_600_000),
  };
  // Node refuses a headers timeout longer than the request timeout (the headers are part of the request).
  if (connections.httpHeadersTimeoutMs > connections.httpRequestTimeoutMs) {
    problems.push('HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS');
  }

  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const sealingKey = secretsKey();
  const publicBaseUrl = url('PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  // Paths are appended to it, and it is the OAuth issuer identifier, which has neither (RFC 8414 2).
  if (/[?#]/.test(publicBaseUrl)) problems.push('PUBLIC_BASE_URL must not have a query or a fragment');
  const config: Config = {
    port,
    host: text('HOST') ?? '0.0.0.0',
    publicBaseUrl,
    databaseUrl,
    databaseTimeouts: {
      statementMs: integer('DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 3_600_000),
      connectMs: integer('DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
      acquireMs: integer('DB_ACQUIRE_TIMEOUT_MS', 10_000, 100, 600_000),
    },
    dataDir: text('DATA_DIR') ?? './data',
    adminToken,
    secretsKey: sealingKey,
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(),
    redisCommandTimeoutMs: integer('REDIS_COMMAND_TIMEOUT_MS', 2_000, 100, 60_000),
    jobIntervalMs: integer('JOB_INTERVAL_SECONDS', 3_600, 1, 86_400) * 1_000,
    shutdownGraceMs: integer('SHUTDOWN_GRACE_SECONDS', text('REDIS_URL') ? 10 : 0, 0, 12) * 1_000,
    audioSocketPort: integer('AUDIOSOCKET_PORT', 9092, 0, 65535),
    audioSocketHost: text('AUDIOSOCKET_HOST') ?? new URL(publicBaseUrl).hostname,
    mediaPeerPort: text('MEDIA_PEER_PORT')?.toLowerCase() === 'off' ? null : integer('MEDIA_PEER_PORT', 0, 0, 65535),
    mediaPeerHost: text('MEDIA_PEER_HOST'),
    iceServers: iceServers(),
    turn: turn(),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info') ?? 'info',
    validateResponses: flag('VALIDATE_RESPONSES'),
    rateLimit: {
      requestsPerWindow: integer('RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
      appRequestsPerWindow: integer('APP_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
      windowMs: 60_000,
    },
    failedAttempts: {
      perWindow: integer('FAILED_ATTEMPTS_PER_MINUTE', 30, 1, 1_000_000),
      windowMs: 60_000,
    },
    trustProxyHops: integer('TRUST_PROXY', 0, 0, 10),
    credentialCache: {
      ttlMs: integer('CREDENTIAL_CACHE_TTL_MS', 5_000, 0, 600_000),
      maxEntries: integer('CREDENTIAL_CACHE_SIZE', 10_000, 1, 10_000_000),
    },
    sseHeartbeatMs: integer('SSE_HEARTBEAT_MS', 15_000, 100, 600_000),
    console: {
      sessionTtlMs: integer('CONSOLE_SESSION_TTL_SECONDS', 12 * 3600, 60, 30 * 24 * 3600) * 1000,
      signInThrottle: {
        freeFailures: integer('SIGN_IN_FREE_FAILURES', 3, 1, 1000),
        maxDelayMs: integer('SIGN_IN_MAX_DELAY_SECONDS', 900, 1, 86_400) * 1000,
        windowMs: 3600_000,
      },
    },
    instanceHeartbeatMs: integer('INSTANCE_HEARTBEAT_MS', 10_000, 100, 600_000),
    connections,
    webhooks: {
      allowPrivateAddresses: flag('WEBHOOK_ALLOW_PRIVATE_ADDRESSES'),
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      pollIntervalMs: integer('WEBHOOK_POLL_INTERVAL_MS', 5_000, 100, 600_000),
      concurrency: integer('WEBHOOK_CONCURRENCY', 100, 1, 10_000),
      perOrganization: integer('WEBHOOK_CONCURRENCY_PER_ORGANIZATION', 10, 1, 1_000),
      perEndpoint: integer('WEBHOOK_CONCURRENCY_PER_ENDPOINT', 3, 1, 100),
    },
    engines: {
      translation: oneOf('TRANSLATION_ENGINE', ENGINES, defaultEngine),
      openai,
      deepl,
      libreTranslate,
      twilioApiBaseUrl: url('TWILIO_API_BASE_URL', ['http:', 'https:']),
    },
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}
