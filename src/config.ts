// The one configuration module: every setting, its default, and its check, read once at start-up.

export type TranslationEngineName = 'openai' | 'deepl' | 'libretranslate';

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  /** How long the database may take before a request gets 503 with Retry-After instead of waiting. */
  databaseTimeouts: DatabaseTimeouts;
  dataDir: string;
  adminToken: string | undefined;
  redisUrl: string | undefined;
  audioSocketPort: number;
  /** The host a PBX dials for AudioSocket lines (phone-line answers). */
  audioSocketHost: string;
  /** RTCIceServer entries handed to call sides for the video connection. */
  iceServers: Array<{ urls: string | string[]; username?: string; credential?: string }>;
  logLevel: string;
  /** Validate every response against the contract (tests switch this on; a violation becomes a 500). */
  validateResponses: boolean;
  rateLimit: { requestsPerWindow: number; windowMs: number };
  /** Comment lines that keep idle event streams open through proxies. */
  sseHeartbeatMs: number;
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
    };
    deepl: { apiKey: string | undefined; baseUrl: string | undefined };
    libreTranslate: { url: string | undefined; apiKey: string | undefined };
    twilioApiBaseUrl: string | undefined;
  };
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
      problems.push(`${name} must be a ${protocols.join(' or ')} URL, got "${raw}"`);
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
  const iceServers = () => {
    const raw = text('ICE_SERVERS');
    if (raw === undefined) return [];
    try {
      const parsed = JSON.parse(raw);
      const valid =
        Array.isArray(parsed) &&
        parsed.every((entry) => entry && (typeof entry.urls === 'string' || Array.isArray(entry.urls)));
      if (!valid) throw new Error();
      return parsed;
    } catch {
      problems.push('ICE_SERVERS must be a JSON array of RTCIceServer objects, e.g. [{"urls":"stun:stun.example.org:3478"}]');
      return [];
    }
  };
  const flag = (name: string) => ['1', 'true', 'yes'].includes((text(name) ?? '').toLowerCase());

  const port = integer('PORT', 8080, 0, 65535);
  const adminToken = text('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push('ADMIN_TOKEN must be at least 16 characters long');
  }
  const openai = {
    apiKey: text('OPENAI_API_KEY'),
    baseUrl: url('OPENAI_BASE_URL', ['http:', 'https:']),
    realtimeUrl: url('OPENAI_REALTIME_URL', ['ws:', 'wss:']) ?? 'wss://api.openai.com/v1/realtime',
    translationModel: text('OPENAI_TRANSLATION_MODEL') ?? 'gpt-4.1-mini',
    transcriptionModel: text('OPENAI_TRANSCRIPTION_MODEL') ?? 'gpt-4o-mini-transcribe',
    realtimeTranslationModel: text('OPENAI_REALTIME_TRANSLATION_MODEL') ?? 'gpt-realtime-translate',
    realtimeModel: text('OPENAI_REALTIME_MODEL') ?? 'gpt-realtime',
  };
  const deepl = { apiKey: text('DEEPL_API_KEY'), baseUrl: url('DEEPL_BASE_URL', ['http:', 'https:']) };
  const libreTranslate = {
    url: url('LIBRETRANSLATE_URL', ['http:', 'https:']),
    apiKey: text('LIBRETRANSLATE_API_KEY'),
  };
  // Default engine: the first whose settings are present (DESIGN §7).
  const defaultEngine: TranslationEngineName | undefined = openai.apiKey
    ? 'openai'
    : deepl.apiKey
      ? 'deepl'
      : libreTranslate.url
        ? 'libretranslate'
        : undefined;

  const publicBaseUrl = url('PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const config: Config = {
    port,
    host: text('HOST') ?? '0.0.0.0',
    publicBaseUrl,
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseTimeouts: {
      statementMs: integer('DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 3_600_000),
      connectMs: integer('DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
      acquireMs: integer('DB_ACQUIRE_TIMEOUT_MS', 10_000, 100, 600_000),
    },
    dataDir: text('DATA_DIR') ?? './data',
    adminToken,
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    audioSocketPort: integer('AUDIOSOCKET_PORT', 9092, 0, 65535),
    audioSocketHost: text('AUDIOSOCKET_HOST') ?? new URL(publicBaseUrl).hostname,
    iceServers: iceServers(),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info') ?? 'info',
    validateResponses: flag('VALIDATE_RESPONSES'),
    rateLimit: {
      requestsPerWindow: integer('RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
      windowMs: 60_000,
    },
    sseHeartbeatMs: integer('SSE_HEARTBEAT_MS', 15_000, 100, 600_000),
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
