// alerts.webhook gets a destination's SSRF guard and follows no redirect: real HTTP servers on
// loopback record whether they were reached; the alert waits in a real outbox (SQLite and
// PostgreSQL), so what a pass settled is read back from the store: delivered, or due again at
// exactly its backoff with one attempt more.
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { alertClaimLeaseMs, alertRetryAt, deliverDueAlerts } from "../../src/alerts/deliver.ts";
import { resolveConfig } from "../../src/config/resolve.ts";
import { createLogger } from "../../src/log.ts";
import { openedStore } from "../audit/opened-store.ts";
import { type Receiver, type Responder, startReceiver } from "../helpers/receiver.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";

const alertSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const now = 1_700_000_000_000;
/** Past the claim lease and any backoff of a first failure. */
const dayLater = now + 86_400_000;

/** Every loopback server a test starts, closed after it (its stores close in openedStore). */
const servers: Receiver[] = [];
afterEach(() => Promise.all(servers.splice(0).map((r) => r.close())));

const server = (respond?: Responder) =>
  startReceiver(respond).then((r) => servers[servers.push(r) - 1]!);

it("resolves allowPrivateNetworks to false by default", () => {
  const config = resolveConfig(
    { alerts: { webhook: { url: "https://ops.example.com/a", secret: alertSecret } } },
    {},
  );
  expect(config.alerts.webhook?.allowPrivateNetworks).toBe(false);
});

describe.each(storeFactories())("alerts.webhook SSRF guard on $name", (factory: StoreFactory) => {
  /**
   * One pass over a fresh outbox holding one due alert (a dead letter's), sent to `url`: what it
   * delivered and logged, the alert as recorded, and the store to read the outcome back from.
   */
  async function onePass(url: string, allowPrivateNetworks?: boolean) {
    const config = resolveConfig(
      {
        alerts: {
          webhook: {
            url,
            secret: alertSecret,
            ...(allowPrivateNetworks === undefined ? {} : { allowPrivateNetworks }),
          },
        },
      },
      {},
    );
    const { db, store } = await openedStore(factory.open);
    await store.recordAlerts(
      [{ condition: "dead-letter:stripe:app", kind: "dead-letter", payload: { eventId: "evt_1" } }],
      { now, windowMs: config.alerts.windowMs },
    );
    const recorded = await db.rows<{ id: string; attempts: number }>(
      "SELECT id, attempts FROM alert_outbox",
    );
    expect(recorded).toHaveLength(1);
    const alert = recorded[0]!;
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: "warn",
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString("utf8").split("\n").filter(Boolean))
            lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    });
    const delivered = await deliverDueAlerts(store, config.alerts, logger, now);
    /** The row's state after the pass. */
    const row = async () =>
      (
        await db.rows<{ delivered_at: number | null; last_error: string | null }>(
          "SELECT delivered_at, last_error FROM alert_outbox WHERE id = ?",
          [alert.id],
        )
      )[0];
    /** Delivered: marked at `now`, and no later pass claims it again. */
    const expectDelivered = async () => {
      expect(await row()).toEqual({ delivered_at: now, last_error: null });
      expect(await store.claimDueAlerts(dayLater, 10, alertClaimLeaseMs)).toEqual([]);
    };
    /** Failed once: due again at exactly its backoff (not a ms before), one attempt more. */
    const expectRetried = async (error?: string) => {
      const retryAt = alertRetryAt(alert.attempts, now);
      const current = await row();
      expect(current?.delivered_at).toBeNull();
      if (error !== undefined) expect(current?.last_error).toBe(error);
      expect(await store.claimDueAlerts(retryAt - 1, 10, alertClaimLeaseMs)).toEqual([]);
      const due = await store.claimDueAlerts(retryAt, 10, alertClaimLeaseMs);
      expect(due.map((a) => [a.id, a.attempts])).toEqual([[alert.id, alert.attempts + 1]]);
    };
    return { delivered, lines, alert, expectDelivered, expectRetried };
  }

  it("a loopback webhook (IP literal or localhost) is refused without allowPrivateNetworks: nothing is sent, the refusal is logged with its code and retried", async () => {
    const ops = await server();
    for (const url of [
      `http://127.0.0.1:${ops.port}/alerts`,
      `http://localhost:${ops.port}/alerts`,
    ]) {
      for (const flag of [undefined, false]) {
        const pass = await onePass(url, flag);
        expect(pass.delivered).toBe(0);
        await pass.expectRetried();
        expect(pass.lines).toHaveLength(1);
        expect(pass.lines[0]).toMatchObject({
          code: "HOOKINBOX_FORWARD_ADDRESS_REFUSED",
          alertId: pass.alert.id,
          attempts: pass.alert.attempts + 1,
        });
      }
    }
    expect(ops.requests).toHaveLength(0);
  });

  it("allowPrivateNetworks: true lets the alert reach a loopback webhook, once", async () => {
    const ops = await server();
    const pass = await onePass(`http://127.0.0.1:${ops.port}/alerts`, true);
    expect(pass.delivered).toBe(1);
    await pass.expectDelivered();
    expect(pass.lines).toHaveLength(0);
    expect(ops.requests).toHaveLength(1);
    expect(ops.requests[0]!.url).toBe("/alerts");
    expect(ops.requests[0]!.headers["webhook-id"]).toBe(pass.alert.id);
  });

  it("a 302 from the webhook is not followed: a failed send, logged and retried; the server it points at is never hit", async () => {
    const target = await server();
    const redirecting = await server(() => ({
      status: 302,
      headers: { location: `${target.url}/stolen` },
    }));
    const pass = await onePass(redirecting.url, true);
    expect(pass.delivered).toBe(0);
    await pass.expectRetried("HTTP 302 (never followed)");
    expect(pass.lines).toHaveLength(1);
    expect(pass.lines[0]).toMatchObject({
      code: "HOOKINBOX_ALERT_FAILED",
      alertId: pass.alert.id,
    });
    expect(redirecting.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });
});
