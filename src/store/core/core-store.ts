import type { MigrationReport, Store } from "../types.ts";
import type { AcceptDriver } from "./accept-driver.ts";
import { storeAccepts } from "./accepts.ts";
import { type AuditDriver, auditWrites } from "./audit-writes.ts";
import type { ClaimDriver } from "./claim-plan.ts";
import { storeReads } from "./core-reads.ts";
import { storeWrites } from "./core-writes.ts";
import type { EndPlanDriver } from "./end-plan.ts";
import { storeLifecycle } from "./lifecycle.ts";
import { type PartitionDriver, partitionUpkeep } from "./partition-upkeep.ts";
import { type ProgramDriver, programWrites } from "./program-writes.ts";
import { purgeWrites } from "./purge-writes.ts";
import { storeClaims } from "./queue-claim.ts";
import { storeSettles } from "./queue-settle.ts";
import { storeReplays } from "./replay.ts";
import { type RetentionDriver, retentionWrites } from "./retention-step.ts";
import { executeText } from "./write-driver.ts";

/**
 * Everything a driver gives core, river's driver interface in small primitives: run a read
 * (`rows`), run statements in one transaction (`execute`), run an accept plan
 * (`insertOrGetEvent`), a claim plan (`runClaimPlan`), end plans (`runEndPlans`, and one inside a
 * handler's transaction: `runEndPlanWith`), a named write program (`runProgram`), how its audit
 * leaves are appended and whether it partitions, plus its own mechanics: apply the numbered
 * migrations, wake workers of other processes, heal a schema that vanished, release its
 * connections. Core's `coreStore` implements every Store method over it; the driver decides
 * nothing.
 *
 * @example
 * ```ts
 * const store = coreStore(sqliteDriver); // sqlite/store.ts builds the driver
 * ```
 */
export type StoreDriver = AcceptDriver &
  RetentionDriver &
  ClaimDriver &
  EndPlanDriver &
  ProgramDriver &
  AuditDriver &
  PartitionDriver & {
    /** Whether accepts append audit leaves. */
    readonly audit: boolean;
    /** The store's clock (ms since the epoch): the heartbeat's time. */
    now(): number;
    /** Applies the numbered migrations (the DDL mechanics are the driver's). */
    migrate(): Promise<MigrationReport>;
    /**
     * Runs `work`; when it fails because the schema vanished under a running store, applies
     * the migrations once and runs it again (PostgreSQL). SQLite runs it as is.
     */
    healSchema<T>(work: () => Promise<T>): Promise<T>;
    /** Subscribes to "deliveries became due" from other processes (PostgreSQL's LISTEN). */
    onDeliveries?(listener: () => void): () => void;
    /** Releases the connections, once the work under way has settled. */
    release(): Promise<void>;
  };

/** Counters of the accepts and rejections a store made since it was opened. */
export interface AcceptCounters {
  readonly accepted: number;
  readonly duplicates: number;
  readonly rejections: number;
}

/**
 * The Store, written once over a driver's primitives: reads, accepts, claims and ends,
 * effects, alerts, destinations, replays, the audit log, retention, the heartbeat and the
 * lifecycle (work after `close()` is refused with HOOKINBOX_STORE_CLOSED; `close()` waits for
 * the work under way, then the driver releases its connections). Which work heals a vanished
 * schema (accepts, claims, the heartbeat) is decided here too.
 *
 * @example
 * ```ts
 * const store = coreStore(driver);
 * await store.migrate();
 * const { eventId } = await store.accept(input);
 * await store.close();
 * ```
 */
export function coreStore(
  driver: StoreDriver,
): Omit<Store, "kind"> & { acceptCounters(): AcceptCounters } {
  const life = storeLifecycle();
  const reads = storeReads(driver);
  const accepts = storeAccepts(driver, driver.audit);
  const claims = storeClaims(driver);
  const retention = retentionWrites(driver);
  const heartbeat = `INSERT INTO ${driver.table("hookinbox_heartbeat")} (id, at) VALUES (1, ?)
     ON CONFLICT (id) DO UPDATE SET at = excluded.at`;
  let accepted = 0;
  let duplicates = 0;
  let rejections = 0;
  const store: Omit<Store, "kind"> = {
    migrate: () => driver.migrate(),
    async accept(input) {
      const result = await driver.healSchema(() => accepts.accept(input));
      accepted += 1;
      if (result.duplicate) duplicates += 1;
      return result;
    },
    async recordRejection(input) {
      await accepts.recordRejection(input);
      rejections += 1;
    },
    eventIdsByDedupKey: accepts.eventIdsByDedupKey,
    ...reads,
    ...storeWrites(driver),
    ...programWrites(driver),
    ...claims,
    claimDeliveries: (input) => driver.healSchema(() => claims.claimDeliveries(input)),
    ...storeSettles({
      ...driver,
      wake: () => driver.notifyDeliveries(),
      deliveryById: reads.deliveryById,
    }),
    ...storeReplays(driver, reads.deliveryById),
    ...auditWrites(driver),
    ...purgeWrites(driver),
    ...partitionUpkeep(driver),
    retentionStep: (input) => retention.retentionStep({ ...input, audit: driver.audit }),
    // A real write and commit: a resolved ping proves the store can commit (what /readyz needs).
    async ping() {
      await driver.healSchema(() => executeText(driver, [[heartbeat, [Math.floor(driver.now())]]]));
    },
    close: () => life.close(() => driver.release()),
    ...(driver.onDeliveries
      ? { onDeliveries: (listener: () => void) => driver.onDeliveries!(listener) }
      : {}),
  };
  return {
    ...life.guard(store, ["close", "onDeliveries"]),
    acceptCounters: () => ({ accepted, duplicates, rejections }),
  };
}
