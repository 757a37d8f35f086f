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

export const isLive = (principal: Pick<ApiPrincipal, 'mode'>) => principal.mode === 'live';
