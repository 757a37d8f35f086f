// An organization's row and how to read it: below every service that needs the organization (money
// among them), so that reading one never depends on the services built on it.
import type { Knex } from 'knex';
import { errors } from '../errors.js';

export interface OrganizationRow {
  id: string;
  name: string;
  currency: string;
  balance_micros: number | null;
  /** Reserved by requests in progress (src/money/reservations.ts); not yet charged. */
  held_micros: number;
  text_rate_micros: number;
  voice_rate_micros: number;
  created_at: Date;
}

export async function findOrganization(db: Knex, orgId: string): Promise<OrganizationRow | undefined> {
  return db<OrganizationRow>('organizations').where({ id: orgId }).first();
}

export async function getOrganization(db: Knex, orgId: string): Promise<OrganizationRow> {
  const row = await findOrganization(db, orgId);
  if (!row) throw errors.notFound('organization');
  return row;
}
