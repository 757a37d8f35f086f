// `npm run fuzz -- [--seed N] [--requests N] [--connections N | --no-connections] [--postgres[=URL]]
//                   [--no-validate-responses]`
// Starts its own server, fuzzes it, prints the report; exits 1 on any unexpected 5xx, unanswered
// request or crash. With TEST_DATABASE_URL set (or --postgres), the server runs on a fresh PostgreSQL
// database; otherwise on a fresh PGlite data directory.
import { formatReport, passed, runFuzz } from './fuzzer.js';

const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

function parseArgs(argv: string[]) {
  const options = {
    seed: Math.floor(Math.random() * 2 ** 31),
    requests: 2_000,
    connections: undefined as number | undefined,
    postgresUrl: process.env.TEST_DATABASE_URL || undefined,
    validateResponses: true,
  };
  const number = (name: string, raw: string | undefined) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} needs a whole number, got ${raw}`);
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--seed':
        options.seed = number(flag, value());
        break;
      case '--requests':
        options.requests = number(flag, value());
        break;
      case '--connections':
        options.connections = number(flag, value());
        break;
      case '--no-connections':
        options.connections = 0;
        break;
      case '--postgres':
        options.postgresUrl = inline ?? process.env.TEST_DATABASE_URL ?? DEFAULT_POSTGRES;
        break;
      case '--no-validate-responses':
        options.validateResponses = false;
        break;
      default:
        throw new Error(`unknown option ${argv[i]}`);
    }
  }
  return { ...options, connections: options.connections ?? Math.max(50, Math.round(options.requests / 10)) };
}

try {
  const options = parseArgs(process.argv.slice(2));
  console.log(`fuzz: seed ${options.seed} (replay with --seed ${options.seed})`);
  const report = await runFuzz({ ...options, progress: (line) => console.log(`  ${line}`) });
  console.log(formatReport(report));
  process.exit(passed(report) ? 0 : 1);
} catch (err) {
  console.error(`fuzz: ${(err as Error).message}`);
  process.exit(2);
}
