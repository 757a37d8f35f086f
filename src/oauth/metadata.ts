// What this authorization server tells clients about itself (RFC 8414), served at
// /.well-known/oauth-authorization-server. Its issuer identifier is PUBLIC_BASE_URL, the address
// clients reach the server at; the authorization responses name the same value as `iss` (RFC 9207).
import { ALL_SCOPES } from '../auth/principal.js';
import type { Config } from '../config.js';
import type { components } from '../generated/api.js';

export const issuerOf = (config: Pick<Config, 'publicBaseUrl'>): string => config.publicBaseUrl;

/** Client authentication at both endpoints (./clientAuthentication.ts); `none` is a public app's. */
const CLIENT_AUTHENTICATION = ['client_secret_basic', 'client_secret_post', 'none'];

export function serverMetadata(config: Pick<Config, 'publicBaseUrl'>): components['schemas']['OAuthServerMetadata'] {
  const issuer = issuerOf(config);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    response_types_supported: ['code'],
    // The answer is on the redirect URI's query only (no fragment, no form_post).
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: CLIENT_AUTHENTICATION,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTHENTICATION,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...ALL_SCOPES],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  };
}
