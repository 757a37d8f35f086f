import type { Knex } from 'knex';
import type { ApiPrincipal } from '../auth/principal.js';
import { getOrganization, presentOrganization } from './organizations.js';

export async function getAccount(db: Knex, principal: ApiPrincipal) {
  const org = presentOrganization(await getOrganization(db, principal.orgId));
  return { ...org, mode: principal.mode, scopes: principal.scopes };
}
