// Secrets never reach a log. Redaction at the source (request URLs, query strings and headers; line
// ids logged as fingerprints) and, on the way out of the logger, one last scrub of every line for
// anything shaped like a secret.
import { hash } from 'node:crypto';

const REDACTED = '[redacted]';

/** Headers that carry credentials. */
export const SECRET_HEADERS = ['authorization', 'x-api-key', 'x-call-key', 'x-chat-key', 'cookie', 'set-cookie'];

/** Query parameters whose values are secrets (media tokens, unlocks, keys sent in URLs, OAuth). */
export const SECRET_QUERY_PARAMETERS = [
  'token',
  'unlock',
  'key',
  'api_key',
  'access_token',
  'refresh_token',
  'client_secret',
  'code',
  'password',
];

const secretParameter = new Set(SECRET_QUERY_PARAMETERS);

/** A short, stable stand-in for a secret that a log must still be able to tell apart (line ids). */
export const fingerprint = (secret: string) => hash('sha256', secret, 'hex').slice(0, 12);

/** `url` with the value of every secret query parameter replaced; everything else kept as sent. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const fragment = url.indexOf('#', start);
  const end = fragment < 0 ? url.length : fragment;
  const query = url
    .slice(start + 1, end)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return secretParameter.has(decodedName(name)) && pair.includes('=') ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, start + 1)}${query}${url.slice(end)}`;
}

const decodedName = (name: string) => {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
};

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Secret shapes this server issues: API keys, OAuth tokens, codes and client secrets, call keys, chat keys, admin tokens, console session tokens, webhook signing secrets.
const ISSUED_SECRET = /\b(spk_(?:live|test|at|rt|ac|cs)_|ck_|chk_|adm_|cst_|whsec_)[A-Za-z0-9_-]{8,}/g;
// `name=value` of a secret query parameter in a URL (or form body) inside a log line.
const SECRET_PARAMETER_IN_URL = new RegExp(`([?&;](?:${SECRET_QUERY_PARAMETERS.join('|')})=)[^&\\s"'#\\\\]+`, 'gi');
// `"name":"value"` of a credential header or a secret field of a logged object. `code` is left out:
// as a field it is an error code (ECONNRESET, 23505), worth keeping.
const SECRET_FIELDS = [...SECRET_HEADERS, ...SECRET_QUERY_PARAMETERS.filter((name) => name !== 'code'), 'secret'];
const SECRET_FIELD_IN_JSON = new RegExp(`("(?:${SECRET_FIELDS.map(escapeRegExp).join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi');
// Credentials written out as a header value: `Bearer <token>`, `Basic <credentials>`.
const AUTHORIZATION_VALUE = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;

/** Secrets too short to be told apart from ordinary text are not searched for literally. */
const MIN_LITERAL_SECRET_LENGTH = 8;

/**
 * Scrubs a serialized log line of every secret shape, and of the literal `secrets` (operator-chosen
 * tokens and engine keys, which have no recognisable shape). Replacements keep JSON valid.
 */
export function secretScrubber(secrets: Array<string | undefined> = []): (line: string) => string {
  const literals = secrets
    .filter((secret): secret is string => typeof secret === 'string' && secret.length >= MIN_LITERAL_SECRET_LENGTH)
    // As written, and as it appears inside a JSON string.
    .flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]);
  const literal = literals.length ? new RegExp([...new Set(literals)].map(escapeRegExp).join('|'), 'g') : undefined;
  return (line) => {
    let out = literal ? line.replace(literal, REDACTED) : line;
    out = out.replace(ISSUED_SECRET, `$1${REDACTED}`);
    out = out.replace(SECRET_PARAMETER_IN_URL, `$1${REDACTED}`);
    out = out.replace(SECRET_FIELD_IN_JSON, `$1"${REDACTED}"`);
    return out.replace(AUTHORIZATION_VALUE, `$1 ${REDACTED}`);
  };
}
