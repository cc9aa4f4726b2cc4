// The store behind a real PgBouncer in transaction mode (`?pgbouncer=true`): unnamed statements,
// no session state, migrations through the pooler or over `directUrl`, LISTEN only over a direct
// URL. The whole processing suite also runs on this variant (storeFactories' `pgbouncer`).
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, pgbouncerServerUrl, postgresMigrationCount } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { testPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const bouncer = pgbouncerServerUrl();
if (bouncer === "")
  process.stderr.write(
    "\n!!! test/store/postgres-pgbouncer.test.ts: PgBouncer unavailable, see the global setup's message\n",
  );

async function database() {
  const db = await freshDatabase();
  cleanups.push(() => db.cleanup());
  const through = (params: Record<string, string>) => {
    const url = new URL(bouncer);
    url.pathname = new URL(db.url).pathname;
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  };
  const direct = testPool({ connectionString: db.url, max: 2 });
  cleanups.push(() => direct.end());
  return { db, through, direct };
}

const listeners = async (direct: pg.Pool) =>
  Number(
    (
      await direct.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'hookinbox-listen' AND datname = current_database()",
      )
    ).rows[0]?.n,
  );

describe.runIf(bouncer !== "")("PostgreSQL behind PgBouncer in transaction mode", () => {
  it("is really transaction mode: one client's transactions run on different server sessions", async () => {
    const { through } = await database();
    const a = new pg.Client({ connectionString: through({}) });
    const b = new pg.Client({ connectionString: through({}) });
    await a.connect();
    await b.connect();
    cleanups.push(async () => {
      await a.end();
      await b.end();
    });
    const pid = async (c: pg.Client) =>
      Number((await c.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
    const first = await pid(a);
    await b.query("BEGIN");
    const held = await pid(b);
    const second = await pid(a);
    await b.query("COMMIT");
    expect(new Set([first, held, second]).size).toBeGreaterThan(1);
    expect(second).not.toBe(held);
  });

  it("migrates through the pooler: 4 stores at once apply each migration once", async () => {
    const { through, direct } = await database();
    const stores = Array.from({ length: 4 }, () =>
      openPostgresStore(through({ pgbouncer: "true" })),
    );
    cleanups.push(async () => void (await Promise.all(stores.map((s) => s.close()))));
    const reports = await Promise.all(stores.map((s) => s.migrate()));
    expect(reports.map((r) => r.applied.length).sort()).toEqual([0, 0, 0, postgresMigrationCount]);
    expect(
      (await direct.query("SELECT count(*)::int AS n FROM hookinbox.hookinbox_migrations")).rows,
    ).toEqual([{ n: postgresMigrationCount }]);
  });

  // An empty claim is not "no work": a claim skips an ordering key whose advisory lock another
  // transaction holds (a concurrent claim or completion) and does not see a head woken by a
  // completion that committed after its snapshot, so workers poll. A worker loop that stops at
  // its first empty claim can stop while work remains (this test once did, on a shared key);
  // these loops stop only when the database says nothing is left.
  it.each([
    { keys: "one ordering key per event (all run at once)", key: (i: number) => `cus_${i % 50}` },
    { keys: "one ordering key for all (run one at a time)", key: () => "cus_1" },
  ])(
    "runs 200 concurrent accepts, claims and transactional completions with no named statement: $keys",
    async ({ key }) => {
      const { through, direct } = await database();
      const store = openPostgresStore(through({ pgbouncer: "true", pool: "12" }));
      cleanups.push(() => store.close());
      await store.migrate();
      await direct.query("CREATE TABLE credits (event_id text PRIMARY KEY)");
      // 50 distinct events × 4 copies, all at once: PgBouncer multiplexes 12 client connections.
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.accept(
            acceptInput({
              identity: { dedupKey: `evt_${i % 50}`, orderingKey: key(i), version: i % 50 },
              targets: ["t"],
            }),
          ),
        ),
      );
      expect(results.filter((r) => !r.duplicate)).toHaveLength(50);
      const unfinished = async () =>
        Number(
          (
            await direct.query(
              "SELECT count(*)::int AS n FROM hookinbox.deliveries WHERE status IN ('pending', 'blocked', 'running')",
            )
          ).rows[0]?.n,
        );
      let done = 0;
      let emptyWhileWorkLeft = 0;
      const work = async (worker: string) => {
        for (let round = 0; round < 5000; round++) {
          const now = Date.now();
          const claimed = await store.claimDeliveries({
            workerId: worker,
            limit: 5,
            leaseMs: 30_000,
            now,
          });
          if (claimed.length === 0) {
            if ((await unfinished()) === 0) return;
            emptyWhileWorkLeft++;
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          await Promise.all(
            claimed.map((d) =>
              store.completeDelivery(
                { deliveryId: d.id, workerId: worker, attempt: d.attempt, now },
                async (tx) => {
                  await tx.query("INSERT INTO credits (event_id) VALUES ($1)", [d.eventId]);
                  done++;
                },
              ),
            ),
          );
        }
        throw new Error(`${worker}: work left after 5000 claims`);
      };
      await Promise.all(["w1", "w2", "w3"].map(work));
      console.log(`empty claims while work was left: ${emptyWhileWorkLeft}`);
      expect(done).toBe(50);
      expect((await direct.query("SELECT count(*)::int AS n FROM credits")).rows).toEqual([
        { n: 50 },
      ]);
      expect(
        (await direct.query("SELECT status, count(*)::int AS n FROM hookinbox.events GROUP BY 1"))
          .rows,
      ).toEqual([{ status: "done", n: 50 }]);
      expect(
        (await direct.query("SELECT count(*)::int AS n FROM hookinbox.attempts")).rows,
      ).toEqual([{ n: 50 }]);
      // Behind the pooler with no direct URL, nothing listens.
      expect(await listeners(direct)).toBe(0);
    },
  );

  it("without a direct URL opens no LISTEN connection; with one it listens there and wakes on an accept through the pooler", async () => {
    const { db, through, direct } = await database();
    const pooled = openPostgresStore(through({ pgbouncer: "true" }));
    cleanups.push(() => pooled.close());
    await pooled.migrate();
    let polledWakes = 0;
    pooled.onDeliveries?.(() => polledWakes++);

    const withDirect = openPostgresStore(through({ pgbouncer: "true", directUrl: db.url }));
    cleanups.push(() => withDirect.close());
    expect((await withDirect.migrate()).applied).toEqual([]);
    let wakes = 0;
    withDirect.onDeliveries?.(() => wakes++);
    await until(async () => (await listeners(direct)) === 1, 10_000, "the LISTEN connection");
    const before = wakes;
    await pooled.accept(acceptInput({ identity: { dedupKey: "evt_wake" }, targets: ["t"] }));
    await until(() => wakes > before, 10_000, "a NOTIFY through the pooler");
    expect(await listeners(direct)).toBe(1);
    expect(polledWakes).toBe(0);
  });
});

describe("pooler parameters of a postgres:// store URL", () => {
  it("reads pgbouncer, directUrl and listenUrl, and hands none of them to the driver", () => {
    const direct = "postgres://app@db:5432/app";
    const url = parsePostgresUrl(
      `postgres://app@pooler:6432/app?pgbouncer=true&directUrl=${encodeURIComponent(direct)}&sslmode=require`,
    );
    expect(url).toMatchObject({ pgbouncer: true, directUrl: direct, listenUrl: direct });
    expect(url.connectionString).toBe("postgres://app@pooler:6432/app?sslmode=require");
    expect(parsePostgresUrl("postgres://app@pooler/app?pgbouncer=true").listenUrl).toBeNull();
    expect(parsePostgresUrl("postgres://app@db/app").listenUrl).toBe("postgres://app@db/app");
  });

  it("refuses a pgbouncer flag that is not true/false and a directUrl that is not postgres://", () => {
    for (const bad of [
      "postgres://a@b/c?pgbouncer=yes",
      "postgres://a@b/c?directUrl=mysql%3A%2F%2Fx",
    ]) {
      let error: unknown;
      try {
        parsePostgresUrl(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isHookinboxError(error, "HOOKINBOX_STORE_URL_INVALID")).toBe(true);
    }
  });
});
