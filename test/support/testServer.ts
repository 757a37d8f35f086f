// An in-process server on a fresh migrated database (in-memory PGlite, or PostgreSQL when TEST_DATABASE_URL is
// set), validating every response against the contract, with helpers to make organizations and keys.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import createClient from 'openapi-fetch';
import type { DestinationStream } from 'pino';
import type { TransportFactory } from '../../src/calls/media/transport.js';
import { loadConfig } from '../../src/config.js';
import { loggerFor } from '../../src/observability/logger.js';
import type { paths } from '../../src/generated/api.js';
import { startServer, type RunningServer } from '../../src/app/server.js';
import { argon2idPasswords } from '../../src/members/passwords.js';
import { createTestDatabase, lentStatementsThreads } from './databases.js';

// Random-looking on purpose: the server refuses a weak ADMIN_TOKEN at start-up.
export const TEST_ADMIN_TOKEN = 'adm_test_loCgBylK8cKnlstx9M8yFf4fA3OuDrsRuwaMJ2Ka';
/** Instances that share PostgreSQL share one SECRETS_KEY (it seals telephony auth tokens); tests use this one. */
export const TEST_SECRETS_KEY = 'dGVzdC1zZWNyZXRzLWtleS0zMi1ieXRlcy1sb25nISE=';

export interface TestServer {
  server: RunningServer;
  url: string;
  admin: ReturnType<typeof createClient<paths>>;
  /** A typed client authenticated with `key` (or anonymous). */
  client(key?: string): ReturnType<typeof createClient<paths>>;
  createOrg(body?: Partial<paths['/admin/orgs']['post']['requestBody']['content']['application/json']>): Promise<string>;
  createKey(orgId: string, mode: 'live' | 'test', scopes?: string[]): Promise<{ id: string; key: string }>;
  /** Sets the organization's telephony connector (PUT /admin/orgs/{org_id}/telephony). */
  setTelephony(orgId: string, connector: { account_sid: string; auth_token: string; from_number: string }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Members' passwords at argon2id's cheapest cost: a sign-in checks five hashes (src/members/members.ts), and a
 * database stage signs in and adds members hundreds of times (about 700 hashes, 18 ms of CPU each at OWASP's
 * cost). One for the process: its decoy is hashed once. test/unit/passwords.test.ts checks OWASP's cost.
 */
const CHEAP_PASSWORDS = argon2idPasswords({ memoryCost: 8, timeCost: 1, parallelism: 1 });

export interface TestServerOptions {
  /** Default: TEST_LOG_LEVEL, else silent. */
  logLevel?: string;
  /** Where log lines go (default stdout); the server's own logger writes them, secrets scrubbed. */
  logDestination?: DestinationStream;
  /** The address the server is given for its fresh PostgreSQL database (e.g. through a proxy). */
  databaseUrl?: (url: string) => string;
  /** The media transports to start (default: the server's list); a test adds one of its own. */
  transports?: readonly TransportFactory[];
}

export async function startTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const database = await createTestDatabase({ migrated: true });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lia-test-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    VALIDATE_RESPONSES: 'true',
    // Test servers run side by side: each takes a free AudioSocket port.
    AUDIOSOCKET_PORT: '0',
    // A loaded machine may keep a test server from reading Redis's answer for seconds: its commands
    // wait as long as the setting allows, so a slow run is slower, not red (a test of the timeout sets less).
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    ...(database.databaseUrl
      ? { DATABASE_URL: options.databaseUrl?.(database.databaseUrl) ?? database.databaseUrl, SECRETS_KEY: TEST_SECRETS_KEY }
      : {}),
    ...env,
  });
  const server = await startServer(config, {
    logger: loggerFor({ ...config, logLevel: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'silent' }, options.logDestination),
    memoryDatabase: database.memory,
    statementsThreads: lentStatementsThreads,
    transports: options.transports,
    passwords: CHEAP_PASSWORDS,
  });
  const client = (key?: string) =>
    createClient<paths>({ baseUrl: server.url, headers: key ? { Authorization: `Bearer ${key}` } : {} });
  const admin = client(TEST_ADMIN_TOKEN);

  return {
    server,
    url: server.url,
    admin,
    client,
    async createOrg(body = {}) {
      const { data, response } = await admin.POST('/admin/orgs', { body: { name: 'Test Org', ...body } });
      if (response.status !== 201 || !data) throw new Error(`createOrg: ${response.status}`);
      return data.org_id;
    },
    async createKey(orgId, mode, scopes) {
      const { data, response } = await admin.POST('/admin/orgs/{org_id}/keys', {
        params: { path: { org_id: orgId } },
        body: { mode, ...(scopes ? { scopes: scopes as never } : {}) },
      });
      if (response.status !== 201 || !data) throw new Error(`createKey: ${response.status}`);
      return { id: data.id, key: data.key };
    },
    async setTelephony(orgId, connector) {
      const { response } = await admin.PUT('/admin/orgs/{org_id}/telephony', { params: { path: { org_id: orgId } }, body: connector });
      if (response.status !== 200) throw new Error(`setTelephony: ${response.status}`);
    },
    async stop() {
      await server.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Another instance of the deployment `first` belongs to: its database, a process state of its own. */
export function startAnotherInstance(first: TestServer, env: Record<string, string> = {}, options: Omit<TestServerOptions, 'databaseUrl'> = {}): Promise<TestServer> {
  return startTestServer(env, { ...options, databaseUrl: () => first.server.app.config.databaseUrl! });
}
