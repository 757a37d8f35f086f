export const ALL_SCOPES = [
  'calls:read',
  'calls:write',
  'sessions:read',
  'sessions:write',
  'translate',
  'events:read',
  'account:read',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];
export type Mode = 'live' | 'test';

/** Who is calling a /v1 operation. Every query a principal makes is kept to its organization and mode. */
export interface ApiPrincipal {
  kind: 'apiKey';
  keyId: string;
  orgId: string;
  mode: Mode;
  scopes: Scope[];
  /** The bucket the rate limit counts in: one per key (and later one per connected app). */
  rateLimitKey: string;
}

/**
 * The credential a principal acts under: revoking it ends the streams opened with it, and
 * per-credential limits count by it. An API key's id (an app connection's, once OAuth exists).
 */
export const credentialIdOf = (principal: ApiPrincipal): string => principal.keyId;

/** Who pays for billable work: an organization in one mode (an API key, or a customer of a session). */
export type Payer = Pick<ApiPrincipal, 'orgId' | 'mode'>;

export const isLive = (payer: Pick<Payer, 'mode'>) => payer.mode === 'live';
