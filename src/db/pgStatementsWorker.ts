// The worker thread that sends PostgreSQL's hot statements outside transactions (written statements,
// ./statement.ts, and statements marked `prepared`, ./prepared.ts) on a pool of its own. A statement on the
// main thread cost a light request about a third of its CPU there: the socket write that wakes a
// PostgreSQL backend, and node-postgres reading and parsing the answer. Here they take the machine's other
// core, and the main thread only posts a message and takes the rows back. Started by ./pgStatementsThread.ts.
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { isStalePlan } from './errors.js';
import type { PgStatementsRequest, PgStatementsResponse, PgStatementsWorkerData } from './pgStatementsProtocol.js';
import { forgetPreparedStatement } from './prepared.js';
import { serializeError } from './threadErrors.js';
import { workerReplies } from './workerThread.js';
import { needsFinishing, pgWorkerTypes } from './types.js';

const port = parentPort!;
const { connection, poolSize } = workerData as PgStatementsWorkerData;
const pool = new pg.Pool({ ...connection, types: pgWorkerTypes, max: poolSize });
// An idle connection that breaks (PostgreSQL restarted) is dropped by the pool; the error must not end the thread.
pool.on('error', () => undefined);

async function run(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    try {
      return await client.query({ name, text, values });
    } catch (error) {
      // Another instance's migration changed a table under the prepared statement: prepared again.
      if (!isStalePlan(error)) throw error;
      await forgetPreparedStatement(client, name);
      return await client.query({ name, text, values });
    }
  } catch (error) {
    // PostgreSQL's own refusals leave the connection usable; anything else (a timeout, a broken socket) does not.
    if (!(error instanceof pg.DatabaseError)) broken = error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

async function answer(request: PgStatementsRequest): Promise<PgStatementsResponse> {
  try {
    if (request.type === 'close') {
      await pool.end();
      return { type: 'closed', id: request.id };
    }
    const { rows, rowCount, command, fields } = await run(request.name, request.text, request.values);
    const result = { rows, rowCount, command };
    if (!needsFinishing(fields)) return { type: 'result', id: request.id, result };
    return { type: 'result', id: request.id, result, unfinished: fields.map(({ name, dataTypeID }) => ({ name, dataTypeID })) };
  } catch (error) {
    return { type: 'error', id: request.id, error: serializeError(error) };
  }
}

const replies = workerReplies<PgStatementsResponse>(port);

port.on('message', (requests: PgStatementsRequest[]) => {
  for (const request of requests) {
    void answer(request).then((response) => {
      replies.send(response);
      if (response.type !== 'closed') return;
      replies.flush();
      port.close(); // nothing else holds the thread: it ends
    });
  }
});
