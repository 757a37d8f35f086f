// What each scope lets a key or an app do, in the words of the contract (its OAuth2 security scheme):
// the consent page and the console say it the same way.
import type { Scope } from '../auth/principal.js';
import { contract } from '../http/contract.js';

export const SCOPE_WORDS: Readonly<Record<Scope, string>> = contract.components.securitySchemes.OAuth2.flows.authorizationCode.scopes;
