import { afterEach } from "vitest";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/types.ts";
import type { TestStore } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Opens and migrates a store on a fresh test database; both are closed after the test.
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
  const store = openStore(db.url);
  cleanups.push(async () => {
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
