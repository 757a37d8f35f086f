import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newSecret } from '../../src/lib/ids.js';
import { TEST_ADMIN_TOKEN } from '../support/testServer.js';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:8080',
      databaseUrl: undefined,
      dataDir: './data',
      audioSocketPort: 9092,
      rateLimit: { requestsPerWindow: 600, windowMs: 60_000 },
      failedAttempts: { perWindow: 30, windowMs: 60_000 },
      trustProxyHops: 0,
      connections: {
        eventStreamsPerKey: 50,
        chatStreamsPerSession: 10,
        mediaSocketsPerSide: 10,
        httpHeadersTimeoutMs: 20_000,
        httpRequestTimeoutMs: 120_000,
        httpKeepAliveTimeoutMs: 5_000,
        httpIdleTimeoutMs: 30_000,
        audioSocketUuidTimeoutMs: 10_000,
        audioSocketIdleTimeoutMs: 15_000,
      },
      databaseTimeouts: { statementMs: 10_000, connectMs: 5_000, acquireMs: 10_000 },
    });
    expect(config.engines.translation).toBeUndefined();
    expect(config.engines.openai.realtimeUrl).toBe('wss://api.openai.com/v1/realtime');
  });

  it('shares a deployment through REDIS_URL with keys under REDIS_PREFIX, and runs housekeeping every JOB_INTERVAL_SECONDS', () => {
    expect(loadConfig({})).toMatchObject({ redisUrl: undefined, redisPrefix: 'lia:', jobIntervalMs: 3_600_000 });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379/2', REDIS_PREFIX: 'acme:', JOB_INTERVAL_SECONDS: '60' })).toMatchObject({
      redisUrl: 'redis://cache:6379/2',
      redisPrefix: 'acme:',
      jobIntervalMs: 60_000,
    });
    expect(loadConfig({ REDIS_PREFIX: '' }).redisPrefix).toBe('');
    expect(() => loadConfig({ REDIS_PREFIX: 'has space' })).toThrow(/REDIS_PREFIX must be at most 64 printable characters/);
    expect(() => loadConfig({ REDIS_URL: 'http://cache:6379' })).toThrow(ConfigError);
    expect(() => loadConfig({ JOB_INTERVAL_SECONDS: '0' })).toThrow(/JOB_INTERVAL_SECONDS must be a whole number from 1 to 86400/);
  });

  it('derives the public base URL from PORT, trims a trailing slash and refuses a query or fragment', () => {
    expect(loadConfig({ PORT: '9000' }).publicBaseUrl).toBe('http://localhost:9000');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/?tenant=a' })).toThrow(/PUBLIC_BASE_URL must not have a query or a fragment/);
  });

  it('picks the first engine whose settings are present, unless one is named', () => {
    expect(loadConfig({ DEEPL_API_KEY: 'k', LIBRETRANSLATE_URL: 'http://lt:5000' }).engines.translation).toBe('deepl');
    expect(loadConfig({ LIBRETRANSLATE_URL: 'http://lt:5000' }).engines.translation).toBe('libretranslate');
    expect(loadConfig({ OPENAI_API_KEY: 'k', TRANSLATION_ENGINE: 'deepl' }).engines.translation).toBe('deepl');
  });

  it('keeps console sessions 12 hours unless CONSOLE_SESSION_TTL_SECONDS says otherwise, and refuses nonsense', () => {
    expect(loadConfig({}).console).toEqual({ sessionTtlMs: 12 * 3600_000, signInThrottle: { freeFailures: 3, maxDelayMs: 900_000, windowMs: 3600_000 } });
    expect(loadConfig({ CONSOLE_SESSION_TTL_SECONDS: '3600', SIGN_IN_FREE_FAILURES: '5', SIGN_IN_MAX_DELAY_SECONDS: '60' }).console).toEqual({
      sessionTtlMs: 3600_000,
      signInThrottle: { freeFailures: 5, maxDelayMs: 60_000, windowMs: 3600_000 },
    });
    expect(() => loadConfig({ CONSOLE_SESSION_TTL_SECONDS: '10' })).toThrow(/CONSOLE_SESSION_TTL_SECONDS must be a whole number from 60/);
    expect(() => loadConfig({ SIGN_IN_FREE_FAILURES: '0' })).toThrow(/SIGN_IN_FREE_FAILURES must be a whole number from 1/);
    expect(() => loadConfig({ SIGN_IN_MAX_DELAY_SECONDS: '0' })).toThrow(/SIGN_IN_MAX_DELAY_SECONDS must be a whole number from 1/);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS/,
    );
  });

  it('reads the database timeouts and refuses nonsense', () => {
    const config = loadConfig({ DB_STATEMENT_TIMEOUT_MS: '500', DB_CONNECT_TIMEOUT_MS: '300', DB_ACQUIRE_TIMEOUT_MS: '700' });
    expect(config.databaseTimeouts).toEqual({ statementMs: 500, connectMs: 300, acquireMs: 700 });
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DB_STATEMENT_TIMEOUT_MS must be a whole number from 100/);
  });

  it('reports every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: '70000',
        DATABASE_URL: 'mysql://x',
        TRANSLATION_ENGINE: 'babelfish',
        ADMIN_TOKEN: 'short',
        OPENAI_REALTIME_URL: 'http://x',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/PORT.*70000/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL/);
    expect(problems.join('\n')).toMatch(/TRANSLATION_ENGINE must be one of openai, deepl, libretranslate/);
    expect(problems.join('\n')).toMatch(/ADMIN_TOKEN/);
    expect(problems.join('\n')).toMatch(/OPENAI_REALTIME_URL must be a ws: or wss: URL/);
  });

  it('never prints the password of a URL it refuses', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2-secret@db:3306/app' })).toThrow('got "mysql://app:[redacted]@db:3306/app"');
  });

  it('trusts X-Forwarded-For only for the number of proxies TRUST_PROXY names', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxyHops).toBe(1);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY must be a whole number from 0 to 10/);
    expect(loadConfig({ FAILED_ATTEMPTS_PER_MINUTE: '5' }).failedAttempts.perWindow).toBe(5);
  });

  describe('ADMIN_TOKEN strength', () => {
    const problemsOf = (token: string) => {
      try {
        loadConfig({ ADMIN_TOKEN: token });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };

    it.each([
      ['sixteen a', 'a'.repeat(16)],
      ['a long run of one character', 'a'.repeat(200)],
      ['a sequence', 'abcdefghijklmnopqrstuvwxyz0123456789'],
      ['a repeated word', 'passwordpasswordpasswordpassword'],
      ['a repeated pair', 'ab'.repeat(40)],
      ['digits counting up', '1234567890'.repeat(4)],
      ['31 characters, the old test token', 'adm_test_token_0123456789abcdef'],
      ['32 random decimal digits (about 106 bits)', '73912046588173920461738290156482'],
    ])('refuses %s with a message saying what is needed', (_what, token) => {
      const problems = problemsOf(token);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^ADMIN_TOKEN is too weak \(\d+ characters, about \d+ bits estimated\): it needs at least 32 characters and about 128 bits/);
      expect(problems[0]).toContain('openssl rand -base64 32');
      // The message describes the token; it never repeats it.
      expect(problems[0]).not.toContain(token);
    });

    it('accepts generated tokens: the server\'s own, openssl rand -hex 16 and -base64 32, and the tests\'', () => {
      for (let i = 0; i < 200; i++) {
        expect(problemsOf(newSecret('adm_'))).toEqual([]);
        expect(problemsOf(randomBytes(16).toString('hex'))).toEqual([]);
        expect(problemsOf(randomBytes(32).toString('base64'))).toEqual([]);
      }
      expect(problemsOf(TEST_ADMIN_TOKEN)).toEqual([]);
      expect(loadConfig({ ADMIN_TOKEN: TEST_ADMIN_TOKEN }).adminToken).toBe(TEST_ADMIN_TOKEN);
    });
  });
});
