// Batched completions on PostgreSQL (postgres/queue/end-plan.ts), directly and through
// PgBouncer: several store instances (as several worker processes) claim and complete many
// deliveries at once, keyed and unkeyed, some with handler SQL; one completion in a batch has
// lost its lease and only it fails. Exact counts, no timing.
import { afterEach, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { ClaimedDelivery, CompleteInput } from "../../src/store/queue-types.ts";
import type { Store } from "../../src/store/types.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const keys = 40;
const versionsPerKey = 4;
const unkeyed = 140;
const total = keys * versionsPerKey + unkeyed;

const postgresFactories = storeFactories().filter((f) => f.kind === "postgres");

describe.each(postgresFactories)("batched completions ($name)", ({ open }) => {
  let db: TestStore;
  let stores: Store[] = [];
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await db.cleanup();
  });

  it("3 stores × concurrent completions: every delivery done once; a lost lease fails alone", async () => {
    db = await open();
    stores = [openPostgresStore(db.url), openPostgresStore(db.url), openPostgresStore(db.url)];
    await stores[0]?.migrate();
    await db.exec("CREATE TABLE public.credits (delivery_id text NOT NULL)");
    const first = stores[0] as Store;
    let seq = 0;
    const accept = (key: string | null, version: number | null) =>
      first.accept(
        acceptInput({
          receivedAt: T0,
          identity: { dedupKey: `evt_${++seq}`, orderingKey: key, version },
          targets: ["t"],
        }),
      );
    // Versions stored in reverse: each key's later versions wait (blocked) behind its head.
    for (let v = versionsPerKey; v >= 1; v--)
      for (let k = 0; k < keys; k++) await accept(`key_${k}`, v);
    for (let n = 0; n < unkeyed; n++) await accept(null, null);

    const input = (d: ClaimedDelivery, workerId: string): CompleteInput => ({
      deliveryId: d.id,
      workerId,
      attempt: d.attempt,
      now: T0 + 1,
      orderingKey: d.orderingKey,
    });
    let lost = 0;
    let withSql = 0;
    let sabotaged = false;
    for (let round = 0; round < 100; round++) {
      const claimed = await Promise.all(
        stores.map((store, n) =>
          store.claimDeliveries({ workerId: `w${n}`, limit: 30, leaseMs: 60_000, now: T0 }),
        ),
      );
      if (claimed.every((c) => c.length === 0)) break;
      const ends = claimed.flatMap((deliveries, n) => {
        const store = stores[n] as Store;
        return deliveries.map(async (d, i) => {
          if (!sabotaged && n === 0 && i === 1) {
            // In the same batch, by a worker that does not hold the lease and by the holder:
            // only the intruder's call fails.
            sabotaged = true;
            const [error] = await Promise.all([
              store.completeDelivery(input(d, "intruder")).catch((e: unknown) => e),
              store.completeDelivery(input(d, `w${n}`)),
            ]);
            expect(isHookinboxError(error, "HOOKINBOX_LEASE_LOST")).toBe(true);
            lost++;
            return;
          }
          if (i % 7 === 3) {
            withSql++;
            await store.completeDelivery(input(d, `w${n}`), (tx) =>
              tx.query("INSERT INTO credits (delivery_id) VALUES ($1)", [d.id]),
            );
            return;
          }
          await store.completeDelivery(input(d, `w${n}`));
        });
      });
      await Promise.all(ends);
    }

    expect(lost).toBe(1);
    expect(await db.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
      total,
    );
    expect(await db.count("SELECT count(*) AS n FROM deliveries")).toBe(total);
    expect(await db.count("SELECT count(*) AS n FROM events WHERE status = 'done'")).toBe(total);
    expect(await db.count("SELECT count(*) AS n FROM attempts WHERE outcome = 'success'")).toBe(
      total,
    );
    expect(await db.count("SELECT count(*) AS n FROM attempts")).toBe(total);
    expect(await db.count("SELECT count(*) AS n FROM public.credits")).toBe(withSql);
    expect(await db.count("SELECT count(DISTINCT delivery_id) AS n FROM public.credits")).toBe(
      withSql,
    );
    expect(
      await db.count("SELECT count(*) AS n FROM applied_versions WHERE version = ?", [
        versionsPerKey,
      ]),
    ).toBe(keys);
  });
});
