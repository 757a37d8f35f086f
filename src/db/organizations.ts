// An organization's row and how to read it: below every service that needs the organization (money
// among them), so that reading one never depends on the services built on it.
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { readShared } from './sharedReads.js';
import { statement } from './statement.js';

export interface OrganizationRow {
  id: string;
  name: string;
  currency: string;
  balance_micros: number | null;
  /** Reserved by requests in progress (src/money/reservations.ts); not yet charged. */
  held_micros: number;
  text_rate_micros: number;
  voice_rate_micros: number;
  /** Whether calls created now keep a transcript (the call's own `transcript` may still turn it off). */
  transcripts: boolean;
  created_at: Date;
}

const organizationById = statement<OrganizationRow>('SELECT * FROM organizations WHERE id = ?');

/** The organization's row; outside a transaction, read once for the callers asking at the same time (../db/sharedReads.ts). */
export function findOrganization(db: Knex, orgId: string): Promise<OrganizationRow | undefined> {
  return readShared(db, `organizations\0${orgId}`, async () => (await organizationById.rows(db, [orgId]))[0]);
}

export async function getOrganization(db: Knex, orgId: string): Promise<OrganizationRow> {
  const row = await findOrganization(db, orgId);
  if (!row) throw errors.notFound('organization');
  return row;
}

/**
 * An organization's terms: what work costs it and in which currency, and whether a prepaid balance
 * pays. They never change once the organization exists (the database refuses it: migration
 * 20261206000100), so they are kept in memory on every instance and pricing work or naming its
 * currency costs no query. The balance is not among them: it is always read from the database.
 */
export interface OrganizationTerms {
  id: string;
  currency: string;
  text_rate_micros: number;
  voice_rate_micros: number;
  prepaid: boolean;
}

export const termsOf = (row: OrganizationRow): OrganizationTerms => ({
  id: row.id,
  currency: row.currency,
  text_rate_micros: row.text_rate_micros,
  voice_rate_micros: row.voice_rate_micros,
  prepaid: row.balance_micros !== null,
});

/** Organization ids are random and never reused, so entries cannot be confused across databases. */
const knownTerms = new Map<string, OrganizationTerms>();
const KNOWN_TERMS_MAX = 10_000;

/** Remembers an organization's terms from a row read anyway (the oldest entry goes when full). */
export function rememberTerms(row: OrganizationRow): OrganizationTerms {
  const terms = termsOf(row);
  if (!knownTerms.has(row.id) && knownTerms.size >= KNOWN_TERMS_MAX) knownTerms.delete(knownTerms.keys().next().value!);
  knownTerms.set(row.id, terms);
  return terms;
}

export async function organizationTerms(db: Knex, orgId: string): Promise<OrganizationTerms> {
  return knownTerms.get(orgId) ?? rememberTerms(await getOrganization(db, orgId));
}
