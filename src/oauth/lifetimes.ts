/** How long what OAuth issues lives (docs/oauth.md). */
export const CODE_LIFETIME_SECONDS = 60;
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3_600;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 90 * 24 * 3_600;

/** Secret scanners spot these prefixes. */
export const ACCESS_TOKEN_PREFIX = 'spk_at_';
export const REFRESH_TOKEN_PREFIX = 'spk_rt_';
export const CODE_PREFIX = 'spk_ac_';
