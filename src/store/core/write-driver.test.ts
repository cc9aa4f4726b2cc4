import { describe, expect, it } from "vitest";
import { circuitWrites } from "./circuit-writes.ts";
import type { SqlStatement } from "./sql-template.ts";
import { greatestSql, listRowsSql, skipLockedSql, type WriteDriver } from "./write-driver.ts";

/** A driver that records what core asks it to run and answers no rows. */
function recording(dialect: WriteDriver["dialect"]) {
  const seen: SqlStatement[][] = [];
  const driver: WriteDriver = {
    dialect,
    table: (name) => (dialect === "postgres" ? `"s".${name}` : name),
    execute: async (statements) => {
      seen.push([...statements]);
      return statements.map(() => ({ rows: [], rowCount: 0 }));
    },
  };
  return { driver, seen };
}

describe("core writes: one statement per rule, spelled per dialect", () => {
  it("spells the dialect differences", () => {
    expect([greatestSql("sqlite", "a", "?"), greatestSql("postgres", "a", "?")]).toEqual([
      "max(a, ?)",
      "GREATEST(a, ?)",
    ]);
    expect([listRowsSql("sqlite"), listRowsSql("postgres")]).toEqual([
      "SELECT value FROM json_each(?)",
      "SELECT unnest(?::text[]) AS value",
    ]);
    expect([skipLockedSql("sqlite"), skipLockedSql("postgres")]).toEqual([
      "",
      " FOR UPDATE SKIP LOCKED",
    ]);
  });

  it("takes a trial and reads the circuit back in one transaction, placeholders numbered", async () => {
    const { driver, seen } = recording("postgres");
    expect(await circuitWrites(driver).takeTrial("app", 2000.7, 1500.2, 3, 9000.9)).toEqual({
      taken: false,
      openUntil: null,
    });
    expect(seen).toHaveLength(1);
    const [update, read] = seen[0]!;
    expect(update?.text).toMatch(/GREATEST\(coalesce\(trials_until, 0\), \$2\)/);
    expect(update?.text).toMatch(/WHERE name = \$3 AND open_until = \$4 AND open_until <= \$5/);
    expect(update?.params).toEqual([1500, 9000, "app", 2000, 1500, 1500, 3]);
    expect(read).toEqual({
      text: `SELECT open_until FROM "s".destinations WHERE name = $1`,
      params: ["app"],
    });
  });

  it("ensures no destinations without a statement", async () => {
    const { driver, seen } = recording("sqlite");
    await circuitWrites(driver).ensureDestinations([]);
    expect(seen).toEqual([]);
  });
});
