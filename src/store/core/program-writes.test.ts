import { describe, expect, it } from "vitest";
import { startProgram } from "./program-writes.ts";
import type { SqlResult, SqlStatement } from "./sql-template.ts";
import { driveProgram, type ProgramContext } from "./write-program.ts";

const ctx = (dialect: "sqlite" | "postgres"): ProgramContext => ({
  dialect,
  table: (name) => (dialect === "postgres" ? `hookinbox.${name}` : name),
});

/** Runs a program against canned answers, one per statement, and records what it ran. */
function scripted(answers: Array<SqlResult<Record<string, unknown>>>) {
  const ran: SqlStatement[] = [];
  const run = (statements: SqlStatement[]) =>
    statements.map((statement) => {
      ran.push(statement);
      return answers.shift() ?? { rows: [], rowCount: 0 };
    });
  return { ran, run };
}

const input = {
  eventId: "evt_1",
  target: "app",
  name: "ship",
  claimant: "att_2",
  onStale: "hold" as const,
  staleAfterMs: 1000,
  now: 10_000,
  heldAlert: {
    occurrences: [{ condition: "effect-held:app", kind: "effect-held", payload: {} }],
    windowMs: 60_000,
  },
};

describe("write programs: core decides, the driver only runs the steps", () => {
  it("an effect claim that wins the insert is claimed in one statement", () => {
    const { ran, run } = scripted([{ rows: [{ id: "eff_1" }], rowCount: 1 }]);
    const claim = driveProgram(startProgram(ctx("sqlite"), "claimEffect", input), run);
    expect(claim).toEqual({ state: "claimed", effectId: "eff_1", reclaimed: false });
    expect(ran).toHaveLength(1);
    expect(ran[0]?.text).toContain("ON CONFLICT (event_id, target, name) DO NOTHING");
  });

  it("a stale claim held on PostgreSQL locks the row, holds it and records its alert under the condition's lock", () => {
    const { ran, run } = scripted([
      { rows: [], rowCount: 0 },
      {
        rows: [
          {
            id: "eff_1",
            status: "processing",
            claimant: "att_1",
            claimed_at: 1,
            result: null,
            claimant_outcome: "lease-expired",
          },
        ],
        rowCount: 1,
      },
      { rows: [], rowCount: 1 },
      { rows: [{}], rowCount: 1 },
      { rows: [{ waiting: null, slot: null }], rowCount: 1 },
      { rows: [], rowCount: 1 },
    ]);
    const claim = driveProgram(startProgram(ctx("postgres"), "claimEffect", input), run);
    expect(claim).toEqual({ state: "held", effectId: "eff_1", newlyHeld: true });
    expect(ran.map((s) => s.text.split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "INSERT INTO",
      "SELECT e.id,",
      "UPDATE hookinbox.effects",
      "SELECT pg_advisory_xact_lock(hashtext($1))",
      "SELECT (SELECT",
      "INSERT INTO",
    ]);
    expect(ran[1]?.text).toContain("FOR UPDATE OF e");
    expect(ran[5]?.params).toContain(JSON.stringify({ effectId: "eff_1" }));
  });

  it("a closed circuit that another process closed first wakes nothing", () => {
    const { ran, run } = scripted([{ rows: [], rowCount: 0 }]);
    const program = startProgram(ctx("sqlite"), "closeCircuit", {
      name: "app",
      openUntil: 5,
      now: 10,
    });
    expect(driveProgram(program, run)).toBeNull();
    expect(ran).toHaveLength(1);
  });
});
