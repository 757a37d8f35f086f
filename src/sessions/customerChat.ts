import type { Knex } from 'knex';
import { getOrganization } from '../organizations/organizations.js';
import { markCustomerSeen, type SessionRow } from './sessions.js';

/** The session as the customer's page shows it; opening it counts as the customer being seen. */
export async function joinChat(db: Knex, session: SessionRow) {
  await markCustomerSeen(db, session.id);
  const org = await getOrganization(db, session.org_id);
  return {
    id: session.id,
    company: org.name,
    status: session.status,
    agent_name: session.agent_name,
    agent_language: session.agent_language,
    customer_name: session.customer_name,
    customer_language: session.customer_language,
    closed_at: session.closed_at ? session.closed_at.toISOString() : null,
  };
}
