// The embedded database on disk (PGlite in DATA_DIR): one process at a time, whatever backend the
// database tests run on.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const databaseModuleUrl = new URL('../../src/db/database.ts', import.meta.url).href;

describe('on-disk PGlite data directory', () => {
  /** Opens the database in a separate Node process and reports what happened. */
  async function openInChildProcess(dataDir: string): Promise<{ code: number | null; output: string }> {
    const script = `
      import { openDatabase } from ${JSON.stringify(databaseModuleUrl)};
      try {
        const db = await openDatabase({ dataDir: ${JSON.stringify(dataDir)} });
        await db.knex.raw('select 1');
        await db.close();
        console.log('OPENED');
      } catch (error) {
        console.log(error.name + ': ' + error.message);
        process.exitCode = 3;
      }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, output };
  }

  it('is refused to a second process while open, and available again after close', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pglite-data-'));
    try {
      const first = await openDatabase({ dataDir });
      await first.knex.raw('select 1');

      const refused = await openInChildProcess(dataDir);
      expect(refused.code).toBe(3);
      expect(refused.output).toContain('DataDirLockedError');
      expect(refused.output).toContain(`Another server process (pid ${process.pid}) is using DATA_DIR ${dataDir}`);

      await first.close();
      expect(await openInChildProcess(dataDir)).toEqual({ code: 0, output: 'OPENED\n' });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
