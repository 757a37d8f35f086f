// How values travel between JS and the database, one table for both drivers: pg (PostgreSQL) on the main
// thread and in the worker that sends the hottest reads (src/db/pgStatementsWorker.ts), and PGlite in its
// worker thread (src/db/pgliteWorker.ts), so a row reads the same whichever backend and thread served it.
import type { Knex } from 'knex';
import pg from 'pg';

type Parser = (value: string) => unknown;

// One table for both drivers, so a row reads the same whichever backend served it:
// by default pg reads int8 as a string and PGlite as a number or BigInt, both read
// numeric as a string, and they turn a date into different Dates.
const OID = {
  bool: 16,
  int8: 20,
  json: 114,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

// Array type OID -> element type OID, for the types above.
const ARRAY_ELEMENT: Record<number, number> = {
  1000: OID.bool,
  1016: OID.int8,
  199: OID.json,
  1182: OID.date,
  1115: OID.timestamp,
  1185: OID.timestamptz,
  1231: OID.numeric,
  3807: OID.jsonb,
};

export const parsers: Record<number, Parser> = {
  [OID.bool]: (value) => value === 't',
  [OID.int8]: parseInt8,
  [OID.json]: (value) => JSON.parse(value),
  // A calendar date is not an instant: as a Date it would shift with the time zone.
  [OID.date]: (value) => value,
  // pg's own parsers: they know PostgreSQL's output format, infinity and BC years.
  [OID.timestamp]: pg.types.getTypeParser(OID.timestamp, 'text'),
  [OID.timestamptz]: pg.types.getTypeParser(OID.timestamptz, 'text'),
  [OID.numeric]: (value) => Number(value),
  [OID.jsonb]: (value) => JSON.parse(value),
};

function parseInt8(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    throw new Error(
      `int8 value ${value} is beyond Number.MAX_SAFE_INTEGER and cannot be read as a JS number exactly; select it as ::text instead.`,
    );
  }
  return number;
}

/** pg-types' parser of PostgreSQL's array text (not in @types/pg). */
const { arrayParser } = pg.types as unknown as { arrayParser: { create(text: string, parse: Parser): { parse(): unknown[] } } };

// PGlite applies element parsers inside arrays by itself; pg needs an array parser.
function parserForPg(oid: number, table: Record<number, Parser>): Parser | undefined {
  const element = ARRAY_ELEMENT[oid];
  const parseElement = element === undefined ? undefined : table[element];
  if (!parseElement) return table[oid];
  return (value) => arrayParser.create(value, parseElement).parse();
}

/**
 * The parsers of a worker thread. A `timestamp` (without time zone) is a wall clock read in the time zone
 * of the thread that asks, which a worker does not follow (its own copy of TZ): it stays text there and
 * the main thread parses it (finishRows).
 */
export const workerParsers: Record<number, Parser> = { ...parsers, [OID.timestamp]: (value) => value };

/** Per-client parsers for pg, so other pg users in the process keep the global defaults. */
const pgTypesWith = (table: Record<number, Parser>): pg.CustomTypesConfig & Knex.PgCustomTypesConfig => ({
  getTypeParser(oid: number, format?: string) {
    if (format === undefined || format === 'text') {
      const parser = parserForPg(oid, table);
      if (parser) return parser;
    }
    return pg.types.getTypeParser(oid, format as 'text');
  },
});

/** pg's parsers on the main thread. */
export const pgTypes = pgTypesWith(parsers);
/** pg's parsers in a worker thread (src/db/pgStatementsWorker.ts). */
export const pgWorkerTypes = pgTypesWith(workerParsers);

const LOCAL_TIMESTAMP_ARRAY = 1115;
const BYTEA = 17;
const BYTEA_ARRAY = 1001;

const readLocalTimestamp = (value: unknown): unknown =>
  typeof value === 'string' ? parsers[OID.timestamp](value) : Array.isArray(value) ? value.map(readLocalTimestamp) : value;
const asBuffer = (value: unknown): unknown =>
  value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Array.isArray(value) ? value.map(asBuffer) : value;

/**
 * What the main thread finishes of a worker's answer, by column type: a `timestamp` the worker left as
 * text is read in this thread's time zone; bytea, which crosses the thread boundary as a Uint8Array, is
 * a Buffer again.
 */
const FINISH: Record<number, (value: unknown) => unknown> = {
  [OID.timestamp]: readLocalTimestamp,
  [LOCAL_TIMESTAMP_ARRAY]: readLocalTimestamp,
  [BYTEA]: asBuffer,
  [BYTEA_ARRAY]: asBuffer,
};

/** Whether a worker's result has columns the main thread must finish (finishRows). */
export const needsFinishing = (fields: ReadonlyArray<{ dataTypeID: number }>): boolean => fields.some(({ dataTypeID }) => dataTypeID in FINISH);

/** Finishes, in place, what a worker left for the main thread (rows as objects, or as arrays). */
export function finishRows(fields: ReadonlyArray<{ name: string; dataTypeID: number }>, rows: unknown[]): void {
  fields.forEach((field, index) => {
    const finish = FINISH[field.dataTypeID];
    if (!finish) return;
    for (const row of rows as Array<Record<string | number, unknown>>) {
      const key = Array.isArray(row) ? index : field.name;
      row[key] = finish(row[key]);
    }
  });
}

/**
 * A statement parameter as pg would send it: a Date as the local wall clock with its offset (so a
 * `timestamp` or `date` column stores the local wall clock, and a `timestamptz` the same instant).
 * Done on the main thread, whose time zone is the one that counts.
 */
export function serializeParam(value: unknown): unknown {
  if (value instanceof Date) return localTimestamp(value);
  return Array.isArray(value) ? value.map(serializeParam) : value;
}

function localTimestamp(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const day = `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  return `${day}T${time}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}
