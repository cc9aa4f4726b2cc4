import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DestinationDisabledAlert } from "../../src/alerts/types.ts";
import type { DestinationStatus } from "../../src/forward/destination-admin.ts";
import type { DeliveryPage } from "../../src/store/queue-types.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { until } from "../helpers/processing.ts";
import type { Receiver } from "../helpers/receiver.ts";
import { secrets } from "../helpers/signers.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";
import { destination, forwardingInbox, receiver } from "./forward-env.ts";

// Destinations from the admin API and the CLI: state (paused, disabled by a 410, circuit), queue
// counts, pause/resume/enable, deliveries per destination and replay to one destination, against
// a worker forwarding to a real HTTP receiver on loopback.

const token = testAdminToken;

async function setup(factory: StoreFactory, app: Receiver, extra: Record<string, unknown> = {}) {
  const destinations = { app: destination(app.url) };
  const env = await forwardingInbox(factory, destinations, { admin: { token }, ...extra });
  // The same config for the CLI (a JSON file: no functions), with the source the inbox has.
  const configPath = join(env.dir, "hookinbox.config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      store: env.store.url,
      destinations,
      routes: [{ from: "std", to: ["app"] }],
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
    }),
  );
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await env.inbox.handle({
      method,
      url: path,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: new TextEncoder().encode(body === undefined ? "" : JSON.stringify(body)),
    });
    return { status: response.status, json: JSON.parse(response.body) as any };
  };
  const cli = (...args: string[]) => runCli([...args, "--config", configPath]);
  return { ...env, api, cli };
}

/** Lets the worker poll several times (it polls every 50 ms): used before asserting "nothing". */
const idle = () => new Promise((resolve) => setTimeout(resolve, 600));

describe.each(storeFactories())("destinations API and CLI ($name)", (factory) => {
  it("a 410 disables the destination with an alert; resume is refused, enable delivers the waiting work", async () => {
    const app = await receiver();
    app.respond((_r, index) => (index === 0 ? { status: 410 } : { status: 200 }));
    const alerts: DestinationDisabledAlert[] = [];
    const env = await setup(factory, app, {
      alerts: { onDestinationDisabled: (alert: DestinationDisabledAlert) => alerts.push(alert) },
    });
    const worker = env.inbox.startWorker();
    const first = await env.post("msg_gone_1", { type: "t" });
    await until(() => alerts.length === 1, 10_000, "the disabled alert");
    expect(alerts[0]).toMatchObject({ destination: "app", eventId: first.eventId });
    const second = await env.post("msg_gone_2", { type: "t" });
    await idle();
    expect(app.requests.length).toBe(1);

    const listed = await env.api("GET", "/api/destinations");
    expect(listed.status).toBe(200);
    expect(listed.json.items).toHaveLength(1);
    const item = listed.json.items[0] as DestinationStatus;
    expect(item).toMatchObject({
      name: "app",
      state: "disabled",
      inFlight: 0,
      pending: 2,
      dead: 0,
    });
    expect(item.reason).toContain("410 Gone");
    expect(item.url).toBe(app.url);

    const resumed = await env.api("POST", "/api/destinations/app/resume");
    expect(resumed.status).toBe(409);
    expect(resumed.json.error.code).toBe("HOOKINBOX_DESTINATION_DISABLED");
    const missing = await env.api("POST", "/api/destinations/nope/enable");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("HOOKINBOX_DESTINATION_NOT_FOUND");

    const enabled = await env.api("POST", "/api/destinations/app/enable");
    expect(enabled.status).toBe(200);
    expect(enabled.json).toMatchObject({ state: "active", reason: null, circuit: "closed" });
    await until(() => app.requests.length === 3, 10_000, "both events after enable");
    await until(async () => (await env.inbox.store.getEvent(second.eventId))?.status === "done");
    await until(async () => (await env.inbox.store.getEvent(first.eventId))?.status === "done");
    await worker.stop();
    const ofFirst = app.requests.filter((r) => r.headers["hookinbox-event-id"] === first.eventId);
    expect(ofFirst.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1", "2"]);
    expect(new Set(ofFirst.map((r) => r.headers["webhook-id"]))).toEqual(
      new Set([`${first.eventId}:app`]),
    );
    const ofSecond = app.requests.filter((r) => r.headers["hookinbox-event-id"] === second.eventId);
    expect(ofSecond.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1"]);
    expect(alerts).toHaveLength(1);

    const deliveries = await env.api("GET", "/api/destinations/app/deliveries?status=done");
    expect(deliveries.status).toBe(200);
    expect((deliveries.json as DeliveryPage).items.map((d) => d.eventId).sort()).toEqual(
      [first.eventId, second.eventId].sort(),
    );
    const badStatus = await env.api("GET", "/api/destinations/app/deliveries?status=nope");
    expect(badStatus.json.error.code).toBe("HOOKINBOX_QUERY_INVALID");

    // A replay to this destination only, by the API: same webhook-id, flagged.
    const replay = await env.api("POST", `/api/events/${first.eventId}/replay`, {
      destination: "app",
    });
    expect(replay.status).toBe(201);
    expect(replay.json.deliveries).toHaveLength(1);
    const unknown = await env.api("POST", `/api/events/${first.eventId}/replay`, {
      destination: "nope",
    });
    expect(unknown.json.error.code).toBe("HOOKINBOX_DESTINATION_NOT_FOUND");
    const again = env.inbox.startWorker();
    await until(() => app.requests.length === 4, 10_000, "the replay");
    await again.stop();
    expect(app.requests[3]!.headers["hookinbox-replay"]).toBe("true");
    expect(app.requests[3]!.headers["webhook-id"]).toBe(`${first.eventId}:app`);
  });

  it("the CLI pauses (work waits, uncounted), lists, resumes, lists deliveries and replays to one destination", async () => {
    const app = await receiver();
    const env = await setup(factory, app);
    const paused = await env.cli("destinations", "pause", "app", "--reason", "deploying", "--json");
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ state: "paused", reason: "deploying" });
    const worker = env.inbox.startWorker();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await env.post(`msg_paused_${i}`, { type: "t" })).eventId);
    await idle();
    expect(app.requests).toHaveLength(0);

    const list = await env.cli("destinations", "list", "--json");
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).items).toEqual([
      expect.objectContaining({ name: "app", state: "paused", inFlight: 0, pending: 3, dead: 0 }),
    ]);
    const table = await env.cli("destinations", "list");
    expect(table.stdout).toContain("paused");
    expect(table.stdout).toContain("deploying");
    const waiting = await env.cli(
      "destinations",
      "deliveries",
      "app",
      "--status",
      "pending",
      "--json",
    );
    const page = JSON.parse(waiting.stdout) as DeliveryPage;
    expect(page.items).toHaveLength(3);
    // Parked, not failed: no attempt was counted.
    expect(page.items.map((d) => d.attempts)).toEqual([0, 0, 0]);

    const resumed = await env.cli("destinations", "resume", "app", "--json");
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ state: "active", reason: null });
    await until(() => app.requests.length === 3, 10_000, "the paused work after resume");
    expect(app.requests.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1", "1", "1"]);
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) === 3,
    );

    const replayed = await env.cli("replay", ids[0]!, "--destination", "app", "--json");
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout).deliveries).toHaveLength(1);
    await until(() => app.requests.length === 4, 10_000, "the replay");
    await worker.stop();
    expect(app.requests[3]!.headers).toMatchObject({
      "hookinbox-replay": "true",
      "webhook-id": `${ids[0]}:app`,
      "hookinbox-attempt": "1",
    });

    const unknown = await env.cli("destinations", "pause", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("HOOKINBOX_DESTINATION_NOT_FOUND");
    const unknownReplay = await env.cli("replay", ids[0]!, "--destination", "nope");
    expect(unknownReplay.code).toBe(1);
    expect(unknownReplay.stderr).toContain("HOOKINBOX_DESTINATION_NOT_FOUND");
    const usage = await env.cli("destinations", "pause");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("HOOKINBOX_USAGE");
  });

  it("a dead delivery shows in the destination's dead count; retry (CLI, then API) sends it again under the same webhook-id", async () => {
    const app = await receiver();
    let failing = true;
    app.respond(() => ({ status: failing ? 500 : 200 }));
    const env = await setup(factory, app, {
      retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 2 },
    });
    const worker = env.inbox.startWorker();
    const first = await env.post("msg_dead_1", { type: "t" });
    const second = await env.post("msg_dead_2", { type: "t" });
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'dead'")) === 2,
      10_000,
      "two dead deliveries",
    );
    expect(app.requests).toHaveLength(4);
    const list = JSON.parse((await env.cli("destinations", "list", "--json")).stdout);
    expect(list.items[0]).toMatchObject({ name: "app", dead: 2, pending: 0, inFlight: 0 });
    const dead = JSON.parse(
      (await env.cli("destinations", "deliveries", "app", "--status", "dead", "--json")).stdout,
    ) as DeliveryPage;
    expect(dead.items).toHaveLength(2);
    const byEvent = new Map(dead.items.map((d) => [d.eventId, d.id]));

    failing = false;
    const retried = await env.cli("retry", byEvent.get(first.eventId)!, "--json");
    expect(retried.code).toBe(0);
    await until(() => app.requests.length === 5, 10_000, "the CLI retry");
    const viaApi = await env.api("POST", `/api/deliveries/${byEvent.get(second.eventId)}/retry`);
    expect(viaApi.status).toBe(200);
    await until(() => app.requests.length === 6, 10_000, "the API retry");
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) === 2,
    );
    await worker.stop();
    for (const event of [first, second]) {
      const sent = app.requests.filter((r) => r.headers["hookinbox-event-id"] === event.eventId);
      expect(sent.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1", "2", "3"]);
      expect(new Set(sent.map((r) => r.headers["webhook-id"]))).toEqual(
        new Set([`${event.eventId}:app`]),
      );
    }
    const after = JSON.parse((await env.cli("destinations", "list", "--json")).stdout);
    expect(after.items[0]).toMatchObject({ dead: 0, pending: 0, inFlight: 0 });
  });
});
