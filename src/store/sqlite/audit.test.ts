import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeRange, rangeRoot } from "../../audit/compact-range.ts";
import { treeRoot } from "../../audit/merkle.ts";
import { acceptPlanOf } from "../core/accepts.ts";
import type { AcceptInput } from "../types.ts";
import { openConnection } from "./connection.ts";
import { GroupCommit } from "./group-commit.ts";
import { prepareInsertOrGetEvent } from "./insert-or-get-event.ts";
import { migrateSqlite } from "./migrate.ts";

// The tree row is written once per transaction, by a finisher the group commit runs before each
// COMMIT. These tests pin what that must survive: many appends in one batch, and a batch that
// fails and is retried one unit at a time (the rolled-back appends must leave nothing behind).

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openStore() {
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-audit-finisher-"));
  dirs.push(dir);
  const db = openConnection(join(dir, "store.db"), 5000);
  migrateSqlite(db);
  const group = new GroupCommit(db);
  const accept = prepareInsertOrGetEvent(db, (finisher) => group.addFinisher(finisher));
  return { db, group, accept };
}

function input(n: number): AcceptInput {
  return {
    source: "stripe",
    identity: {
      dedupKey: `evt_${n}`,
      type: "invoice.paid",
      occurredAt: null,
      orderingKey: null,
      version: null,
    },
    body: Buffer.from(`{"id":"evt_${n}"}`),
    headers: [["content-type", "application/json"]],
    receivedAt: 1_767_225_600_000 + n,
    remoteAddress: null,
    secretIndex: null,
  } as AcceptInput;
}

/** The tree row's size and root, and the root folded from every stored leaf hash. */
function treeState(db: ReturnType<typeof openStore>["db"]) {
  const row = db.prepare("SELECT size, frontier FROM audit_tree WHERE id = 1").get() as {
    size: number;
    frontier: Buffer;
  };
  const leaves = db.prepare("SELECT seq, hash FROM audit_leaves ORDER BY seq").all() as Array<{
    seq: number;
    hash: Buffer;
  }>;
  return {
    size: row.size,
    root: rangeRoot(decodeRange(row.size, row.frontier)).toString("hex"),
    seqs: leaves.map((l) => l.seq),
    leavesRoot: treeRoot(leaves.map((l) => l.hash)).toString("hex"),
  };
}

describe("SQLite audit append: one tree row write per transaction", () => {
  it("50 accepts in one group commit give 50 leaves and a tree row that matches them", async () => {
    const { db, group, accept } = openStore();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        group.submit(() => accept(acceptPlanOf(input(n), true))),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(50);
    expect(group.commits).toBe(1);
    const state = treeState(db);
    expect(state.size).toBe(50);
    expect(state.seqs).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(state.root).toBe(state.leavesRoot);
    db.close();
  });

  it("a failed batch retried unit by unit leaves exactly the units that committed", async () => {
    const { db, group, accept } = openStore();
    await group.submit(() => accept(acceptPlanOf(input(0), true)));
    const outcomes = await Promise.allSettled([
      group.submit(() => accept(acceptPlanOf(input(1), true))),
      group.submit(() => {
        accept(acceptPlanOf(input(2), true));
        throw new Error("this unit fails after its append");
      }),
      group.submit(() => accept(acceptPlanOf(input(3), true))),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const state = treeState(db);
    expect(state.size).toBe(3);
    expect(state.seqs).toEqual([0, 1, 2]);
    expect(state.root).toBe(state.leavesRoot);
    const events = db.prepare("SELECT dedup_key FROM events ORDER BY dedup_key").all();
    expect(events).toEqual([
      { dedup_key: "evt_0" },
      { dedup_key: "evt_1" },
      { dedup_key: "evt_3" },
    ]);
    // The next transaction starts from the committed row, not from what the failed one left.
    await group.submit(() => accept(acceptPlanOf(input(4), true)));
    const after = treeState(db);
    expect(after.size).toBe(4);
    expect(after.root).toBe(after.leavesRoot);
    db.close();
  });
});
