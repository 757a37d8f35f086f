import type { Knex } from 'knex';
import { newId } from '../lib/ids.js';
import { creditBalance, fromMicros, fromNullableMicros, toMicros } from '../money/index.js';
import { errors } from '../errors.js';
import { getOrganization, type OrganizationRow } from '../db/organizations.js';

export { findOrganization, getOrganization, type OrganizationRow } from '../db/organizations.js';

export interface Organization {
  org_id: string;
  org_name: string;
  currency: string;
  balance: number | null;
  text_rate_per_million_characters: number;
  voice_rate_per_minute: number;
}

/** What the operator sees of an organization (the admin API): its terms and its settings. */
export interface AdminOrganization extends Organization {
  transcripts: boolean;
}

/** An organization's settings the operator may change. */
export interface OrganizationSettings {
  transcripts?: boolean;
}

export interface NewOrganization extends OrganizationSettings {
  name: string;
  currency?: string;
  balance?: number | null;
  text_rate_per_million_characters?: number;
  voice_rate_per_minute?: number;
}

export const ORGANIZATION_DEFAULTS = {
  currency: 'EUR',
  balance: 0,
  text_rate_per_million_characters: 20,
  voice_rate_per_minute: 0.1,
} as const;

export function presentOrganization(row: OrganizationRow): Organization {
  return {
    org_id: row.id,
    org_name: row.name,
    currency: row.currency,
    balance: fromNullableMicros(row.balance_micros),
    text_rate_per_million_characters: fromMicros(row.text_rate_micros),
    voice_rate_per_minute: fromMicros(row.voice_rate_micros),
  };
}

export const presentAdminOrganization = (row: OrganizationRow): AdminOrganization => ({ ...presentOrganization(row), transcripts: row.transcripts });

/** Creates an organization; an opening prepaid balance is booked as a credit in the ledger. */
export async function createOrganization(db: Knex, input: NewOrganization): Promise<OrganizationRow> {
  const balance = input.balance === undefined ? ORGANIZATION_DEFAULTS.balance : input.balance;
  const id = newId('org');
  return db.transaction(async (trx) => {
    await trx('organizations').insert({
      id,
      name: input.name,
      currency: (input.currency ?? ORGANIZATION_DEFAULTS.currency).toUpperCase(),
      balance_micros: balance === null ? null : 0,
      text_rate_micros: toMicros(
        input.text_rate_per_million_characters ?? ORGANIZATION_DEFAULTS.text_rate_per_million_characters,
      ),
      voice_rate_micros: toMicros(input.voice_rate_per_minute ?? ORGANIZATION_DEFAULTS.voice_rate_per_minute),
      transcripts: input.transcripts ?? true,
    });
    if (balance !== null && toMicros(balance) !== 0) return creditBalance(trx, id, toMicros(balance), 'opening balance');
    return (await trx<OrganizationRow>('organizations').where({ id }).first())!;
  });
}

/** Adds (or with a negative amount, takes) credit; invoiced organizations have no balance to credit. */
export async function creditOrganization(db: Knex, orgId: string, amount: number): Promise<OrganizationRow> {
  return db.transaction((trx) => creditBalance(trx, orgId, toMicros(amount), 'admin credit'));
}

/** Changes the settings given; a call keeps the transcript setting in force when it was created (../calls/calls.ts). */
export async function updateOrganizationSettings(db: Knex, orgId: string, settings: OrganizationSettings): Promise<OrganizationRow> {
  const [row] = await db<OrganizationRow>('organizations').where({ id: orgId }).update(settings).returning('*');
  if (!row) throw errors.notFound('organization');
  return row;
}

/** Organizations newest first, `limit` of them, older than `before` (an organization id) when given. */
export async function listOrganizations(db: Knex, page: { limit: number; before?: string }): Promise<OrganizationRow[]> {
  const query = db<OrganizationRow>('organizations').orderBy([
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ]);
  if (page.before !== undefined) {
    const last = await getOrganization(db, page.before);
    query.where((older) =>
      older.where('created_at', '<', last.created_at).orWhere((same) => same.where('created_at', last.created_at).andWhere('id', '<', last.id)),
    );
  }
  return query.limit(page.limit);
}
