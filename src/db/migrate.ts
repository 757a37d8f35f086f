import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

/** The project's `migrations/` folder, wherever the process was started from. */
export const MIGRATIONS_DIRECTORY = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies every pending migration in `directory`; returns the names applied, in order. */
export async function migrateToLatest(knex: Knex, directory = MIGRATIONS_DIRECTORY): Promise<string[]> {
  const [, applied]: [number, string[]] = await knex.migrate.latest({
    migrationSource: new DirectoryMigrationSource(directory),
  });
  return applied;
}

const MIGRATION_FILE = /\.(ts|js)$/;

/**
 * Loads migrations through `import()` rather than knex's own loader, which cannot load
 * TypeScript: this way tsx (server) and vitest (tests) compile them like any module.
 */
class DirectoryMigrationSource implements Knex.MigrationSource<string> {
  constructor(private readonly directory: string) {}

  async getMigrations(): Promise<string[]> {
    const files = await readdir(this.directory);
    return files.filter((file) => MIGRATION_FILE.test(file) && !file.endsWith('.d.ts')).sort();
  }

  /**
   * The source file's name, also for its compiled copy (dist/migrations/*.js): knex records applied
   * migrations by name, and a database migrated from the sources stays migrated when run from dist/.
   */
  getMigrationName(file: string): string {
    return file.replace(/\.js$/, '.ts');
  }

  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(join(this.directory, file)).href)) as Knex.Migration;
  }
}
