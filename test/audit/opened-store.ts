import { sequenceAll } from "../../src/audit/sequencer.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/types.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import type { TestStore } from "../helpers/stores.ts";

/**
 * The store with every accept sequenced into the audit log before it resolves: on PostgreSQL an
 * accept only queues its leaf (migration 014) and the sequencer appends it within
 * `audit.maxMergeDelay`; these tests check the log an accept ends in, so they sequence at once
 * (SQLite: nothing is ever pending, a no-op). test/audit/pending-leaves.test.ts checks the state
 * before sequencing.
 *
 * @example
 * ```ts
 * const store = sequencedAccepts(openStore(url));
 * ```
 */
export function sequencedAccepts(store: Store): Store {
  const accept = store.accept.bind(store);
  store.accept = async (input) => {
    const result = await accept(input);
    await sequenceAll(store);
    return result;
  };
  return store;
}

/**
 * Opens and migrates a store on a fresh test database, every accept sequenced at once (see
 * `sequencedAccepts`); both are closed after the test.
 *
 * @example
 * ```ts
 * const { db, store } = await openedStore(factory.open);
 * ```
 */
export async function openedStore(
  open: () => Promise<TestStore>,
): Promise<{ db: TestStore; store: Store }> {
  const db = await open();
  const store = sequencedAccepts(openStore(db.url));
  onCleanup(async () => {
    await store.close();
    await db.cleanup();
  });
  await store.migrate();
  return { db, store };
}

/**
 * Retention windows with only `events` set (rejected receipts and dedup keys at their defaults).
 *
 * @example
 * ```ts
 * await runRetention(store, eventsOnly(365 * 86_400_000), { now, dryRun: false });
 * ```
 */
export function eventsOnly(eventsMs: number) {
  const day = 86_400_000;
  return { payloadsMs: null, eventsMs, receiptsMs: null, rejectedMs: 7 * day, dedupMs: 35 * day };
}
