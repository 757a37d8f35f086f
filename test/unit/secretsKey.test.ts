import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openText, sealText } from '../../src/secrets/sealing.js';
import { resolveSecretsKey, SECRETS_KEY_FILE } from '../../src/secrets/key.js';
import { TEST_SECRETS_KEY } from '../support/testServer.js';

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe('the secrets key', () => {
  it('is optional even with PostgreSQL, and read from base64 or hex', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://db/app' })).toEqual([]);
    const key = loadConfig({ DATABASE_URL: 'postgres://db/app', SECRETS_KEY: TEST_SECRETS_KEY }).secretsKey!;
    expect(key.length).toBe(32);
    expect(loadConfig({ SECRETS_KEY: key.toString('hex') }).secretsKey).toEqual(key);
    expect(loadConfig({}).secretsKey).toBeUndefined();
  });

  it('refuses a key of the wrong size without printing it', () => {
    const problems = problemsOf({ SECRETS_KEY: 'c2hvcnQtc2VjcmV0LXZhbHVl' }).join('\n');
    expect(problems).toMatch(/SECRETS_KEY must be 32 bytes/);
    expect(problems).not.toContain('c2hvcnQtc2VjcmV0LXZhbHVl');
  });

  it('is generated once in DATA_DIR (mode 0600) when unset, and the same key is read back', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lia-key-'));
    try {
      const first = await resolveSecretsKey({ secretsKey: undefined, dataDir });
      const second = await resolveSecretsKey({ secretsKey: undefined, dataDir });
      expect(first.length).toBe(32);
      expect(second).toEqual(first);
      const file = path.join(dataDir, SECRETS_KEY_FILE);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readFile(file, 'utf8')).trim()).toBe(first.toString('base64'));
      const configured = Buffer.alloc(32, 7);
      expect(await resolveSecretsKey({ secretsKey: configured, dataDir })).toBe(configured);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('seals so that only the same key opens, and a changed byte is refused', () => {
    const key = Buffer.alloc(32, 1);
    const sealed = sealText('auth-token-123', key);
    expect(sealed).not.toContain('auth-token-123');
    expect(openText(sealed, key)).toBe('auth-token-123');
    expect(() => openText(sealed, Buffer.alloc(32, 2))).toThrow();
    const bytes = Buffer.from(sealed, 'base64');
    bytes[bytes.length - 1] ^= 1;
    expect(() => openText(bytes.toString('base64'), key)).toThrow();
  });
});
