import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { PermanentError } from "../../src/handlers/errors.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { until } from "../helpers/processing.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// Runbooks beside failures (API and CLI), "run now" for pending, blocked and dead deliveries, and
// the bulk retry that a runbook saying "not safe" refuses without an override.

const token = testAdminToken;
const runbooks = {
  "stripe:invoice.paid": {
    owner: "billing",
    safeToReprocess: true,
    notes: "Credits the invoice; idempotent by invoice id.",
    link: "https://wiki.example.com/billing/invoice-paid",
  },
  "stripe:charge.*": { owner: "payments", safeToReprocess: false, notes: "Moves money." },
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const store = `sqlite:${join(tmp.dir, "hookinbox.db")}`;
  // The CLI reads the same store and runbooks from a JSON config in its working folder.
  writeFileSync(join(tmp.dir, "hookinbox.config.json"), JSON.stringify({ store, runbooks }));
  const fails = () => {
    throw new PermanentError("the ledger refuses it");
  };
  const gateway: Gateway = await startGateway(
    {
      store,
      sources: { stripe: { provider: "stripe", secrets: [secrets.stripe] } },
      runbooks,
      worker: { pollInterval: "50ms" },
      handlers: {
        "stripe:invoice.paid": { handler: fails, options: { onDeadLetter: "continue" } },
        "stripe:charge.refunded": { handler: fails, options: { onDeadLetter: "continue" } },
        "stripe:invoice.upcoming": {
          handler: async () => {
            throw new Error("not yet");
          },
          options: { retry: { schedule: ["1h"], jitter: "none" } },
        },
      },
    },
    { env: {}, port: 0, adminToken: token },
  );
  cleanups.push(() => gateway.close());
  const post = async (id: string, type: string) => {
    const request = stripeRequest(id, { type, extra: { data: { object: { id: `obj_${id}` } } } });
    const response = await fetch(`${gateway.url}/webhooks/stripe`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { eventId: string }).eventId;
  };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const cli = async (args: string[]) => {
    let stdout = "";
    let stderr = "";
    const sink = (append: (text: string) => void) =>
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      });
    const code = await main(args, {
      cwd: tmp.dir,
      env: {},
      stdout: sink((t) => {
        stdout += t;
      }),
      stderr: sink((t) => {
        stderr += t;
      }),
    });
    return { code, stdout, stderr };
  };
  return { gateway, post, api, cli };
}

describe("runbooks and run now", () => {
  it("shows runbooks beside failures, runs deliveries now, and guards bulk retries of unsafe types", async () => {
    const { post, api, cli } = await setup();
    const paid = await post("evt_paid", "invoice.paid");
    const refund = await post("evt_refund", "charge.refunded");
    const upcoming = await post("evt_upcoming", "invoice.upcoming");
    const deliveryOf = async (eventId: string) =>
      (await api("GET", `/api/deliveries?eventId=${eventId}`)).json.items[0];
    await until(async () => (await deliveryOf(paid))?.status === "dead", 10_000, "paid dead");
    await until(async () => (await deliveryOf(refund))?.status === "dead", 10_000, "refund dead");
    await until(
      async () => (await deliveryOf(upcoming))?.attempts === 1 && (await deliveryOf(upcoming)),
      10_000,
      "upcoming tried once",
    );

    // API: the runbook beside the event and beside each dead letter.
    const event = await api("GET", `/api/events/${paid}`);
    expect(event.json.runbook).toEqual({
      pattern: "stripe:invoice.paid",
      ...runbooks["stripe:invoice.paid"],
    });
    expect(event.json.deliveries[0].runbook.owner).toBe("billing");
    const dead = await api("GET", "/api/deliveries?status=dead");
    expect(dead.json.items).toHaveLength(2);
    const byEvent = Object.fromEntries(
      dead.json.items.map((d: Record<string, any>) => [d.eventId, d]),
    );
    expect(byEvent[refund]).toMatchObject({
      source: "stripe",
      type: "charge.refunded",
      runbook: {
        pattern: "stripe:charge.*",
        owner: "payments",
        safeToReprocess: false,
        link: null,
      },
    });
    expect((await api("GET", "/api/runbooks")).json.items.map((r: any) => r.pattern)).toEqual([
      "stripe:invoice.paid",
      "stripe:charge.*",
    ]);

    // Bulk retry with an unsafe type: refused, nothing touched; with the override: both run.
    const ids = dead.json.items.map((d: Record<string, any>) => d.id);
    const refused = await api("POST", "/api/deliveries/retry", { ids });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("HOOKINBOX_UNSAFE_TO_REPROCESS");
    expect(refused.json.error.message).toContain("stripe:charge.refunded");
    expect((await deliveryOf(paid)).attempts).toBe(1);
    const forced = await api("POST", "/api/deliveries/retry", { ids, override: true });
    expect(forced).toEqual({ status: 200, json: { retried: 2, skipped: 0 } });
    await until(
      async () =>
        (await deliveryOf(paid)).attempts === 2 && (await deliveryOf(paid)).status === "dead",
    );
    await until(
      async () =>
        (await deliveryOf(refund)).attempts === 2 && (await deliveryOf(refund)).status === "dead",
    );
    expect((await api("POST", "/api/deliveries/retry", { ids: [] })).status).toBe(400);

    // Run now: a pending retry due in an hour runs at once.
    const waiting = await deliveryOf(upcoming);
    expect(waiting.status).toBe("pending");
    expect(Date.parse(waiting.runAt) - Date.now()).toBeGreaterThan(3_000_000);
    const ran = await api("POST", `/api/deliveries/${waiting.id}/retry`);
    expect(ran.status).toBe(200);
    expect(Date.parse(ran.json.runAt)).toBeLessThanOrEqual(Date.now());
    await until(async () => (await deliveryOf(upcoming)).attempts === 2, 10_000, "run now");

    // CLI: events show prints deliveries, attempts, errors and the runbook.
    const shown = await cli(["events", "show", paid]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("deliveries (1):");
    expect(shown.stdout).toMatch(
      /#1 {2}\S+ {2}permanent {2}\d+ ms {2}wrk_\w+ {2}PermanentError: the ledger refuses it/,
    );
    expect(shown.stdout).toMatch(/#2 {2}\S+ {2}permanent/);
    expect(shown.stdout).toContain("last error: PermanentError: the ledger refuses it");
    expect(shown.stdout).toContain("runbook (stripe:invoice.paid):");
    expect(shown.stdout).toContain("owner: billing");
    expect(shown.stdout).toContain("link: https://wiki.example.com/billing/invoice-paid");
    expect((await cli(["events", "show", paid, "--json"])).stdout).toContain(
      '"runbook":{"pattern"',
    );

    // CLI: dlq list shows the runbook; bulk retries of an unsafe type need --override-unsafe.
    const listed = await cli(["dlq", "list"]);
    expect(listed.stdout).toContain("payments, NOT safe");
    expect(listed.stdout).toContain("billing, safe");
    const cliRefused = await cli(["retry", ...ids]);
    expect(cliRefused.code).toBe(1);
    expect(cliRefused.stderr).toContain("HOOKINBOX_UNSAFE_TO_REPROCESS");
    const allRefused = await cli(["dlq", "retry", "--all"]);
    expect(allRefused.code).toBe(1);
    expect(allRefused.stderr).toContain("HOOKINBOX_UNSAFE_TO_REPROCESS");
    expect((await deliveryOf(paid)).attempts).toBe(2);
    const cliForced = await cli(["retry", ...ids, "--override-unsafe", "--json"]);
    expect(cliForced.code).toBe(0);
    expect(JSON.parse(cliForced.stdout)).toMatchObject({ retried: 2, skipped: 0 });
    expect(cliForced.stderr).toContain("2/2 run now");
    await until(
      async () =>
        (await deliveryOf(paid)).attempts === 3 && (await deliveryOf(paid)).status === "dead",
    );
    // One id needs no override: the operator chose it by hand.
    await until(async () => (await deliveryOf(refund)).status === "dead");
    const single = await cli(["retry", (await deliveryOf(refund)).id]);
    expect(single.code).toBe(0);
    expect(single.stdout).toMatch(/runbook: payments, NOT safe/);
  });
});
