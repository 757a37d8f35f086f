// The roles of organization members (DESIGN §14): owner (everything, members included), admin (keys,
// webhooks, apps, settings, data), viewer (reads only).
export const MEMBER_ROLES = ['owner', 'admin', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
