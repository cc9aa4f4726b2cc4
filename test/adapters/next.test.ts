// hookinbox/next on serverless terms, in process: real Requests into nextRouteHandler and
// nextCronRoute against real SQLite and PostgreSQL stores, with a fake `after` that collects the
// tasks Next.js would run after the response and runs them when the test says so.
import { Writable } from "node:stream";
import { hmacValidator } from "@adyen/api-library";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nextCronRoute, nextRouteHandler } from "../../src/adapters/next.ts";
import { isHookinboxError } from "../../src/errors.ts";
import { createInbox, type Inbox } from "../../src/inbox.ts";
import { acceptedEventIds } from "../../src/ingest/accepted-events.ts";
import { createLogger } from "../../src/log.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

const adyenKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const cronSecret = "cron-secret-for-the-next-adapter-tests-0123456789";

/** An Adyen batch signed item by item by the official library (Adyen answers `[accepted]`). */
function adyenBatch(references: readonly string[]): string {
  const validator = new hmacValidator();
  const items = references.map((pspReference) => {
    const fields = {
      pspReference,
      merchantAccountCode: "TestMerchant",
      merchantReference: `ref-${pspReference}`,
      amount: { value: 1130, currency: "EUR" },
      eventCode: "AUTHORISATION",
      success: "true",
      eventDate: "2023-11-14T22:13:20+01:00",
      additionalData: {},
    };
    const hmacSignature = validator.calculateHmac(fields as never, adyenKey);
    return { NotificationRequestItem: { ...fields, additionalData: { hmacSignature } } };
  });
  return JSON.stringify({ live: "false", notificationItems: items });
}

/** A fake `after`: collects tasks; `run()` runs those collected so far, one after another. */
function fakeAfter() {
  const tasks: Array<() => Promise<void>> = [];
  return {
    after: (task: () => Promise<void>) => void tasks.push(task),
    get pending() {
      return tasks.length;
    },
    async run() {
      const now = tasks.splice(0);
      for (const task of now) await task();
      return now.length;
    },
  };
}

/** Log lines (JSON objects) written by the inbox's logger. */
function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination }) };
}

/** A signed Stripe event on its own object (Stripe orders by `data.object.id`: no blocking). */
const stripeEvent = (id: string, options: { type?: string; secret?: string } = {}) =>
  stripeRequest(id, {
    ...options,
    extra: { data: { object: { id: `in_${id}`, customer: "cus_1" } } },
  });

const params = (source: string) => ({ params: Promise.resolve({ source }) });

function post(source: string, signed: { body: string; headers: Record<string, string> }) {
  return new Request(`http://localhost/api/webhooks/${source}`, {
    method: "POST",
    headers: signed.headers,
    body: signed.body,
  });
}

describe.each(storeFactories().filter((f) => f.name !== "pgbouncer"))(
  "hookinbox/next after the response and on cron ($name)",
  ({ open }) => {
    let store: TestStore;
    let inbox: Inbox;
    let handled: string[];
    let log: ReturnType<typeof logLines>;

    beforeEach(async () => {
      store = await open();
      handled = [];
      log = logLines();
      inbox = createInbox(
        {
          store: store.url,
          sources: {
            stripe: { provider: "stripe", secrets: [secrets.stripe] },
            adyen: { provider: "adyen", secrets: [adyenKey] },
          },
          handlers: {
            "stripe:invoice.paid": async (event) => void handled.push(event.dedupKey),
            "stripe:charge.failed": {
              handler: async () => {
                throw new Error("the ledger is down");
              },
              options: { retry: { schedule: ["1h"], jitter: "none", maxAttempts: 3 } },
            },
            "adyen:*": async (event) => void handled.push(event.dedupKey),
          },
        },
        { env: {}, logger: log.logger },
      );
      await inbox.ready();
    });

    afterEach(async () => {
      await inbox.close();
      await store.cleanup();
    });

    const deliveries = () =>
      store.rows<{ key: string; status: string; attempts: number }>(
        "SELECT e.dedup_key AS key, d.status, d.attempts FROM deliveries d JOIN events e ON e.id = d.event_id ORDER BY e.dedup_key",
      );

    it("answers once the event is stored and processes that event, and only it, after the response", async () => {
      const later = fakeAfter();
      const { POST } = nextRouteHandler(() => inbox, {
        after: later.after,
        processAfterResponse: { maxMs: 30_000, graceMs: 5_000, concurrency: 2 },
      });
      // Stored by another route that processes nothing: it must stay pending.
      const { POST: storeOnly } = nextRouteHandler(() => inbox);
      expect(
        (await storeOnly(post("stripe", stripeEvent("evt_other")), params("stripe"))).status,
      ).toBe(200);
      const response = await POST(post("stripe", stripeEvent("evt_next_1")), params("stripe"));
      const body = (await response.json()) as { eventId: string; duplicate: boolean };
      expect([response.status, body.duplicate]).toEqual([200, false]);
      expect(acceptedEventIds(response)).toEqual([body.eventId]);
      // Answered before anything ran: the task waits for the response to be sent.
      expect(handled).toEqual([]);
      expect(later.pending).toBe(1);
      expect(await deliveries()).toEqual([
        { key: "evt_next_1", status: "pending", attempts: 0 },
        { key: "evt_other", status: "pending", attempts: 0 },
      ]);
      expect(await later.run()).toBe(1);
      expect(handled).toEqual(["evt_next_1"]);
      expect(await deliveries()).toEqual([
        { key: "evt_next_1", status: "done", attempts: 1 },
        { key: "evt_other", status: "pending", attempts: 0 },
      ]);
      const line = log.lines.find((l) => l.msg === "processed after the response");
      expect(line).toMatchObject({ events: 1, done: 1, dead: 0, failed: 0, released: 0 });
    });

    it("a duplicate (the provider retrying) processes the original, whose own run never happened", async () => {
      const later = fakeAfter();
      const { POST } = nextRouteHandler(() => inbox, {
        after: later.after,
        processAfterResponse: { maxMs: 30_000 },
      });
      const first = await POST(post("stripe", stripeEvent("evt_dup")), params("stripe"));
      const original = ((await first.json()) as { eventId: string }).eventId;
      // The invocation died before its after-task ran (a crash, a timeout): that task never runs.
      expect(later.pending).toBe(1);
      const dropped = fakeAfter();
      const { POST: retryRoute } = nextRouteHandler(() => inbox, {
        after: dropped.after,
        processAfterResponse: { maxMs: 30_000 },
      });
      const second = await retryRoute(post("stripe", stripeEvent("evt_dup")), params("stripe"));
      const body = (await second.json()) as { eventId: string; duplicate: boolean };
      expect([second.status, body.duplicate, body.eventId]).toEqual([200, true, original]);
      expect(acceptedEventIds(second)).toEqual([original]);
      expect(await dropped.run()).toBe(1);
      expect(handled).toEqual(["evt_dup"]);
      expect(await deliveries()).toEqual([{ key: "evt_dup", status: "done", attempts: 1 }]);
    });

    it("refusals schedule nothing and store nothing to process", async () => {
      const later = fakeAfter();
      const { POST } = nextRouteHandler(() => inbox, {
        after: later.after,
        processAfterResponse: { maxMs: 30_000 },
      });
      const forged = await POST(
        post("stripe", stripeEvent("evt_forged", { secret: "whsec_not_it" })),
        params("stripe"),
      );
      const unknown = await POST(post("nope", stripeEvent("evt_unknown")), params("nope"));
      const getRequest = await POST(
        new Request("http://localhost/api/webhooks/stripe", { method: "PUT", body: "{}" }),
        params("stripe"),
      );
      expect([forged.status, unknown.status, getRequest.status]).toEqual([401, 404, 405]);
      expect(later.pending).toBe(0);
      expect(await deliveries()).toEqual([]);
    });

    it("a fixed reply (Adyen's [accepted]) still carries its events: both items are processed", async () => {
      const later = fakeAfter();
      const { POST } = nextRouteHandler(() => inbox, {
        after: later.after,
        processAfterResponse: { maxMs: 30_000 },
      });
      const body = adyenBatch(["psp_1", "psp_2"]);
      const response = await POST(
        post("adyen", { body, headers: { "content-type": "application/json" } }),
        params("adyen"),
      );
      expect([response.status, await response.text()]).toEqual([200, "[accepted]"]);
      expect(acceptedEventIds(response)).toHaveLength(2);
      expect(await later.run()).toBe(1);
      expect(handled).toHaveLength(2);
      expect((await deliveries()).map((d) => [d.status, d.attempts])).toEqual([
        ["done", 1],
        ["done", 1],
      ]);
    });

    it("a handler that throws leaves its delivery retrying; a failing run is logged, never thrown to Next", async () => {
      const later = fakeAfter();
      const { POST } = nextRouteHandler(() => inbox, {
        after: later.after,
        processAfterResponse: { maxMs: 30_000 },
      });
      const failing = await POST(
        post("stripe", stripeEvent("evt_fails", { type: "charge.failed" })),
        params("stripe"),
      );
      expect(failing.status).toBe(200);
      await later.run();
      expect(await deliveries()).toEqual([{ key: "evt_fails", status: "pending", attempts: 1 }]);
      const [attempt] = await store.rows<{ outcome: string }>("SELECT outcome FROM attempts");
      expect(attempt).toEqual({ outcome: "error" });
      expect(log.lines.find((l) => l.msg === "processed after the response")).toMatchObject({
        done: 0,
        retried: 1,
      });
      // The store closes before the task runs (the invocation is being torn down).
      await POST(post("stripe", stripeEvent("evt_closed")), params("stripe"));
      await inbox.close();
      await expect(later.run()).resolves.toBe(1);
      const failed = log.lines.find(
        (l) =>
          l.msg ===
          "processing after the response failed; the cron route or a later call runs what is left",
      );
      expect(failed).toMatchObject({ events: 1, err: { code: "HOOKINBOX_STORE_CLOSED" } });
      expect(JSON.stringify(log.lines)).not.toMatch(/in_evt_|cus_1/); // no body in any line
    });

    it("keeps the route's own options: a fixed source, a differently named segment, a catch-all", async () => {
      const fixed = nextRouteHandler(() => inbox, { source: "stripe" });
      const named = nextRouteHandler(() => inbox, { param: "provider" });
      const answers = [
        await fixed.POST(post("stripe", stripeEvent("evt_fixed")), { params: Promise.resolve({}) }),
        await named.POST(post("stripe", stripeEvent("evt_named")), {
          params: Promise.resolve({ provider: "stripe" }),
        }),
        await named.POST(post("stripe", stripeEvent("evt_catch_all")), {
          params: Promise.resolve({ provider: ["stri", "pe"] }),
        }),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 404]);
      expect((await deliveries()).map((d) => d.key)).toEqual(["evt_fixed", "evt_named"]);
    });

    it("the cron route runs what is due behind the secret: 503 unset, 401 missing or wrong, then 200 with the summary", async () => {
      const { POST } = nextRouteHandler(() => inbox);
      for (const id of ["evt_c1", "evt_c2", "evt_c3"]) {
        expect((await POST(post("stripe", stripeEvent(id)), params("stripe"))).status).toBe(200);
      }
      const unset = nextCronRoute(() => inbox, { secret: () => undefined });
      const cron = nextCronRoute(() => inbox, { secret: cronSecret, maxMs: 30_000 });
      const call = (route: typeof cron, authorization?: string) =>
        route.GET(
          new Request("http://localhost/api/cron", {
            headers: authorization ? { authorization } : {},
          }),
        );
      const answers = [
        await call(unset, `Bearer ${cronSecret}`),
        await call(cron),
        await call(cron, `Bearer ${cronSecret}x`),
        await call(cron, cronSecret),
      ];
      expect(
        await Promise.all(
          answers.map(async (a) => [a.status, ((await a.json()) as any).error.code]),
        ),
      ).toEqual([
        [503, "HOOKINBOX_CRON_SECRET_UNSET"],
        [401, "HOOKINBOX_CRON_UNAUTHORIZED"],
        [401, "HOOKINBOX_CRON_UNAUTHORIZED"],
        [401, "HOOKINBOX_CRON_UNAUTHORIZED"],
      ]);
      expect(handled).toEqual([]);
      const ok = await call(cron, `Bearer ${cronSecret}`);
      expect([ok.status, await ok.json()]).toEqual([
        200,
        { ok: true, done: 3, retried: 0, dead: 0, failed: 0, released: 0, remaining: 0 },
      ]);
      expect(handled.sort()).toEqual(["evt_c1", "evt_c2", "evt_c3"]);
      expect((await deliveries()).map((d) => d.status)).toEqual(["done", "done", "done"]);
    });

    it("the cron route reads CRON_SECRET from the environment by default", async () => {
      const cron = nextCronRoute(() => inbox);
      const call = () =>
        cron.GET(
          new Request("http://localhost/api/cron", {
            headers: { authorization: "Bearer from-the-environment-0123456789abcdef" },
          }),
        );
      vi.stubEnv("CRON_SECRET", "");
      expect((await call()).status).toBe(503);
      vi.stubEnv("CRON_SECRET", "from-the-environment-0123456789abcdef");
      expect((await call()).status).toBe(200);
      vi.unstubAllEnvs();
    });
  },
);

describe("nextRouteHandler options", () => {
  it("refuses processAfterResponse without after (HOOKINBOX_AFTER_MISSING), before any request", () => {
    let thrown: unknown;
    try {
      nextRouteHandler(() => ({}) as Inbox, { processAfterResponse: { maxMs: 1000 } });
    } catch (error) {
      thrown = error;
    }
    expect(isHookinboxError(thrown, "HOOKINBOX_AFTER_MISSING")).toBe(true);
    expect((thrown as Error).message).toContain('import { after } from "next/server"');
  });
});
