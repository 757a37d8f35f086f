// Database errors in the catalogue's terms, in one place. A database that is unreachable or too slow is
// a 503 with Retry-After; a value the database refuses, which the contract and the input checks should
// have caught already, is a 4xx rather than a 500. Everything else is left to the caller (a 500).
import { type ApiError, errors } from '../errors.js';

/** How long a client should wait before retrying while the database is unreachable or too slow. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

interface DriverError {
  code?: unknown;
  name?: unknown;
  message?: unknown;
}

// Socket-level failures of the connection to PostgreSQL (Node's codes).
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// pg's own failures, which carry no code: a connection that broke, timed out or never came.
const CONNECTION_MESSAGES =
  /Connection terminated|timeout expired|timeout exceeded when trying to connect|Query read timeout|not queryable|Timeout acquiring a connection|connect ECONNREFUSED/;

/**
 * PostgreSQL refuses to run a prepared statement whose result columns have changed since it was
 * prepared: `select *` of a table that another instance's migration has just added a column to.
 */
export const isStalePlan = (err: unknown): boolean =>
  (err as DriverError).code === '0A000' && /cached plan must not change result type/.test(String((err as DriverError).message));

/** invalid_sql_statement_name: no prepared statement of that name (any more: DISCARD ALL, DEALLOCATE). */
export const isUnknownStatement = (err: unknown): boolean => (err as DriverError).code === '26000';

/** Why the database cannot serve now, or undefined when the error is not about availability. */
function unavailability(err: DriverError, code: string): string | undefined {
  if (code === '57014') return 'a statement took longer than the statement timeout';
  if (code === '55P03') return 'a lock could not be taken in time';
  if (code === '40001' || code === '40P01') return 'a transaction collided with another';
  // A prepared statement that a migration (another instance's) made stale inside a transaction.
  if (isStalePlan(err)) return 'the database schema changed';
  // 08: connection exception; 53: insufficient resources; 57P0x: shutting down or starting up.
  if (code.startsWith('08') || code.startsWith('53') || /^57P0\d$/.test(code)) return 'the database is not accepting work';
  if (CONNECTION_CODES.has(code)) return `the connection to the database failed (${code})`;
  if (err.name === 'KnexTimeoutError') return 'no database connection became free in time';
  if (typeof err.message === 'string' && CONNECTION_MESSAGES.test(err.message)) return 'the connection to the database failed or timed out';
  return undefined;
}

/** The balance range of migration 20261123000100_balance_range, in currency units. */
export const MAX_BALANCE = 1_000_000_000;

// Check constraints whose violation a client can cause, and what to tell them.
const CONSTRAINTS: Record<string, () => ApiError> = {
  organizations_balance_range: () =>
    errors.invalid([{ loc: ['body', 'amount'], msg: `the balance must stay within ±${MAX_BALANCE}`, type: 'out_of_range' }]),
};

/** What a refused value means for the client (SQLSTATE classes 22, 23 and 54). */
function refusedValue(code: string, constraint: unknown): ApiError | undefined {
  const unstorable = (msg: string, type: string) => errors.invalid([{ loc: [], msg, type }]);
  if (code === '23514' && typeof constraint === 'string' && CONSTRAINTS[constraint]) return CONSTRAINTS[constraint]();
  switch (code) {
    case '22001':
      return unstorable('a text is longer than can be stored', 'too_long');
    case '22003':
      return unstorable('a number is outside the range that can be stored', 'out_of_range');
    case '22021':
    case '22P05':
      return unstorable('a text contains a character that cannot be stored (NUL or an unpaired surrogate)', 'unstorable_character');
    case '22007':
    case '22008':
      return unstorable('a date or time is invalid or out of range', 'invalid_value');
    case '23505':
      return errors.conflict('the request conflicts with an existing object');
    case '23503':
      return errors.conflict('the request refers to an object that does not exist or is still in use');
  }
  if (code.startsWith('22') || code === '23502' || code === '23514') return unstorable('a value cannot be stored as given', 'invalid_value');
  if (code.startsWith('54')) return unstorable('a value is too large or too complex to be stored', 'too_large');
  return undefined;
}

const codeOf = (err: unknown) =>
  typeof err === 'object' && err !== null && typeof (err as DriverError).code === 'string' ? ((err as DriverError).code as string) : '';

/** PostgreSQL's SQLSTATE of an error the database raised, or undefined for any other error. */
export function sqlStateOf(err: unknown): string | undefined {
  const code = codeOf(err);
  return /^[0-9A-Z]{5}$/.test(code) && !CONNECTION_CODES.has(code) ? code : undefined;
}

/** The client's answer for a database error, or undefined when it is not one this module knows. */
export function fromDatabaseError(err: unknown): ApiError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const reason = unavailability(err as DriverError, codeOf(err));
  if (reason) return errors.databaseUnavailable(reason, DATABASE_RETRY_AFTER_SECONDS);
  const sqlState = sqlStateOf(err);
  return sqlState ? refusedValue(sqlState, (err as { constraint?: unknown }).constraint) : undefined;
}
