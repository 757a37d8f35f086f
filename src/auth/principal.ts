export const ALL_SCOPES = [
  'calls:read',
  'calls:write',
  'sessions:read',
  'sessions:write',
  'translate',
  'events:read',
  'account:read',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];
export type Mode = 'live' | 'test';

interface PrincipalBase {
  orgId: string;
  mode: Mode;
  scopes: Scope[];
  /** The bucket the rate limit counts in: one per key, one per app connection. */
  rateLimitKey: string;
}

/** An organization's own API key. */
export interface KeyPrincipal extends PrincipalBase {
  kind: 'apiKey';
  keyId: string;
  /** A rolled key works until then (epoch ms); null: until revoked. */
  expiresAt: number | null;
}

/** An installed app, acting through its connection to the organization (always live mode). */
export interface AppPrincipal extends PrincipalBase {
  kind: 'app';
  connectionId: string;
  /** The app's client_id: events and ledger rows say which app acted. */
  appId: string;
  /** When the access token stops working (epoch ms). */
  expiresAt: number;
}

/** Who is calling a /v1 operation. Every query a principal makes is kept to its organization and mode. */
export type ApiPrincipal = KeyPrincipal | AppPrincipal;

/**
 * The credential a principal acts under: revoking it ends the streams opened with it, and
 * per-credential limits count by it. An API key's id, or an app connection's.
 */
export const credentialIdOf = (principal: ApiPrincipal): string => (principal.kind === 'apiKey' ? principal.keyId : principal.connectionId);

/** Who pays for billable work: an organization in one mode (an API key, or a customer of a session). */
export type Payer = Pick<ApiPrincipal, 'orgId' | 'mode'>;

export const isLive = (payer: Pick<Payer, 'mode'>) => payer.mode === 'live';
