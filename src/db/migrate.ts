import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

/** The project's `migrations/` folder, wherever the process was started from. */
export const MIGRATIONS_DIRECTORY = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies every pending migration in `directory`; returns the names applied, in order. */
export async function migrateToLatest(knex: Knex, directory = MIGRATIONS_DIRECTORY): Promise<string[]> {
  const [, applied]: [number, string[]] = await knex.migrate.latest({
    migrationSource: new DirectoryMigrationSource(directory, directory === MIGRATIONS_DIRECTORY && COMPILED),
  });
  return applied;
}

const MIGRATION_FILE = /\.(ts|js)$/;

/** Running from dist/ (scripts/build.mjs), where the project's migrations are compiled copies. */
const COMPILED = import.meta.url.endsWith('.js');

/**
 * Loads migrations through `import()` rather than knex's own loader, which cannot load
 * TypeScript: this way tsx (server) and vitest (tests) compile them like any module.
 */
class DirectoryMigrationSource implements Knex.MigrationSource<string> {
  constructor(
    private readonly directory: string,
    private readonly compiledCopies: boolean,
  ) {}

  async getMigrations(): Promise<string[]> {
    const files = await readdir(this.directory);
    return files.filter((file) => MIGRATION_FILE.test(file) && !file.endsWith('.d.ts')).sort();
  }

  /**
   * The file's name; for a compiled copy (dist/migrations/*.js), its source's: knex records applied
   * migrations by name, and a database migrated from the sources stays migrated when run from dist/.
   */
  getMigrationName(file: string): string {
    return this.compiledCopies ? file.replace(/\.js$/, '.ts') : file;
  }

  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(join(this.directory, file)).href)) as Knex.Migration;
  }
}
