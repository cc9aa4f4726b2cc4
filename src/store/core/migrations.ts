import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * One numbered migration file, as both drivers apply them.
 *
 * @example
 * ```ts
 * const m: Migration = { id: 1, name: "001_receipts_events", sql: "CREATE TABLE …" };
 * ```
 */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

const fileName = /^(\d+)_[A-Za-z0-9_-]+\.sql$/;

/**
 * Reads the numbered `.sql` files of a folder, in order. Numbers must start at 1 and follow each
 * other without gaps or repeats, so a missing or doubled file fails loudly instead of skipping
 * schema; `dialect` names the store in that error.
 *
 * @example
 * ```ts
 * const migrations = loadMigrations(new URL("./migrations/", import.meta.url), "PostgreSQL");
 * migrations.map((m) => m.name); // ["001_init", "002_queue_functions", …]
 * ```
 */
export function loadMigrations(folder: URL | string, dialect: string): Migration[] {
  const path = typeof folder === "string" ? folder : fileURLToPath(folder);
  const migrations = readdirSync(path)
    .flatMap((file) => {
      const match = fileName.exec(file);
      if (!match?.[1]) return [];
      return [
        {
          id: Number(match[1]),
          name: file.slice(0, -".sql".length),
          sql: readFileSync(join(path, file), "utf8"),
        },
      ];
    })
    .sort((a, b) => a.id - b.id);
  migrations.forEach((migration, index) => {
    if (migration.id !== index + 1) {
      throw new Error(
        `${dialect} migrations must be numbered 1, 2, 3… without gaps or repeats; found ${migration.name} at position ${index + 1}`,
      );
    }
  });
  return migrations;
}
