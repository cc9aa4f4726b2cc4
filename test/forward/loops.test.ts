// Forwarding loops: a destination that leads back into hookinbox's own /webhooks/<source>. The
// boot check cannot see through a proxy (or a second gateway), so the hop count stops it: the
// chain ends with an exact number of events, one 508 HOOKINBOX_LOOP_DETECTED and one alert.
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { AlertNotice } from "../../src/alerts/types.ts";
import { startGateway } from "../../src/gateway/start-gateway.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { until } from "../helpers/processing.ts";
import { standardRequest } from "../helpers/signers.ts";
import { storeFactories } from "../helpers/stores.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import {
  destination,
  destinationSecret,
  receiver,
  forwardingInbox as setup,
} from "./forward-env.ts";

/** A Standard Webhooks request signed with the destination secret (what the forwarder sends). */
function signedRequest(id: string, body: string, extra: Record<string, string> = {}) {
  const date = new Date();
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(date.getTime() / 1000)),
      "webhook-signature": new Webhook(destinationSecret).sign(id, date, body),
      ...extra,
    },
    body,
  };
}

/** The hop signature a receiver computes on its own, from the spec in docs/forwarding.md. */
function expectedHopsSignature(headers: Record<string, string>): string {
  const key = Buffer.from(destinationSecret.slice("whsec_".length), "base64");
  const content = `hookinbox-hops.${headers["hookinbox-hops"]}.${headers["webhook-id"]}.${headers["webhook-timestamp"]}`;
  return `v1,${createHmac("sha256", key).update(content).digest("base64")}`;
}

describe.each(storeFactories())("forwarding loops ($name)", (factory) => {
  it("a destination leading back to its own source (through a proxy) stops at maxHops+1 events, one 508 and one alert", async () => {
    const store = await factory.open();
    onCleanup(() => store.cleanup());
    let gatewayPort = 0;
    // An alias of the gateway the boot check cannot recognise: a TCP proxy on another port.
    const proxy = await startTcpProxy(() => ({ host: "127.0.0.1", port: gatewayPort }));
    onCleanup(() => proxy.close());
    const alerts: AlertNotice[] = [];
    const maxHops = 3;
    const gateway = await startGateway(
      {
        store: store.url,
        http: { maxHops },
        sources: { loop: { provider: "standard-webhooks", secrets: [destinationSecret] } },
        destinations: {
          back: destination(`http://127.0.0.1:${proxy.port}/webhooks/loop`),
        },
        routes: [{ from: "loop", to: "back" }],
        retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 6 },
        worker: { pollInterval: "50ms" },
        alerts: { onAlert: (alert: AlertNotice) => void alerts.push(alert), window: "1h" },
      },
      { env: {}, port: 0 },
    );
    onCleanup(() => gateway.close());
    gatewayPort = Number(new URL(gateway.url).port);

    const first = signedRequest("msg_loop_1", JSON.stringify({ type: "order.paid", n: 1 }));
    const response = await fetch(`${gateway.url}/webhooks/loop`, first);
    expect(response.status).toBe(200);

    await until(
      () => store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'dead'"),
      20_000,
      "the looping delivery to be dead-lettered",
    );
    await until(() => alerts.length > 0, 10_000, "the loop alert");
    // Nothing is left running: the chain ended.
    await until(
      async () =>
        (await store.count(
          "SELECT count(*) AS n FROM deliveries WHERE status IN ('pending', 'running', 'blocked')",
        )) === 0,
      10_000,
      "no unfinished delivery",
    );

    // The provider's event and maxHops forwarded copies: 4 events, each forwarded once.
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(maxHops + 1);
    expect(
      await store.rows<{ status: string; n: number }>(
        "SELECT status, count(*) AS n FROM deliveries GROUP BY status ORDER BY status",
      ),
    ).toEqual([
      { status: "dead", n: 1 },
      { status: "done", n: maxHops },
    ]);
    // The copy at maxHops was refused: one 508 with the code, stored as a rejection only.
    await until(
      () => store.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL"),
      5_000,
      "the rejected receipt",
    );
    expect(await store.rows("SELECT status, code FROM receipts WHERE event_id IS NULL")).toEqual([
      { status: 508, code: "HOOKINBOX_LOOP_DETECTED" },
    ]);
    const [dead] = await store.rows<{ id: string; attempts: number; last_error: string }>(
      "SELECT id, attempts, last_error FROM deliveries WHERE status = 'dead'",
    );
    // Not retried: another try would get the same answer.
    expect(dead!.attempts).toBe(1);
    expect(dead!.last_error).toMatch(/^HOOKINBOX_LOOP_DETECTED: /);
    const [attempt] = await store.rows<{ response_status: number; response_body: string }>(
      "SELECT response_status, response_body FROM attempts WHERE delivery_id = ?",
      [dead!.id],
    );
    expect(attempt!.response_status).toBe(508);
    expect(JSON.parse(attempt!.response_body).error.code).toBe("HOOKINBOX_LOOP_DETECTED");

    // One alert for the loop, not one per request, and no separate dead-letter alert.
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      type: "hookinbox.alert.loop-detected",
      kind: "loop-detected",
      condition: "loop-detected:loop:back",
      count: 1,
    });
    expect(await store.count("SELECT count(*) AS n FROM alert_outbox")).toBe(1);
    // Still exact after the alert went out: nothing else arrives.
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(maxHops + 1);
  });

  it("a forward carries hookinbox-hops one more than the event arrived with, signed with the destination's secret", async () => {
    const app = await receiver();
    const env = await setup(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    for (const [id, hops] of [
      ["msg_hops_none", undefined],
      ["msg_hops_two", "2"],
    ] as const) {
      const signed = standardRequest(id, JSON.stringify({ type: "t", id }));
      const result = await env.inbox.handle({
        method: "POST",
        url: "/webhooks/std",
        headers: { ...signed.headers, ...(hops === undefined ? {} : { "hookinbox-hops": hops }) },
        body: new TextEncoder().encode(signed.body),
      });
      expect(result.status).toBe(200);
    }
    await until(() => app.requests.length === 2, 10_000, "two forwards");
    await worker.stop();
    const byId = new Map(app.requests.map((r) => [JSON.parse(r.body.toString()).id, r.headers]));
    expect(byId.get("msg_hops_none")!["hookinbox-hops"]).toBe("1");
    expect(byId.get("msg_hops_two")!["hookinbox-hops"]).toBe("3");
    for (const headers of byId.values()) {
      expect(headers["hookinbox-hops-signature"]).toBe(expectedHopsSignature(headers));
      // The Standard Webhooks signature is untouched: a stock receiver still verifies.
      expect(headers["webhook-signature"]).toMatch(/^v1,/);
    }
  });

  it("ingest: hops at the default maxHops (3) are stored, over it (or not a number) 508 with nothing stored, unsigned still 401", async () => {
    const store = await factory.open();
    onCleanup(() => store.cleanup());
    const gateway = await startGateway(
      {
        store: store.url,
        sources: { loop: { provider: "standard-webhooks", secrets: [destinationSecret] } },
      },
      { env: {}, port: 0 },
    );
    onCleanup(() => gateway.close());
    const send = async (id: string, headers: Record<string, string>, forge = false) => {
      const request = signedRequest(id, JSON.stringify({ id }), headers);
      if (forge) request.headers["webhook-signature"] = `v1,${Buffer.alloc(32).toString("base64")}`;
      const response = await fetch(`${gateway.url}/webhooks/loop`, request);
      const json = (await response.json()) as { error?: { code: string; message: string } };
      return { status: response.status, code: json.error?.code ?? null };
    };
    expect(await send("msg_h0", {})).toEqual({ status: 200, code: null });
    expect(await send("msg_h3", { "hookinbox-hops": "3" })).toEqual({ status: 200, code: null });
    expect(await send("msg_h4", { "hookinbox-hops": "4" })).toEqual({
      status: 508,
      code: "HOOKINBOX_LOOP_DETECTED",
    });
    expect(await send("msg_hx", { "hookinbox-hops": "two" })).toEqual({
      status: 508,
      code: "HOOKINBOX_LOOP_DETECTED",
    });
    expect(await send("msg_hf", { "hookinbox-hops": "9" }, true)).toEqual({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(2);
    await until(
      async () =>
        (await store.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL")) === 3,
      5_000,
      "three rejected receipts",
    );
    expect(
      await store.count(
        "SELECT count(*) AS n FROM receipts WHERE code = 'HOOKINBOX_LOOP_DETECTED' AND status = 508",
      ),
    ).toBe(2);
  });
});
