// The worker thread that owns the embedded database. PGlite runs every statement synchronously inside
// WebAssembly; here it blocks only this thread, never the main thread's requests, media frames or
// AudioSocket pacing. Started by src/db/pgliteThread.ts, which speaks src/db/pgliteProtocol.ts with it.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { PgliteRequest, PgliteResponse, PgliteWorkerData } from './pgliteProtocol.js';
import { serializeError } from './threadErrors.js';
import { workerReplies } from './workerThread.js';
import { PgliteStatements } from './pgliteStatements.js';
import { workerParsers } from './types.js';

const port = parentPort!;
const replies = workerReplies<PgliteResponse>(port);
// Each answer goes at once, not at the end of the turn: PGlite answers the statements of a turn one
// after another within one task, so answers held for the end of the turn would all wait for the last
// (message posts on PGlite halved).
function send(message: PgliteResponse): void {
  replies.sendNow(message);
}

/**
 * PostgreSQL's buffer cache, in WebAssembly memory that never shrinks: 16 MB instead of PGlite's 128 MB
 * takes well over 100 MiB off the server's memory. One connection, a page cache in the operating system
 * beneath (on disk): a small cache costs little here.
 */
const SHARED_BUFFERS = '16MB';

async function open({ dataDir, loadDataDir, pgliteWasmModule }: PgliteWorkerData): Promise<PGlite> {
  const pglite = new PGlite({
    dataDir,
    pgliteWasmModule,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
    loadDataDir: loadDataDir && new Blob([loadDataDir]),
    parsers: workerParsers,
  });
  try {
    await pglite.waitReady; // surfaces a broken data directory here, not at the first query
    return pglite;
  } catch (error) {
    await pglite.close().catch(() => undefined);
    throw error;
  }
}

async function answer(pglite: PGlite, statements: PgliteStatements, request: PgliteRequest): Promise<PgliteResponse> {
  try {
    if (request.type === 'close') {
      await pglite.close(); // flushes: what a client was told is saved stays saved
      return { type: 'closed', id: request.id };
    }
    const { sql, params, options } = request;
    // Options of PGlite's own (a row mode, parsers of its own) are for its query(); knex passes none.
    const result = options && Object.keys(options).length ? await pglite.query(sql, params, options) : await statements.query(sql, params);
    const { rows, fields, affectedRows, command, rowCount } = result;
    return { type: 'result', id: request.id, result: { rows, fields, affectedRows, command, rowCount } };
  } catch (error) {
    return { type: 'error', id: request.id, error: serializeError(error) };
  }
}

open(workerData as PgliteWorkerData).then(
  (pglite) => {
    const statements = new PgliteStatements(pglite);
    port.on('message', (requests: PgliteRequest[]) => {
      for (const request of requests) {
        void answer(pglite, statements, request).then((response) => {
          send(response);
          if (response.type === 'closed') port.close(); // nothing else holds the thread: it ends
        });
      }
    });
    send({ type: 'ready' });
  },
  (error: unknown) => {
    send({ type: 'failed', error: serializeError(error) });
    port.close();
  },
);
