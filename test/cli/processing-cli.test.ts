import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { testAdminToken } from "../helpers/admin-token.ts";
import { type GatewayProcess, spawnCommand } from "../helpers/gateway-process.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// The processing CLI (replay, dlq, stuck, effects) against a real gateway process on the same
// SQLite file, including a real SIGKILL in the middle of an effect.

const run = promisify(execFile);
const token = testAdminToken;
const cleanups: Array<() => void> = [];
const gateways: GatewayProcess[] = [];
afterAll(async () => {
  for (const gateway of gateways) {
    if (gateway.child.exitCode === null && gateway.child.signalCode === null) {
      gateway.child.kill("SIGKILL");
      await gateway.exited();
    }
  }
  for (const cleanup of cleanups) cleanup();
});

function hookinbox(cwd: string, args: string[]) {
  return run(process.execPath, [join(repoRoot, "bin/hookinbox.mjs"), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "" },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

const json = (text: string) => JSON.parse(text) as Record<string, any>;

/** A config module: handlers are functions, so it is `.mjs`; it imports hookinbox by file URL. */
function writeConfig(dir: string): void {
  const index = pathToFileURL(join(repoRoot, "src/index.ts")).href;
  writeFileSync(
    join(dir, "hookinbox.config.mjs"),
    `import { PermanentError } from ${JSON.stringify(index)};

export default {
  store: "sqlite:./data/hookinbox.db",
  admin: { token: ${JSON.stringify(token)} },
  log: { level: "info" },
  worker: { lease: "1s", pollInterval: "100ms" },
  sources: { stripe: { provider: "stripe", secrets: [${JSON.stringify(secrets.stripe)}] } },
  handlers: {
    // "continue": a dead delivery does not hold back later deliveries of its ordering key (its
    // replays included), so the dead-letter queue can hold several of them.
    "stripe:invoice.payment_failed": {
      handler: async () => {
        throw new PermanentError("card declined for good");
      },
      options: { onDeadLetter: "continue" },
    },
    "stripe:invoice.paid": async () => {},
    // The carrier call never returns in this test: the gateway is killed while it hangs.
    "stripe:order.ship": async (event, ctx) => {
      await ctx.effect("ship", () => new Promise(() => {}), { onStale: "hold", staleAfter: "1s" });
    },
  },
};
`,
  );
}

/** Polls `probe` until it answers; the bound is generous (a bound, not a speed: see `until`). */
async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("hookinbox replay, dlq, stuck and effects against a running gateway", () => {
  it("dead-letters, lists, retries, replays, reports stuck work and resolves a held effect", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    writeConfig(tmp.dir);
    let gateway = await spawnCommand(tmp.dir, ["start", "--port", "0"]);
    gateways.push(gateway);

    const post = async (id: string, type: string, object: string) => {
      const request = stripeRequest(id, { type, extra: { data: { object: { id: object } } } });
      const response = await fetch(`${gateway.url}/webhooks/stripe`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { eventId: string }).eventId;
    };
    const event = async (id: string) => {
      const response = await fetch(`${gateway.url}/api/events/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, any>;
    };
    const eventWhere = (id: string, what: string, test: (e: Record<string, any>) => boolean) =>
      waitFor(what, async () => {
        const e = await event(id);
        return test(e) ? e : undefined;
      });

    const failId = await post("evt_cli_fail", "invoice.payment_failed", "in_fail");
    const okId = await post("evt_cli_ok", "invoice.paid", "in_ok");
    const shipId = await post("evt_cli_ship", "order.ship", "ord_1");
    const failed = await eventWhere(failId, "the dead letter", (e) => e.status === "dead");
    const ok = await eventWhere(okId, "the done event", (e) => e.status === "done");
    const shipping = await eventWhere(
      shipId,
      "the shipment to start",
      (e) => e.deliveries[0]?.status === "running",
    );
    const deadDelivery = failed.deliveries[0];
    expect(deadDelivery).toMatchObject({ target: "stripe:invoice.payment_failed", attempts: 1 });

    // dlq list: the dead delivery, as JSON and as a table.
    const listed = await hookinbox(tmp.dir, ["dlq", "list", "--json"]);
    expect(listed.code).toBe(0);
    expect(json(listed.stdout)).toEqual({
      items: [
        expect.objectContaining({
          id: deadDelivery.id,
          eventId: failId,
          status: "dead",
          attempts: 1,
          lastError: "PermanentError: card declined for good",
          isReplay: false,
        }),
      ],
      nextCursor: null,
    });
    const table = (await hookinbox(tmp.dir, ["dlq", "list"])).stdout.split("\n");
    expect(table[0]).toMatch(
      /^ID\s+EVENT\s+TARGET\s+ATTEMPTS\s+LAST ERROR\s+COMPLETED AT\s+TYPE\s+RUNBOOK$/,
    );
    expect(table[1]).toContain(deadDelivery.id);
    expect(table[1]).toContain("PermanentError: card declined for good");

    // stuck: a young dead letter is not stuck under the default 1h; with 0s every undone event is.
    const calm = await hookinbox(tmp.dir, ["stuck"]);
    expect(calm).toMatchObject({ code: 0 });
    expect(calm.stdout).toMatch(/^nothing is stuck/);
    const strict = await hookinbox(tmp.dir, ["stuck", "--older-than", "0s", "--json"]);
    expect(strict.code).toBe(1);
    expect(
      json(strict.stdout)
        .oldUndone.map((e: { id: string; status: string }) => [e.id, e.status])
        .sort(),
    ).toEqual(
      [
        [failId, "dead"],
        [shipId, "pending"],
      ].sort(),
    );
    expect((await hookinbox(tmp.dir, ["stuck", "--older-than", "soon"])).code).toBe(2);

    // dlq retry <id>: back in the queue with a fresh budget; the worker runs it and it dies again.
    const retried = await hookinbox(tmp.dir, ["dlq", "retry", deadDelivery.id]);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toMatch(new RegExp(`^retried ${deadDelivery.id} .*: pending`));
    const again = await eventWhere(
      failId,
      "the retried delivery to die again",
      (e) => e.status === "dead" && e.deliveries[0].attempts === 2,
    );
    expect(
      again.deliveries[0].attemptLog.map((a: { attempt: number; outcome: string }) => [
        a.attempt,
        a.outcome,
      ]),
    ).toEqual([
      [1, "permanent"],
      [2, "permanent"],
    ]);
    const notRetryable = await hookinbox(tmp.dir, ["dlq", "retry", ok.deliveries[0].id]);
    expect(notRetryable.code).toBe(1);
    expect(notRetryable.stderr).toContain("HOOKINBOX_DELIVERY_NOT_RETRYABLE");
    const missing = await hookinbox(tmp.dir, ["dlq", "retry", "dlv_nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("HOOKINBOX_DELIVERY_NOT_FOUND");
    expect((await hookinbox(tmp.dir, ["dlq", "retry"])).code).toBe(2);

    // replay <eventId>: a new delivery flagged isReplay; the original's attempt log is untouched.
    const originalOk = ok.deliveries[0];
    const replayed = await hookinbox(tmp.dir, ["replay", okId, "--json"]);
    expect(replayed.code).toBe(0);
    const [replayDelivery] = json(replayed.stdout).deliveries;
    expect(replayDelivery).toMatchObject({
      eventId: okId,
      target: "stripe:invoice.paid",
      isReplay: true,
      replayOf: originalOk.id,
      status: "pending",
    });
    const afterReplay = await eventWhere(
      okId,
      "the replay to run",
      (e) => e.deliveries.length === 2 && e.deliveries[1].status === "done",
    );
    expect(afterReplay.deliveries[0]).toEqual(originalOk);
    expect(afterReplay.deliveries[1]).toMatchObject({ id: replayDelivery.id, isReplay: true });
    const replayTable = await hookinbox(tmp.dir, ["replay", okId]);
    expect(replayTable.stdout.split("\n")[0]).toMatch(/^DELIVERY\s+TARGET\s+STATUS\s+REPLAY OF$/);
    const unknownEvent = await hookinbox(tmp.dir, ["replay", "evt_nope"]);
    expect(unknownEvent.code).toBe(1);
    expect(unknownEvent.stderr).toContain("HOOKINBOX_EVENT_NOT_FOUND");
    const unknownTarget = await hookinbox(tmp.dir, ["replay", okId, "--target", "stripe:nope"]);
    expect(unknownTarget.code).toBe(1);
    expect(unknownTarget.stderr).toContain("HOOKINBOX_UNKNOWN_TARGET");

    // The gateway dies (SIGKILL) while the shipment's carrier call hangs: its lease expires and
    // nobody rescues it, which `stuck` reports.
    const shipDelivery = shipping.deliveries[0];
    gateway.child.kill("SIGKILL");
    await gateway.exited();
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const expired = await hookinbox(tmp.dir, ["stuck", "--json"]);
    expect(expired.code).toBe(1);
    expect(json(expired.stdout)).toMatchObject({
      stuck: true,
      expiredLeases: [expect.objectContaining({ id: shipDelivery.id, status: "running" })],
      heldEffects: [],
      oldUndone: [],
    });
    const expiredText = await hookinbox(tmp.dir, ["stuck"]);
    expect(expiredText.code).toBe(1);
    expect(expiredText.stdout).toContain("expired leases (1)");

    // A new gateway rescues it; the effect's claim is stale and `hold` parks it for a human.
    gateway = await spawnCommand(tmp.dir, ["start", "--port", "0"]);
    gateways.push(gateway);
    const held = await eventWhere(shipId, "the held effect", (e) => e.status === "dead");
    expect(held.deliveries[0].lastError).toMatch(/^EffectHeldError: effect "ship"/);
    const heldList = json(
      (await hookinbox(tmp.dir, ["effects", "list", "--status", "held", "--json"])).stdout,
    );
    expect(heldList.items).toEqual([
      expect.objectContaining({
        eventId: shipId,
        target: "stripe:order.ship",
        name: "ship",
        status: "held",
        onStale: "hold",
        claims: 1,
      }),
    ]);
    const effectId = heldList.items[0].id as string;
    const stuckHeld = await hookinbox(tmp.dir, ["stuck", "--json"]);
    expect(stuckHeld.code).toBe(1);
    expect(json(stuckHeld.stdout).heldEffects.map((e: { id: string }) => e.id)).toEqual([effectId]);
    expect((await hookinbox(tmp.dir, ["effects", "resolve", effectId])).code).toBe(2);
    expect(
      (await hookinbox(tmp.dir, ["effects", "resolve", effectId, "--done", "--release"])).code,
    ).toBe(2);
    const noEffect = await hookinbox(tmp.dir, ["effects", "resolve", "eff_nope", "--done"]);
    expect(noEffect.code).toBe(1);
    expect(noEffect.stderr).toContain("HOOKINBOX_EFFECT_NOT_FOUND");

    // The operator checked with the carrier: it shipped. Mark it done, then retry the delivery:
    // the handler runs again and the effect returns without calling the carrier.
    const resolved = await hookinbox(tmp.dir, ["effects", "resolve", effectId, "--done"]);
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toContain(`effect ${effectId} ("ship") marked done`);
    expect(resolved.stdout).toContain(`hookinbox dlq retry ${shipDelivery.id}`);
    expect((await hookinbox(tmp.dir, ["dlq", "retry", shipDelivery.id])).code).toBe(0);
    const shipped = await eventWhere(shipId, "the shipment to finish", (e) => e.status === "done");
    expect(shipped.deliveries[0].attemptLog.map((a: { outcome: string }) => a.outcome)).toEqual([
      "lease-expired",
      "permanent",
      "success",
    ]);

    const allClear = await hookinbox(tmp.dir, ["stuck"]);
    expect(allClear.code).toBe(0);

    // Bulk replay: counts first, a final progress line on stderr (not a terminal), totals.
    const bulk = await hookinbox(tmp.dir, ["replay", "--filter", "source=stripe", "--json"]);
    expect(bulk.code).toBe(0);
    expect(json(bulk.stdout)).toEqual({ events: 3, deliveries: 3 });
    expect(bulk.stderr).toMatch(/\] 3\/3 events replayed\n$/);
    const paid = await hookinbox(tmp.dir, [
      "replay",
      "--filter",
      `source=stripe,type=invoice.paid,from=${new Date(Date.now() - 3_600_000).toISOString()},to=${new Date(Date.now() + 60_000).toISOString()}`,
    ]);
    expect(paid.code).toBe(0);
    expect(paid.stdout).toBe("replayed 1 event: 1 new delivery\n");
    const none = await hookinbox(tmp.dir, ["replay", "--filter", "source=github", "--json"]);
    expect(json(none.stdout)).toEqual({ events: 0, deliveries: 0 });
    for (const bad of ["status=failed", "colour=red", "from=yesterday", "source=a,source=b"]) {
      const refused = await hookinbox(tmp.dir, ["replay", "--filter", bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("HOOKINBOX_USAGE");
    }
    expect((await hookinbox(tmp.dir, ["replay"])).code).toBe(2);
    const planned = await hookinbox(tmp.dir, ["replay", "--all", "--dry-run", "--json"]);
    expect(planned.code).toBe(0);
    expect(json(planned.stdout)).toMatchObject({ dryRun: true, events: 3 });
    expect((await hookinbox(tmp.dir, ["replay", okId, "--filter", "all"])).code).toBe(2);

    // The replayed shipment does not ship again: the ledger already holds "ship" as done.
    const shipReplayed = await eventWhere(
      shipId,
      "the shipment replay",
      (e) => e.deliveries.length === 2 && e.deliveries[1].status === "done",
    );
    expect(shipReplayed.deliveries[1]).toMatchObject({
      isReplay: true,
      replayOf: shipDelivery.id,
    });
    const ledger = json((await hookinbox(tmp.dir, ["effects", "list", "--json"])).stdout);
    expect(ledger.items).toEqual([
      expect.objectContaining({ id: effectId, status: "done", claims: 1 }),
    ]);

    // Every dead delivery (the original and the bulk replay of the failing event), paged.
    const dead = await waitFor("both failing deliveries to be dead", async () => {
      const page = json((await hookinbox(tmp.dir, ["dlq", "list", "--json"])).stdout);
      return page.items.length === 2 ? page : undefined;
    });
    const first = json(
      (await hookinbox(tmp.dir, ["dlq", "list", "--limit", "1", "--json"])).stdout,
    );
    expect(first.items.map((d: { id: string }) => d.id)).toEqual([dead.items[0].id]);
    const second = json(
      (
        await hookinbox(tmp.dir, [
          "dlq",
          "list",
          "--limit",
          "1",
          "--cursor",
          first.nextCursor,
          "--json",
        ])
      ).stdout,
    );
    expect(second.items.map((d: { id: string }) => d.id)).toEqual([dead.items[1].id]);
    expect(second.nextCursor).toBeNull();
    expect((await hookinbox(tmp.dir, ["dlq", "list", "--limit", "0"])).code).toBe(2);

    // dlq retry --target: both go back; another target has none. --dry-run counts and changes
    // nothing (no scope, or --all with --target, is refused: test/cli/cli-parser.test.ts).
    const dryRun = await hookinbox(tmp.dir, ["dlq", "retry", "--all", "--dry-run"]);
    expect(dryRun).toMatchObject({
      code: 0,
      stdout:
        "dry run: would retry 1 event (2 deliveries: stripe:invoice.payment_failed 2); nothing changed\n",
    });
    const noneRetried = await hookinbox(tmp.dir, [
      "dlq",
      "retry",
      "--target",
      "stripe:invoice.paid",
    ]);
    expect(noneRetried.stdout).toBe("retried 0 dead deliveries\n");
    const all = await hookinbox(tmp.dir, [
      "dlq",
      "retry",
      "--target",
      "stripe:invoice.payment_failed",
    ]);
    expect(all).toMatchObject({ code: 0, stdout: "retried 2 dead deliveries\n" });
    await eventWhere(
      failId,
      "the retried deliveries to die again",
      (e) =>
        e.status === "dead" &&
        e.deliveries.every((d: { status: string; attempts: number }) => d.status === "dead") &&
        e.deliveries[0].attempts === 3 &&
        e.deliveries[1].attempts === 2,
    );

    gateway.child.kill("SIGTERM");
    expect((await gateway.exited()).code).toBe(0);
    // 36 CLI processes, each compiling the sources with tsx: about 3 s apiece on a busy 2-core
    // machine, so 180 s was too tight once the suite ran beside it.
  }, 600_000);
});
