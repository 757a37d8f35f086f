// First start: without ADMIN_TOKEN, generate one and, on an empty database, a demo organization with a
// test key, keep them in DATA_DIR and print them, so a newcomer can call the API at once.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import { newSecret } from '../lib/ids.js';
import { createApiKey } from '../auth/apiKeys.js';
import { createOrganization } from '../organizations/organizations.js';

interface BootstrapFile {
  admin_token: string;
  demo?: { org_id: string; org_name: string; test_key: string };
}

export interface Bootstrap {
  adminToken: string;
  /** What to print at start-up, or nothing when ADMIN_TOKEN came from the environment. */
  banner: string | undefined;
}

const DEMO_ORG_NAME = 'Demo Organization';
const DEMO_BALANCE = 10;

async function readBootstrapFile(file: string): Promise<BootstrapFile | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as BootstrapFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

async function databaseIsEmpty(db: Knex): Promise<boolean> {
  const row = await db('organizations').count<{ count: number }[]>({ count: '*' }).first();
  return Number(row?.count ?? 0) === 0;
}

export async function bootstrap(db: Knex, config: Config): Promise<Bootstrap> {
  if (config.adminToken) return { adminToken: config.adminToken, banner: undefined };

  const file = path.join(config.dataDir, 'bootstrap.json');
  const stored = (await readBootstrapFile(file)) ?? { admin_token: newSecret('adm_') };
  if (!stored.demo && (await databaseIsEmpty(db))) {
    const org = await createOrganization(db, { name: DEMO_ORG_NAME, balance: DEMO_BALANCE });
    const key = await createApiKey(db, org.id, 'test');
    stored.demo = { org_id: org.id, org_name: org.name, test_key: key.key };
  }
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(file, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
  return { adminToken: stored.admin_token, banner: bannerFor(stored, config, file) };
}

function bannerFor(stored: BootstrapFile, config: Config, file: string): string {
  const lines = [``, `Admin token:        ${stored.admin_token}`];
  if (stored.demo) {
    lines.push(
      `Demo organization:  ${stored.demo.org_name} (${stored.demo.org_id})`,
      `Demo test key:      ${stored.demo.test_key}`,
      ``,
      `Try it:  curl -H "Authorization: Bearer ${stored.demo.test_key}" ${config.publicBaseUrl}/v1/account`,
    );
  }
  lines.push(`API reference:      ${config.publicBaseUrl}/docs`, `(kept in ${file}; set ADMIN_TOKEN to choose your own)`, ``);
  return lines.join('\n');
}
