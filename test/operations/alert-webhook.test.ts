// Alert delivery: alerts.webhook receives Standard Webhooks messages from the store's outbox,
// verified here with the `standardwebhooks` package on a real loopback receiver, on both stores.
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { alertClaimLeaseMs } from "../../src/alerts/deliver.ts";
import type { AlertNotice } from "../../src/alerts/types.ts";
import { resolveConfig } from "../../src/config/resolve.ts";
import { PermanentError } from "../../src/handlers/errors.ts";
import { destination, forwardingInbox, receiver } from "../forward/forward-env.ts";
import { hangingEffect, manualClock, processingInbox, until } from "../helpers/processing.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../helpers/receiver.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

const alertSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface AlertMessage {
  readonly type: string;
  readonly data: {
    readonly alertId: string;
    readonly condition: string;
    readonly kind: string;
    readonly count: number;
    readonly details: Record<string, unknown>;
  };
}

/** Verifies one received alert with the official package and returns it with its webhook-id. */
function verified(request: ReceivedRequest): AlertMessage & { webhookId: string } {
  const message = new Webhook(alertSecret).verify(
    request.body.toString("utf8"),
    request.headers,
  ) as AlertMessage;
  return { ...message, webhookId: request.headers["webhook-id"] ?? "" };
}

/** The 2xx-answered alerts (what the operator actually got). */
function delivered(receiver: Receiver, statuses: number[]) {
  return receiver.requests.filter((_, index) => (statuses[index] ?? 200) < 300).map(verified);
}

describe("alerts config", () => {
  it("resolves the webhook, thresholds and a 5m default window", () => {
    const config = resolveConfig(
      {
        alerts: {
          webhook: { url: "https://ops.example.com/a", secret: { env: "ALERT_SECRET" } },
          thresholds: { oldestUnprocessedAge: "10m", duplicateRate: 0.5 },
        },
      },
      { ALERT_SECRET: alertSecret },
    );
    expect(config.alerts.webhook?.url).toBe("https://ops.example.com/a");
    expect(config.alerts.webhook?.secret.value).toBe(alertSecret);
    expect(config.alerts.thresholds).toEqual({
      oldestUnprocessedAgeMs: 600_000,
      duplicateRate: 0.5,
    });
    expect(config.alerts.windowMs).toBe(300_000);
  });

  it("refuses a secret that is not a Standard Webhooks secret, and a rate above 1", () => {
    const thrown = (config: unknown) => {
      try {
        resolveConfig(config, {});
      } catch (error) {
        return error as { code: string; message: string };
      }
      throw new Error("expected the config to be refused");
    };
    const secret = thrown({
      alerts: { webhook: { url: "https://ops.example.com/a", secret: "plain" } },
    });
    expect(secret.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(secret.message).toContain(
      'alerts.webhook.secret: expected a Standard Webhooks secret ("whsec_" followed by base64)',
    );
    const rate = thrown({ alerts: { thresholds: { duplicateRate: 1.5 } } });
    expect(rate.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(rate.message).toContain("alerts.thresholds.duplicateRate");
  });
});

const failing = async () => {
  throw new PermanentError("order does not exist");
};

describe.each(storeFactories())("alert webhook on $name", (factory) => {
  async function setup(input: {
    alerts: Record<string, unknown>;
    handler?: (event: { payload: unknown }) => Promise<void>;
    retry?: Record<string, unknown>;
    statuses?: number[];
  }) {
    const store: TestStore = await factory.open();
    cleanups.push(() => store.cleanup());
    const statuses = input.statuses ?? [];
    const receiver = await startReceiver((_, index) => ({ status: statuses[index] ?? 200 }));
    cleanups.push(() => receiver.close());
    const clock = manualClock();
    const env = processingInbox(
      {
        store: store.url,
        handlers: {
          "std:*": input.handler ?? failing,
        },
        ...(input.retry ? { retry: input.retry } : {}),
        worker: { pollInterval: "20ms", lease: "30s" },
        alerts: {
          webhook: { url: receiver.url, secret: alertSecret, allowPrivateNetworks: true },
          ...input.alerts,
        },
      },
      { now: clock.now, random: () => 1 },
    );
    cleanups.push(env.cleanup);
    const outbox = () =>
      store.rows<{ id: string; count: number; attempts: number; delivered_at: number | null }>(
        "SELECT id, count, attempts, delivered_at FROM alert_outbox ORDER BY slot_at, id",
      );
    /** Waits until no alert is due or claimed by a pass in flight (due again one lease ahead). */
    const settled = () =>
      until(async () => {
        const rows = await store.rows<{ n: number }>(
          `SELECT count(*) AS n FROM alert_outbox
           WHERE delivered_at IS NULL AND (due_at <= ? OR due_at = ?)`,
          [clock.now(), clock.now() + alertClaimLeaseMs],
        );
        return rows[0]?.n === 0;
      });
    /** Another inbox (a restarted process) on the same store and clock, with the same handler. */
    const reopen = () => {
      const again = processingInbox(
        {
          store: store.url,
          handlers: { "std:*": input.handler ?? failing },
          worker: { pollInterval: "20ms", lease: "30s" },
          alerts: {
            webhook: { url: receiver.url, secret: alertSecret, allowPrivateNetworks: true },
            ...input.alerts,
          },
        },
        { now: clock.now, random: () => 1 },
      );
      cleanups.push(again.cleanup);
      return again;
    };
    return { env, receiver, clock, statuses, outbox, settled, store, reopen };
  }

  it("sends exactly one signed alert per dead letter, each with its own webhook-id", async () => {
    const t = await setup({ alerts: { window: "0s" } });
    t.env.inbox.startWorker();
    for (const id of ["msg_a", "msg_b", "msg_c"]) await t.env.post(id, { type: "t" });
    await until(async () => (await t.outbox()).length === 3, 10_000, "3 outbox rows");
    await t.settled();
    const alerts = delivered(t.receiver, t.statuses);
    expect(alerts).toHaveLength(3);
    expect(t.receiver.requests).toHaveLength(3);
    expect(new Set(alerts.map((a) => a.webhookId)).size).toBe(3);
    expect(new Set(alerts.map((a) => a.data.details.deliveryId)).size).toBe(3);
    for (const alert of alerts) {
      expect(alert.type).toBe("hookinbox.alert.dead-letter");
      expect(alert.data.count).toBe(1);
      expect(alert.data.condition).toBe("dead-letter:std:std:*");
      expect(alert.data.alertId).toBe(alert.webhookId);
      expect(alert.data.details.lastError).toBe("PermanentError: order does not exist");
    }
    // The dead letters are marked alerted in the transaction that wrote the rows: no second pass.
    expect(
      await t.store.count("SELECT count(*) AS n FROM deliveries WHERE alerted_at IS NOT NULL"),
    ).toBe(3);
    expect(await t.outbox()).toHaveLength(3);
  });

  it("folds a burst of one condition into one alert per window with the exact count", async () => {
    const t = await setup({ alerts: { window: "10s" } });
    t.env.inbox.startWorker();
    for (const id of ["msg_1", "msg_2", "msg_3", "msg_4", "msg_5"]) {
      await t.env.post(id, { type: "t" });
    }
    await until(
      async () =>
        (await t.store.count(
          "SELECT count(*) AS n FROM deliveries WHERE alerted_at IS NOT NULL",
        )) === 5,
      10_000,
      "5 dead letters alerted",
    );
    await t.settled();
    // The first went out at once; the other four wait for the window's end in one alert.
    expect(delivered(t.receiver, t.statuses).map((a) => a.data.count)).toEqual([1]);
    expect((await t.outbox()).map((row) => row.count)).toEqual([1, 4]);
    t.clock.advance(10_000);
    await until(() => t.receiver.requests.length === 2, 10_000, "the folded alert");
    await t.settled();
    const alerts = delivered(t.receiver, t.statuses);
    expect(alerts.map((a) => a.data.count)).toEqual([1, 4]);
    expect(new Set(alerts.map((a) => a.webhookId)).size).toBe(2);
    expect(t.receiver.requests).toHaveLength(2);
  });

  it("retries a failing receiver with the same webhook-id until it answers 2xx, once", async () => {
    const t = await setup({ alerts: { window: "0s" }, statuses: [500, 503, 200] });
    t.env.inbox.startWorker();
    await t.env.post("msg_retry", { type: "t" });
    await until(() => t.receiver.requests.length === 1, 10_000, "first attempt");
    // Backoff: 5s after the first failure, 10s after the second.
    await until(async () => (await t.outbox())[0]?.attempts === 1);
    t.clock.advance(5_000);
    await until(() => t.receiver.requests.length === 2, 10_000, "second attempt");
    await until(async () => (await t.outbox())[0]?.attempts === 2);
    t.clock.advance(10_000);
    await until(() => t.receiver.requests.length === 3, 10_000, "third attempt");
    await t.settled();
    const ids = t.receiver.requests.map((r) => verified(r).webhookId);
    expect(new Set(ids).size).toBe(1);
    expect(delivered(t.receiver, t.statuses)).toHaveLength(1);
    const rows = await t.outbox();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.attempts).toBe(3);
    expect(rows[0]?.delivered_at).not.toBeNull();
  });

  it("keeps an unanswered alert across a restart and sends it again with the same webhook-id", async () => {
    const t = await setup({ alerts: { window: "0s" }, statuses: [500, 200] });
    t.env.inbox.startWorker();
    await t.env.post("msg_restart", { type: "t" });
    await until(async () => (await t.outbox())[0]?.attempts === 1, 10_000, "first attempt");
    await t.env.cleanup();
    expect(t.receiver.requests).toHaveLength(1);
    t.clock.advance(5_000);
    const restarted = t.reopen();
    restarted.inbox.startWorker();
    await until(() => t.receiver.requests.length === 2, 10_000, "attempt after restart");
    await t.settled();
    const ids = t.receiver.requests.map((r) => verified(r).webhookId);
    expect(ids[0]).toBe(ids[1]);
    expect(delivered(t.receiver, t.statuses)).toHaveLength(1);
    expect(await t.outbox()).toHaveLength(1);
  });

  it("sends one alert when a destination answers 410 Gone and is disabled", async () => {
    const app = await receiver(() => ({ status: 410 }));
    const ops = await receiver();
    const env = await forwardingInbox(
      factory,
      { app: destination(app.url) },
      {
        alerts: {
          webhook: { url: ops.url, secret: alertSecret, allowPrivateNetworks: true },
          window: "0s",
        },
      },
    );
    env.inbox.startWorker();
    const { eventId } = await env.post("msg_gone", { type: "t" });
    await until(() => ops.requests.length === 1, undefined, "the disabled alert");
    const alert = verified(ops.requests[0]!);
    expect(alert.type).toBe("hookinbox.alert.destination-disabled");
    expect(alert.data).toMatchObject({ condition: "destination-disabled:app", count: 1 });
    expect(alert.data.details).toMatchObject({ destination: "app", eventId });
    await until(
      async () =>
        (await env.store.count(
          "SELECT count(*) AS n FROM alert_outbox WHERE delivered_at IS NOT NULL",
        )) === 1,
    );
    expect(await env.store.count("SELECT count(*) AS n FROM alert_outbox")).toBe(1);
    expect(app.requests).toHaveLength(1);
  });

  it("alerts once when the oldest unprocessed age crosses its threshold and once when it recovers", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const t = await setup({
      alerts: { window: "1m", thresholds: { oldestUnprocessedAge: "5s" } },
      handler: () => gate,
    });
    t.env.inbox.startWorker();
    await t.env.post("msg_slow", { type: "t" });
    t.clock.advance(6_000);
    await until(() => t.receiver.requests.length === 1, 10_000, "crossed alert");
    await t.settled();
    release();
    await until(() => t.receiver.requests.length === 2, 10_000, "recovered alert");
    await t.settled();
    const alerts = delivered(t.receiver, t.statuses);
    expect(alerts.map((a) => a.type)).toEqual([
      "hookinbox.alert.threshold-crossed",
      "hookinbox.alert.threshold-recovered",
    ]);
    expect(alerts.map((a) => a.data.details.metric)).toEqual([
      "oldest-unprocessed-age",
      "oldest-unprocessed-age",
    ]);
    expect(alerts[0]?.data.details.value).toBe(6_000);
    expect(alerts[1]?.data.details.value).toBe(0);
    // Later passes see no change: still exactly two outbox rows.
    await until(async () => (await t.outbox()).length === 2);
    expect(t.receiver.requests).toHaveLength(2);
  });

  it("alerts once when the duplicate rate crosses its threshold and once when it recovers", async () => {
    const t = await setup({
      alerts: { window: "10s", thresholds: { duplicateRate: 0.5 } },
      handler: async () => undefined,
    });
    t.env.inbox.startWorker();
    await t.env.post("msg_dup", { type: "t" });
    await t.env.post("msg_dup", { type: "t" });
    await t.env.post("msg_dup", { type: "t" });
    await until(() => t.receiver.requests.length === 1, 10_000, "crossed alert");
    await t.settled();
    // The three receipts leave the 10s window: the rate is 0 again.
    t.clock.advance(11_000);
    await until(() => t.receiver.requests.length === 2, 10_000, "recovered alert");
    await t.settled();
    const alerts = delivered(t.receiver, t.statuses);
    expect(alerts.map((a) => [a.type, a.data.count])).toEqual([
      ["hookinbox.alert.threshold-crossed", 1],
      ["hookinbox.alert.threshold-recovered", 1],
    ]);
    expect(alerts[0]?.data.details).toMatchObject({
      metric: "duplicate-rate",
      value: 2 / 3,
      receipts: 3,
    });
    expect(alerts[1]?.data.details).toMatchObject({ value: 0, receipts: 0 });
    expect(await t.outbox()).toHaveLength(2);
  });
  it("sends each alert once when two processes share the outbox", async () => {
    const t = await setup({ alerts: { window: "0s" } });
    const other = t.reopen();
    // Both workers pass over the outbox; only one claims each alert.
    t.env.inbox.startWorker({ workerId: "wrk_one" });
    other.inbox.startWorker({ workerId: "wrk_two" });
    const ids = ["msg_1", "msg_2", "msg_3", "msg_4", "msg_5", "msg_6"];
    for (const id of ids) await t.env.post(id, { type: "t" });
    await until(async () => (await t.outbox()).length === 6, 10_000, "6 outbox rows");
    await t.settled();
    await until(
      async () =>
        (await t.store.count(
          "SELECT count(*) AS n FROM alert_outbox WHERE delivered_at IS NOT NULL",
        )) === 6,
    );
    expect(t.receiver.requests).toHaveLength(6);
    expect(new Set(t.receiver.requests.map((r) => verified(r).webhookId)).size).toBe(6);
    expect((await t.outbox()).map((row) => row.attempts)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it("sends an alert claimed by a process that died once its claim lease ends", async () => {
    const t = await setup({ alerts: { window: "0s" } });
    // No worker yet: the dead letter comes from a first worker that is stopped before it alerts.
    const first = t.env.inbox.startWorker({ workerId: "wrk_first" });
    await t.env.post("msg_orphan", { type: "t" });
    await until(() => t.receiver.requests.length === 1, 10_000, "the first alert");
    await first.stop(1_000);
    // A second alert, claimed by a "process" that dies before sending it.
    await t.env.inbox.store.recordAlerts(
      [{ condition: "test:orphan", kind: "dead-letter", payload: { note: "orphan" } }],
      { now: t.clock.now(), windowMs: 0 },
    );
    const claimed = await t.env.inbox.store.claimDueAlerts(t.clock.now(), 10, alertClaimLeaseMs);
    expect(claimed.map((a) => a.condition)).toEqual(["test:orphan"]);
    const again = t.reopen();
    again.inbox.startWorker({ workerId: "wrk_second" });
    t.clock.advance(alertClaimLeaseMs - 1);
    // Still leased: a few worker passes send nothing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.receiver.requests).toHaveLength(1);
    t.clock.advance(1);
    await until(() => t.receiver.requests.length === 2, 10_000, "the orphaned alert");
    const alert = verified(t.receiver.requests[1]!);
    expect(alert.data.condition).toBe("test:orphan");
    expect(alert.webhookId).toBe(claimed[0]?.id);
  });

  it("sends one alert per held effect", async () => {
    const store: TestStore = await factory.open();
    cleanups.push(() => store.cleanup());
    const ops = await startReceiver(() => ({ status: 200 }));
    cleanups.push(() => ops.close());
    const clock = manualClock();
    const { handler, release, makeHeld } = hangingEffect();
    cleanups.push(async () => release());
    const env = processingInbox(
      {
        store: store.url,
        handlers: { "std:*": handler },
        worker: { pollInterval: "20ms", lease: "1s" },
        alerts: {
          webhook: { url: ops.url, secret: alertSecret, allowPrivateNetworks: true },
          window: "0s",
        },
      },
      { now: clock.now, random: () => 1 },
    );
    cleanups.push(env.cleanup);
    await makeHeld(env, clock);
    // Two conditions, one alert each: the held effect, and its delivery, dead until a human decides.
    await until(() => ops.requests.length === 2, 10_000, "the held-effect and dead-letter alerts");
    const alerts = ops.requests.map(verified).sort((x, y) => x.type.localeCompare(y.type));
    expect(alerts.map((a) => [a.type, a.data.condition, a.data.count])).toEqual([
      ["hookinbox.alert.dead-letter", "dead-letter:std:std:*", 1],
      ["hookinbox.alert.effect-held", "effect-held:std:*:ship", 1],
    ]);
    expect(alerts[1]?.data.details).toMatchObject({ name: "ship", target: "std:*" });
    await until(
      async () =>
        (await store.count(
          "SELECT count(*) AS n FROM alert_outbox WHERE delivered_at IS NOT NULL",
        )) === 2,
    );
    expect(ops.requests).toHaveLength(2);
    expect(await store.count("SELECT count(*) AS n FROM alert_outbox")).toBe(2);
  });

  /** Makes every insert into alert_outbox fail (a full disk, a lost connection) until dropped. */
  async function refuseOutbox(store: TestStore): Promise<() => Promise<void>> {
    if (store.url.startsWith("sqlite:")) {
      await store.exec(`CREATE TRIGGER refuse_alert BEFORE INSERT ON alert_outbox
        BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`);
      return () => store.exec("DROP TRIGGER refuse_alert");
    }
    await store.exec(`CREATE OR REPLACE FUNCTION refuse_alert() RETURNS trigger LANGUAGE plpgsql
      AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$`);
    await store.exec(`CREATE TRIGGER refuse_alert BEFORE INSERT ON alert_outbox
      FOR EACH ROW EXECUTE FUNCTION refuse_alert()`);
    return () => store.exec("DROP TRIGGER refuse_alert ON alert_outbox");
  }

  const outboxRows = (store: TestStore) =>
    store.rows<{ condition: string; kind: string; payload: string | Record<string, unknown> }>(
      "SELECT condition, kind, payload FROM alert_outbox ORDER BY slot_at, id",
    );
  const parsed = (payload: string | Record<string, unknown>) =>
    typeof payload === "string" ? (JSON.parse(payload) as Record<string, unknown>) : payload;

  it("commits a held effect and its alert in one transaction, or neither", async () => {
    const t = await setup({ alerts: { window: "0s" }, handler: async () => undefined });
    const { eventId } = await t.env.post("msg_tx", { type: "t" });
    const store = t.env.inbox.store;
    const start = t.clock.now();
    const claim = (claimant: string, at: number) =>
      store.claimEffect({
        eventId,
        target: "std:*",
        name: "ship",
        claimant,
        onStale: "hold",
        staleAfterMs: 1_000,
        now: at,
        heldAlert: {
          occurrences: [
            { condition: "effect-held:std:*:ship", kind: "effect-held", payload: { name: "ship" } },
          ],
          windowMs: 0,
        },
      });
    // The claimant never ran (no attempt row): once older than staleAfter its claim is stale.
    expect((await claim("att_first", start)).state).toBe("claimed");
    const allow = await refuseOutbox(t.store);
    await expect(claim("att_second", start + 5_000)).rejects.toThrow();
    // The outbox refused the alert, so the hold rolled back with it.
    expect(await t.store.rows("SELECT status FROM effects")).toEqual([{ status: "processing" }]);
    expect(await outboxRows(t.store)).toEqual([]);
    await allow();
    const held = await claim("att_second", start + 5_000);
    expect(held).toMatchObject({ state: "held", newlyHeld: true });
    // No worker runs: the row was written by the claim's own transaction, nothing after it.
    const rows = await outboxRows(t.store);
    expect(rows.map((row) => [row.condition, row.kind])).toEqual([
      ["effect-held:std:*:ship", "effect-held"],
    ]);
    expect(parsed(rows[0]!.payload)).toEqual({ name: "ship", effectId: held.effectId });
    // Finding it held again records nothing more.
    expect(await claim("att_third", start + 6_000)).toMatchObject({ newlyHeld: false });
    expect(await outboxRows(t.store)).toHaveLength(1);
  });

  it("commits a disabled destination and its alert in one transaction, or neither", async () => {
    const t = await setup({ alerts: { window: "0s" }, handler: async () => undefined });
    const store = t.env.inbox.store;
    await t.env.post("msg_boot", { type: "t" });
    await store.ensureDestinations(["app"]);
    const alert = {
      occurrences: [
        {
          condition: "destination-disabled:app",
          kind: "destination-disabled",
          payload: { destination: "app" },
        },
      ],
      windowMs: 0,
    };
    const disable = () => store.setDestinationState("app", "disabled", "410", t.clock.now(), alert);
    const allow = await refuseOutbox(t.store);
    await expect(disable()).rejects.toThrow();
    expect((await store.listDestinationStates()).map((row) => row.state)).toEqual(["active"]);
    expect(await outboxRows(t.store)).toEqual([]);
    await allow();
    expect((await disable())?.state).toBe("disabled");
    expect((await outboxRows(t.store)).map((row) => row.condition)).toEqual([
      "destination-disabled:app",
    ]);
    // An unknown destination changes nothing and records nothing.
    expect(await store.setDestinationState("nope", "disabled", "410", t.clock.now(), alert)).toBe(
      null,
    );
    expect(await outboxRows(t.store)).toHaveLength(1);
  });

  it("calls alerts.onAlert once per condition per window with the count, apart from the webhook", async () => {
    const notices: AlertNotice[] = [];
    let failOnce = true;
    const t = await setup({
      alerts: {
        window: "10s",
        onAlert: async (notice: AlertNotice) => {
          if (failOnce) {
            failOnce = false;
            throw new Error("pager down");
          }
          notices.push(notice);
        },
      },
    });
    t.env.inbox.startWorker();
    for (const id of ["msg_1", "msg_2", "msg_3"]) await t.env.post(id, { type: "t" });
    // One row per sink: the first dead letter at once, the other two folded into the next slot.
    await until(
      async () => (await t.outbox()).map((row) => row.count).join() === "1,1,2,2",
      10_000,
      "both sinks' rows",
    );
    await until(() => t.receiver.requests.length === 1, 10_000, "the first webhook alert");
    // The function threw once: its row retries 5 s later, and the webhook is not sent again.
    await until(async () =>
      (await t.outbox()).some((row) => row.attempts === 1 && !row.delivered_at),
    );
    t.clock.advance(5_000);
    await until(() => notices.length === 1, 10_000, "the retried function alert");
    t.clock.advance(5_000);
    await until(() => notices.length === 2, 10_000, "the folded function alert");
    await until(() => t.receiver.requests.length === 2, 10_000, "the folded webhook alert");
    await t.settled();
    expect(notices.map((n) => [n.type, n.condition, n.count])).toEqual([
      ["hookinbox.alert.dead-letter", "dead-letter:std:std:*", 1],
      ["hookinbox.alert.dead-letter", "dead-letter:std:std:*", 2],
    ]);
    expect(new Set(notices.map((n) => n.alertId)).size).toBe(2);
    expect(delivered(t.receiver, t.statuses).map((a) => a.data.count)).toEqual([1, 2]);
    expect(t.receiver.requests).toHaveLength(2);
  });

  it("calls alerts.onAlert when a threshold is crossed and when it recovers, once each", async () => {
    const notices: AlertNotice[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store: TestStore = await factory.open();
    cleanups.push(() => store.cleanup());
    const clock = manualClock();
    const env = processingInbox(
      {
        store: store.url,
        handlers: { "std:*": () => gate },
        worker: { pollInterval: "20ms", lease: "30s" },
        // The function alone, no webhook: the outbox runs for it all the same.
        alerts: {
          window: "1m",
          thresholds: { oldestUnprocessedAge: "5s" },
          onAlert: (notice: AlertNotice) => void notices.push(notice),
        },
      },
      { now: clock.now, random: () => 1 },
    );
    cleanups.push(env.cleanup);
    env.inbox.startWorker();
    await env.post("msg_slow", { type: "t" });
    clock.advance(6_000);
    await until(() => notices.length === 1, 10_000, "crossed");
    release();
    await until(() => notices.length === 2, 10_000, "recovered");
    await until(
      async () =>
        (await store.count(
          "SELECT count(*) AS n FROM alert_outbox WHERE delivered_at IS NOT NULL",
        )) === 2,
    );
    expect(notices.map((n) => [n.kind, n.condition, n.count])).toEqual([
      ["threshold-crossed", "threshold:oldest-unprocessed-age:crossed", 1],
      ["threshold-recovered", "threshold:oldest-unprocessed-age:recovered", 1],
    ]);
    expect(notices[0]?.details).toMatchObject({ metric: "oldest-unprocessed-age", value: 6_000 });
    expect(await store.count("SELECT count(*) AS n FROM alert_outbox")).toBe(2);
  });

  it("prunes delivered alerts after 7 days and keeps undelivered ones", async () => {
    const t = await setup({ alerts: { window: "0s" }, statuses: [200, 500] });
    t.env.inbox.startWorker();
    await t.env.post("msg_old", { type: "t" });
    await until(() => t.receiver.requests.length === 1, 10_000, "the first alert");
    await t.settled();
    await t.env.post("msg_failing", { type: "t" });
    await until(async () => (await t.outbox())[1]?.attempts === 1, 10_000, "failed second alert");
    await t.env.cleanup();
    t.clock.advance(8 * 86_400_000);
    // Its retry is due now and fails again (500 only once: the receiver answers 200 after).
    const restarted = t.reopen();
    restarted.inbox.startWorker();
    await until(() => t.receiver.requests.length === 3, 10_000, "the retried alert");
    await t.settled();
    const rows = await t.outbox();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.attempts).toBe(2);
    // (Signed 8 days ahead of the wall clock: the webhook-id is what is compared.)
    expect(t.receiver.requests[2]?.headers["webhook-id"]).toBe(rows[0]?.id);
  });
});
