import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

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
      databaseTimeouts: { statementMs: 10_000, connectMs: 5_000, acquireMs: 10_000 },
    });
    expect(config.engines.translation).toBeUndefined();
    expect(config.engines.openai.realtimeUrl).toBe('wss://api.openai.com/v1/realtime');
  });

  it('derives the public base URL from PORT and trims a trailing slash', () => {
    expect(loadConfig({ PORT: '9000' }).publicBaseUrl).toBe('http://localhost:9000');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
  });

  it('picks the first engine whose settings are present, unless one is named', () => {
    expect(loadConfig({ DEEPL_API_KEY: 'k', LIBRETRANSLATE_URL: 'http://lt:5000' }).engines.translation).toBe('deepl');
    expect(loadConfig({ LIBRETRANSLATE_URL: 'http://lt:5000' }).engines.translation).toBe('libretranslate');
    expect(loadConfig({ OPENAI_API_KEY: 'k', TRANSLATION_ENGINE: 'deepl' }).engines.translation).toBe('deepl');
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
});
