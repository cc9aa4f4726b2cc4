import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runProbe } from "../../src/testing/probe/run-probe.ts";
import { stripeSample } from "../../src/testing/samples/stripe.ts";
import { startCheckThenInsertReceiver } from "../fixtures/receivers/check-then-insert.ts";
import { startConflictOnDuplicateReceiver } from "../fixtures/receivers/conflict-on-duplicate.ts";
import { startCorrectReceiver } from "../fixtures/receivers/correct.ts";
import { fixtureSecret, type Receiver } from "../fixtures/receivers/kit.ts";
import { startLastWriteWinsReceiver } from "../fixtures/receivers/last-write-wins.ts";
import { startReserialiseReceiver } from "../fixtures/receivers/reserialise.ts";
import { startSlowInRequestReceiver } from "../fixtures/receivers/slow-in-request.ts";

// The probe against fixture receivers over loopback: a correct one passes every check, and each
// receiver with one classic bug fails exactly the checks that target that bug.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function probe(receiver: Receiver, budgetMs?: number) {
  cleanups.push(() => receiver.close());
  const report = await runProbe({
    url: receiver.url,
    sample: stripeSample,
    secret: fixtureSecret,
    effects: receiver.effectsUrl,
    quietMs: 300,
    settleMs: 10_000,
    ...(budgetMs === undefined ? {} : { budgetMs }),
  });
  const failed = report.checks.filter((c) => c.outcome === "fail").map((c) => c.key);
  return { report, failed };
}

describe("hookinbox probe against fixture receivers", () => {
  it("a correct receiver passes all eight checks", async () => {
    const { report, failed } = await probe(await startCorrectReceiver());
    expect(failed).toEqual([]);
    expect(report.checks.map((c) => [c.id, c.outcome])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((id) => [id, "pass"]),
    );
    expect(report.ok).toBe(true);
  });

  it("check-then-insert fails only the parallel-duplicates check (several effects for one event)", async () => {
    const receiver = await startCheckThenInsertReceiver();
    const { failed, report } = await probe(receiver);
    expect(failed).toEqual(["duplicate-in-parallel"]);
    const effects = Number(
      /^(\d+) effects for one event/.exec(report.checks[1]?.detail ?? "")?.[1],
    );
    expect(effects).toBeGreaterThan(1);
    expect(receiver.ledger.effects).toBeGreaterThanOrEqual(effects + 1);
  });

  it("JSON re-serialisation before verifying fails only the raw-bytes check", async () => {
    const { failed } = await probe(await startReserialiseReceiver());
    expect(failed).toEqual(["re-serialised-json"]);
  });

  it("409 on duplicates fails both duplicate checks, nothing else", async () => {
    const { failed, report } = await probe(await startConflictOnDuplicateReceiver());
    expect(failed).toEqual(["duplicate-in-a-row", "duplicate-in-parallel"]);
    expect(report.checks.find((c) => c.id === 2)?.detail).toMatch(/^1× 200, 19× 409;/);
  });

  it("processing inside the request fails only the answer-time check", async () => {
    const { failed, report } = await probe(await startSlowInRequestReceiver(600), 250);
    expect(failed).toEqual(["answer-time"]);
    expect(report.checks.find((c) => c.id === 8)?.detail).toMatch(/over the 250 ms budget/);
  });

  it("last-write-wins fails only the out-of-order check", async () => {
    const { failed } = await probe(await startLastWriteWinsReceiver());
    expect(failed).toEqual(["out-of-order"]);
  });

  it("without --effects the out-of-order check is skipped, and a dead receiver fails, never throws", async () => {
    const receiver = await startCorrectReceiver();
    const url = receiver.url;
    await receiver.close();
    const report = await runProbe({
      url,
      sample: stripeSample,
      secret: fixtureSecret,
      timeoutMs: 2_000,
    });
    expect(report.checks.map((c) => [c.key, c.outcome])).toEqual([
      ["duplicate-in-a-row", "fail"],
      ["duplicate-in-parallel", "fail"],
      ["altered-body", "fail"],
      ["stale-timestamp", "fail"],
      ["re-serialised-json", "fail"],
      ["unhandled-type", "fail"],
      ["out-of-order", "skip"],
      ["answer-time", "fail"],
    ]);
    expect(join(report.checks[0]?.detail ?? "")).toMatch(/no answer/);
  });
});
