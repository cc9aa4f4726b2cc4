import { afterEach, describe, expect, it } from "vitest";
import { adminRoutes } from "../../src/admin/admin-api.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { PermanentError } from "../../src/index.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { type StoreFactory, storeFactories, type TestStore } from "../helpers/stores.ts";

// Bulk actions that a typo must not turn into "everything": strict admin inputs on every
// operation, `all: true` for an unfiltered bulk replay or retry, and dry runs counted per target
// in the store. Real HTTP on loopback against a gateway on each store.

const token = testAdminToken;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Every invoice event goes to "stripe:invoice.*" and "stripe:*"; every charge event to
// "stripe:charge.*" and "stripe:*", and both of a charge's deliveries die (PermanentError).
async function setup(factory: StoreFactory): Promise<{ gateway: Gateway; store: TestStore }> {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  const refuseCharges = async (event: { type: string | null }) => {
    if (event.type?.startsWith("charge.")) throw new PermanentError("charges are refused");
  };
  const gateway = await startGateway(
    {
      store: store.url,
      sources: testSources,
      worker: { lease: "30s", pollInterval: "20ms" },
      handlers: {
        "stripe:invoice.*": async () => {},
        "stripe:charge.*": refuseCharges,
        "stripe:*": refuseCharges,
      },
    },
    { env: {}, port: 0, adminToken: token },
  );
  cleanups.push(() => gateway.close());
  return { gateway, store };
}

async function api(
  gateway: Gateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, any> }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

/** Stores 10 invoice events and 3 charge events, and waits until every delivery is finished. */
async function seed(gateway: Gateway, store: TestStore): Promise<void> {
  const types = [
    ...Array.from({ length: 10 }, () => "invoice.paid"),
    ...Array.from({ length: 3 }, () => "charge.refunded"),
  ];
  for (const [i, type] of types.entries()) {
    const id = `evt_bulk_${i}`;
    const request = stripeRequest(id, { type, extra: { data: { object: { id: `obj_${i}` } } } });
    const response = await fetch(`${gateway.url}/webhooks/stripe`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    expect(response.status).toBe(200);
  }
  const deadline = Date.now() + 20_000;
  for (;;) {
    const finished = await store.count(
      "SELECT count(*) AS n FROM deliveries WHERE status IN ('done', 'dead')",
    );
    if (finished === 26) break;
    if (Date.now() > deadline) throw new Error(`only ${finished} of 26 deliveries finished`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every delivery and event row as it stands (id, status, due time, attempts, replay flag). */
async function snapshot(store: TestStore) {
  return {
    deliveries: await store.rows(
      "SELECT id, status, run_at, attempts, is_replay FROM deliveries ORDER BY id",
    ),
    events: await store.rows("SELECT id, status FROM events ORDER BY id"),
  };
}

const replays = (store: TestStore) =>
  store.count("SELECT count(*) AS n FROM deliveries WHERE is_replay = ?", [
    store.kind === "sqlite" ? 1 : true,
  ]);

/** The dry run of retrying the 6 dead deliveries (3 charge events, 2 targets each). */
const allDeadPlan = {
  dryRun: true,
  events: 3,
  deliveries: 6,
  targets: [
    { target: "stripe:*", deliveries: 3 },
    { target: "stripe:charge.*", deliveries: 3 },
  ],
  unsafe: [],
};

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("admin bulk actions ($name)", (factory) => {
  it('POST /api/replays {"sorce":"x"}: 400 naming the key, nothing replayed', async () => {
    const { gateway, store } = await setup(factory);
    await seed(gateway, store);
    const before = await snapshot(store);
    const typo = await api(gateway, "POST", "/api/replays", { sorce: "x" });
    expect(typo.status).toBe(400);
    expect(typo.json.error.code).toBe("HOOKINBOX_QUERY_INVALID");
    expect(typo.json.error.message).toContain('unknown key "sorce"');
    expect(typo.json.error.message).toContain("accepted: source, type, status");
    expect(await replays(store)).toBe(0);
    expect(await snapshot(store)).toEqual(before);
  });

  it("an unfiltered bulk replay or retry needs all: true; all beside a filter is refused", async () => {
    const { gateway, store } = await setup(factory);
    await seed(gateway, store);
    const before = await snapshot(store);
    const refusals: Array<[string, unknown, string, string]> = [
      ["/api/replays", {}, "HOOKINBOX_BULK_UNSCOPED", '"all": true'],
      ["/api/replays", { all: false }, "HOOKINBOX_BULK_UNSCOPED", "receivedTo"],
      ["/api/replays", { dryRun: true }, "HOOKINBOX_BULK_UNSCOPED", "--all"],
      ["/api/replays", { targets: ["stripe:*"] }, "HOOKINBOX_BULK_UNSCOPED", '"all": true'],
      ["/api/replays", { all: true, source: "stripe" }, "HOOKINBOX_BULK_SCOPE_CONFLICT", "source"],
      ["/api/dead-letters/retry", {}, "HOOKINBOX_BULK_UNSCOPED", '"all": true'],
      ["/api/dead-letters/retry", { override: true }, "HOOKINBOX_BULK_UNSCOPED", "target"],
      [
        "/api/dead-letters/retry",
        { all: true, target: "stripe:*" },
        "HOOKINBOX_BULK_SCOPE_CONFLICT",
        "target",
      ],
    ];
    for (const [path, body, code, named] of refusals) {
      const answer = await api(gateway, "POST", path, body);
      expect({ path, body, status: answer.status, code: answer.json.error?.code }).toEqual({
        path,
        body,
        status: 400,
        code,
      });
      expect(answer.json.error.message).toContain(named);
    }
    expect(await snapshot(store)).toEqual(before);
    // With all: true they run: 13 events replayed to 26 deliveries; the 6 dead ones retried.
    expect(await api(gateway, "POST", "/api/dead-letters/retry", { all: true })).toEqual({
      status: 200,
      json: { retried: 6, skipped: 0 },
    });
    expect(await api(gateway, "POST", "/api/replays", { all: true })).toEqual({
      status: 201,
      json: { events: 13, deliveries: 26 },
    });
    expect(await replays(store)).toBe(26);
  });

  it("dryRun counts events and deliveries per target in the store and changes nothing", async () => {
    const { gateway, store } = await setup(factory);
    await seed(gateway, store);
    const before = await snapshot(store);
    expect(await api(gateway, "POST", "/api/replays", { all: true, dryRun: true })).toEqual({
      status: 201,
      json: {
        dryRun: true,
        events: 13,
        deliveries: 26,
        targets: [
          { target: "stripe:*", deliveries: 13 },
          { target: "stripe:invoice.*", deliveries: 10 },
          { target: "stripe:charge.*", deliveries: 3 },
        ],
      },
    });
    expect(
      await api(gateway, "POST", "/api/replays", { type: "charge.refunded", dryRun: true }),
    ).toEqual({
      status: 201,
      json: {
        dryRun: true,
        events: 3,
        deliveries: 6,
        targets: [
          { target: "stripe:*", deliveries: 3 },
          { target: "stripe:charge.*", deliveries: 3 },
        ],
      },
    });
    expect(
      await api(gateway, "POST", "/api/replays", {
        status: "done",
        targets: ["stripe:*"],
        dryRun: true,
      }),
    ).toEqual({
      status: 201,
      json: {
        dryRun: true,
        events: 10,
        deliveries: 10,
        targets: [{ target: "stripe:*", deliveries: 10 }],
      },
    });
    expect(
      await api(gateway, "POST", "/api/dead-letters/retry", { all: true, dryRun: true }),
    ).toEqual({
      status: 200,
      json: allDeadPlan,
    });
    expect(
      await api(gateway, "POST", "/api/dead-letters/retry", {
        target: "stripe:charge.*",
        dryRun: true,
      }),
    ).toEqual({
      status: 200,
      json: {
        dryRun: true,
        events: 3,
        deliveries: 3,
        targets: [{ target: "stripe:charge.*", deliveries: 3 }],
        unsafe: [],
      },
    });
    const dead = await store.rows<{ id: string }>(
      "SELECT id FROM deliveries WHERE status = 'dead' ORDER BY id",
    );
    const done = await store.rows<{ id: string }>(
      "SELECT id FROM deliveries WHERE status = 'done' ORDER BY id LIMIT 1",
    );
    expect(
      await api(gateway, "POST", "/api/deliveries/retry", {
        ids: [...dead.map((d) => d.id), done[0]!.id, "dlv_missing"],
        dryRun: true,
      }),
    ).toEqual({
      status: 200,
      json: allDeadPlan,
    });
    expect(await replays(store)).toBe(0);
    expect(await snapshot(store)).toEqual(before);
  });

  it("every operation refuses an unknown key (query or body) with 400 naming it, changing nothing", async () => {
    const { gateway, store } = await setup(factory);
    await seed(gateway, store);
    const before = await snapshot(store);
    const operations = adminRoutes.filter((route) => "operation" in route);
    // The walk covers the whole table: a new operation is walked without editing this test.
    expect(operations.length).toBeGreaterThanOrEqual(28);
    const refused: string[] = [];
    for (const route of operations) {
      const path = route.path.replace(/\{[A-Za-z]+\}/g, "x");
      const answer =
        route.method === "GET"
          ? await api(gateway, "GET", `${path}?zzUnknown=1`)
          : await api(gateway, "POST", path, { zzUnknown: 1 });
      const line = `${route.method} ${route.path}`;
      expect({ line, status: answer.status, code: answer.json.error?.code }).toEqual({
        line,
        status: 400,
        code: "HOOKINBOX_QUERY_INVALID",
      });
      expect(answer.json.error.message).toContain('unknown key "zzUnknown"');
      refused.push(line);
    }
    expect(refused).toHaveLength(operations.length);
    expect(await replays(store)).toBe(0);
    expect(await snapshot(store)).toEqual(before);
  });
});
