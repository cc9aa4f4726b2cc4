// alerts.webhook gets a destination's SSRF guard and follows no redirect: real HTTP servers on
// loopback record whether they were reached; the outbox is a recording stand-in so every settle
// (delivered, or failed and retried) is seen exactly.
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { alertRetryAt, deliverDueAlerts } from "../../src/alerts/deliver.ts";
import { resolveConfig } from "../../src/config/resolve.ts";
import { createLogger } from "../../src/log.ts";
import type { OutboxAlert } from "../../src/store/alert-types.ts";
import { type Receiver, type Responder, startReceiver } from "../helpers/receiver.ts";

const alertSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const now = 1_700_000_000_000;

/** Every loopback server a test starts, closed after it. */
const servers: Receiver[] = [];
afterEach(() => Promise.all(servers.splice(0).map((r) => r.close())));

const server = (respond?: Responder) =>
  startReceiver(respond).then((r) => servers[servers.push(r) - 1]!);

const alert: OutboxAlert = {
  id: "alr_01J0000000000000000000000",
  condition: "dead-letter:stripe:app",
  kind: "dead-letter",
  payload: JSON.stringify({ eventId: "evt_1" }),
  count: 1,
  createdAt: now,
  lastAt: now,
  attempts: 2,
};

/** One pass of the outbox with one due alert, sent to `url`; what was settled and logged. */
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
  const settled: Array<{ id: string; outcome: Record<string, unknown> }> = [];
  const store = {
    claimDueAlerts: async () => [alert],
    pruneAlerts: async () => 0,
    settleAlert: async (id: string, outcome: Record<string, unknown>) => {
      settled.push({ id, outcome });
    },
  };
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
  const delivered = await deliverDueAlerts(
    store as unknown as Parameters<typeof deliverDueAlerts>[0],
    config.alerts,
    logger,
    now,
  );
  return { delivered, settled, lines };
}

describe("alerts.webhook SSRF guard", () => {
  it("resolves allowPrivateNetworks to false by default", () => {
    const config = resolveConfig(
      { alerts: { webhook: { url: "https://ops.example.com/a", secret: alertSecret } } },
      {},
    );
    expect(config.alerts.webhook?.allowPrivateNetworks).toBe(false);
  });

  it("a loopback webhook (IP literal or localhost) is refused without allowPrivateNetworks: nothing is sent, the refusal is logged with its code and retried", async () => {
    const ops = await server();
    for (const url of [
      `http://127.0.0.1:${ops.port}/alerts`,
      `http://localhost:${ops.port}/alerts`,
    ]) {
      for (const flag of [undefined, false]) {
        const pass = await onePass(url, flag);
        expect(pass.delivered).toBe(0);
        expect(pass.settled).toHaveLength(1);
        expect(pass.settled[0]!.outcome).toMatchObject({
          delivered: false,
          retryAt: alertRetryAt(alert.attempts, now),
        });
        expect(pass.lines).toHaveLength(1);
        expect(pass.lines[0]).toMatchObject({
          code: "HOOKINBOX_FORWARD_ADDRESS_REFUSED",
          alertId: alert.id,
          attempts: 3,
        });
      }
    }
    expect(ops.requests).toHaveLength(0);
  });

  it("allowPrivateNetworks: true lets the alert reach a loopback webhook, once", async () => {
    const ops = await server();
    const pass = await onePass(`http://127.0.0.1:${ops.port}/alerts`, true);
    expect(pass.delivered).toBe(1);
    expect(pass.settled).toEqual([{ id: alert.id, outcome: { delivered: true, now } }]);
    expect(pass.lines).toHaveLength(0);
    expect(ops.requests).toHaveLength(1);
    expect(ops.requests[0]!.url).toBe("/alerts");
    expect(ops.requests[0]!.headers["webhook-id"]).toBe(alert.id);
  });

  it("a 302 from the webhook is not followed: a failed send, logged and retried; the server it points at is never hit", async () => {
    const target = await server();
    const redirecting = await server(() => ({
      status: 302,
      headers: { location: `${target.url}/stolen` },
    }));
    const pass = await onePass(redirecting.url, true);
    expect(pass.delivered).toBe(0);
    expect(pass.settled).toHaveLength(1);
    expect(pass.settled[0]!.outcome).toEqual({
      delivered: false,
      retryAt: alertRetryAt(alert.attempts, now),
      error: "HTTP 302 (never followed)",
    });
    expect(pass.lines).toHaveLength(1);
    expect(pass.lines[0]).toMatchObject({ code: "HOOKINBOX_ALERT_FAILED" });
    expect(redirecting.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });
});
