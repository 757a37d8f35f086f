// Errors of the database worker threads (PGlite's, and the one that sends PostgreSQL's hottest reads) as
// they cross to the main thread: structured clone keeps only an Error's message, and src/db/errors.ts reads
// PostgreSQL's `code`, Node's socket codes and pg's messages.

/** An error as plain data: its message, name, stack and every own field (PostgreSQL's `code`, `constraint`, ...). */
export type SerializedError = { message: string; name: string; stack?: string } & Record<string, unknown>;

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error), name: 'Error' };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    // The failed statement's parameters stay in the worker: they may be secrets, and need not be cloneable.
    if (key === 'params' || value === undefined || typeof value === 'function') continue;
    fields[key] = typeof value === 'object' && value !== null ? String(value) : value;
  }
  return { ...fields, message: error.message, name: error.name, stack: error.stack };
}

/** The error again, an Error on this side, carrying the same fields, so src/db/errors.ts reads it as before. */
export function deserializeError(serialized: SerializedError): Error {
  const { message, name, stack, ...fields } = serialized;
  const error = Object.assign(new Error(message), fields);
  error.name = name;
  if (stack) error.stack = `${error.stack}\n    in a database worker thread:\n${stack}`;
  return error;
}
