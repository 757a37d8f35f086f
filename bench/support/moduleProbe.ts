// One heavy part of the server loaded alone in a fresh process (run by bench/start.ts once per probe and
// repetition): prints {ms, rssBefore, rssAfter} as one JSON line, so the RSS delta and the time are that
// part's alone (the TypeScript loader and node itself are in rssBefore).
//   node --import tsx bench/support/moduleProbe.ts <probe> [data dir for the PGlite probes]
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { requiredOnFirstUse } from '../../src/lib/onFirstUse.js';
import { ROOT } from './serverProcess.js';

const CONTRACT = path.join(ROOT, 'openapi', 'openapi.yaml');

/** What each probe loads and does; the first request through the validator compiles its schemas. */
export const PROBES: Record<string, (dataDir: string) => Promise<unknown>> = {
  'PGlite instance, fresh data dir': async (dataDir) => {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(dataDir);
    await db.query('select 1');
  },
  'PGlite instance, existing data dir': async (dataDir) => {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(dataDir);
    await db.query('select 1');
  },
  'eld, medium dictionaries': async () => {
    const { eld } = await import('eld/medium');
    eld.detect('Hello world');
  },
  'language detection as the project loads it': async () => {
    const { detectLanguage } = await import('../../src/translation/language.js');
    await detectLanguage('Hello world');
  },
  'yaml parse of the contract': async () => {
    const YAML = (await import('yaml')).default;
    YAML.parse(await readFile(CONTRACT, 'utf8'));
  },
  'validator on the contract (built, one request)': async () => {
    const { default: express } = await import('express');
    const { contractValidator } = await import('../../src/http/validation.js');
    const app = express();
    app.use(contractValidator({ config: { validateResponses: false } } as never).forOperation({ method: 'get', path: '/v1/account' }));
    app.use((_req, res) => void res.end());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    await (await fetch(`http://127.0.0.1:${port}/v1/account`)).text();
    server.close();
  },
  'swagger-ui-dist': async () => {
    const swagger = await import('swagger-ui-dist');
    swagger.getAbsoluteFSPath();
  },
  express: async () => {
    const { default: express } = await import('express');
    express();
  },
  'openai SDK': async () => {
    await import('openai');
  },
  // As the server loads it (src/telephony/twilio.ts): required on first use. Not `import('twilio')`, which
  // would make the type check read the SDK's whole typing for one probe.
  'twilio SDK': async () => {
    requiredOnFirstUse('twilio')();
  },
  "the server's whole module graph (not started)": async () => {
    await import('../../src/app/server.js');
  },
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const [name, dataDir] = process.argv.slice(2);
  const probe = PROBES[name!];
  if (!probe) throw new Error(`unknown probe "${name}"; probes: ${Object.keys(PROBES).join(', ')}`);
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  await probe(dataDir!);
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ ms, rssBefore, rssAfter: process.memoryUsage.rss() })}\n`);
  process.exit(0);
}
