import { describe, expect, it } from "vitest";
import { retentionProgram } from "./retention-step.ts";
import type { SqlResult, SqlStatement } from "./sql-template.ts";
import { driveProgram, type ProgramContext } from "./write-program.ts";

const ctx = (dialect: "sqlite" | "postgres"): ProgramContext => ({
  dialect,
  table: (name) => (dialect === "postgres" ? `hookinbox.${name}` : name),
});

/** Answers each statement by the first canned answer whose key its text contains. */
function scripted(answers: Array<[string, SqlResult<Record<string, unknown>>]>) {
  const ran: SqlStatement[] = [];
  const run = (statements: SqlStatement[]) =>
    statements.map((statement) => {
      ran.push(statement);
      const found = answers.find(([key]) => statement.text.includes(key));
      return found?.[1] ?? { rows: [], rowCount: 0 };
    });
  return { ran, run };
}

const input = {
  kind: "events" as const,
  before: 1_800_000_000_000,
  cursor: "",
  limit: 2,
  now: 1_800_000_100_000,
  dryRun: false,
  audit: true,
};

const sqliteEvents = () =>
  scripted([
    ["max(id) AS end", { rows: [{ end: "evt_9", n: 20 }], rowCount: 1 }],
    ["SELECT e.id FROM events", { rows: [{ id: "evt_1" }, { id: "evt_2" }], rowCount: 2 }],
    ["SELECT id FROM receipts", { rows: [{ id: "rcp_1" }], rowCount: 1 }],
  ]);

describe("retention program: core decides what goes and what the leaf says", () => {
  it("SQLite: a full batch deletes its events and names them and their receipts in leaves", () => {
    const { ran, run } = sqliteEvents();
    const out = driveProgram(
      retentionProgram(ctx("sqlite"), { step: "rows", input, partition: null }),
      run,
    );
    expect(out.result).toEqual({ removed: 2, cursor: "evt_2" });
    expect(out.leaves.map((l) => l.fields)).toEqual([
      { kind: "events", firstId: "evt_1", lastId: "evt_2", removed: 2, cut: input.before },
      // Each event's receipts, as the scripted store answers them (one each, same id).
      { kind: "receipts", firstId: "rcp_1", lastId: "rcp_1", removed: 2, cut: input.before },
    ]);
    expect(ran.some((s) => s.text.startsWith("DELETE FROM events"))).toBe(true);
  });

  it("SQLite: a dry run deletes nothing and records nothing", () => {
    const { ran, run } = sqliteEvents();
    const out = driveProgram(
      retentionProgram(ctx("sqlite"), {
        step: "rows",
        input: { ...input, dryRun: true },
        partition: null,
      }),
      run,
    );
    expect(out).toEqual({ result: { removed: 2, cursor: "evt_2" }, leaves: [] });
    expect(ran.some((s) => /^\s*(DELETE|INSERT)/.test(s.text))).toBe(false);
  });

  it("PostgreSQL: a whole day partition is dropped and recorded by its count and bounds", () => {
    const { ran, run } = scripted([
      ["count(*)::int", { rows: [{ n: 7, first: "evt_1", last: "evt_7" }], rowCount: 1 }],
    ]);
    const partition = { table: "hookinbox.events_p1", from: "", to: "evt_8" };
    const out = driveProgram(
      retentionProgram(ctx("postgres"), { step: "rows", input, partition }),
      run,
    );
    expect(out.result).toEqual({ removed: 7, cursor: "evt_8" });
    expect(out.leaves.map((l) => l.fields)).toEqual([
      { kind: "events", firstId: "evt_1", lastId: "evt_7", removed: 7, cut: input.before },
    ]);
    expect(ran.map((s) => s.text)).toContain("DROP TABLE hookinbox.events_p1");
  });
});
