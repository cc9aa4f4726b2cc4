import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPostgresMigrations } from "../postgres/migrate.ts";
import { loadSqliteMigrations } from "../sqlite/migrate.ts";
import { loadMigrations } from "./migrations.ts";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folderWith(files: readonly string[]): string {
  const folder = mkdtempSync(join(tmpdir(), "hookinbox-migrations-"));
  folders.push(folder);
  for (const file of files) writeFileSync(join(folder, file), `-- ${file}\n`);
  return folder;
}

describe("loadMigrations (both drivers)", () => {
  it("reads numbered files in order, ignoring other files", () => {
    const folder = folderWith(["002_b.sql", "001_a.sql", "README.md", "003_c.sql"]);
    expect(loadMigrations(folder, "PostgreSQL").map((m) => [m.id, m.name])).toEqual([
      [1, "001_a"],
      [2, "002_b"],
      [3, "003_c"],
    ]);
  });

  it("refuses a gap, naming the dialect (PostgreSQL's loader once skipped this check)", () => {
    const folder = folderWith(["001_a.sql", "003_c.sql"]);
    expect(() => loadMigrations(folder, "PostgreSQL")).toThrow(
      "PostgreSQL migrations must be numbered 1, 2, 3… without gaps or repeats; found 003_c at position 2",
    );
  });

  it("refuses a repeated number", () => {
    const folder = folderWith(["001_a.sql", "002_b.sql", "002_c.sql"]);
    expect(() => loadMigrations(folder, "SQLite")).toThrow(/without gaps or repeats/);
  });

  it("the shipped migrations of both stores load without gaps", () => {
    const sqlite = loadSqliteMigrations();
    const postgres = loadPostgresMigrations();
    expect(sqlite.map((m) => m.id)).toEqual(sqlite.map((_, i) => i + 1));
    expect(postgres.map((m) => m.id)).toEqual(postgres.map((_, i) => i + 1));
  });
});
