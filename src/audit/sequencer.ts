import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";

/** Pending leaves appended per transaction. */
const batchSize = 5_000;

/**
 * Appends every leaf pending now to the audit log (batches of 5,000 until one comes back short);
 * returns how many. On SQLite nothing is ever pending: 0 at once. Correct from any process at any
 * time, sequencer running or not (the store serialises sequencing on the tree row): the CLI's
 * verify, retention and tests call it to see every accepted event in the tree.
 *
 * @example
 * ```ts
 * await sequenceAll(store);
 * const proof = await proveInclusion(store, eventId, (await store.auditTree()).size);
 * ```
 */
export async function sequenceAll(store: Pick<Store, "auditSequence">): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await store.auditSequence(batchSize);
    total += n;
    if (n < batchSize) return total;
  }
}

/** A running sequencer. */
export interface AuditSequencer {
  /** Stops ticking, waits for a tick under way and gives the lease up. */
  stop(): Promise<void>;
}

/**
 * Runs the audit log's sequencer in this process (the gateway's and worker's upkeep): every
 * tenth of `maxMergeDelayMs` (at least 100 ms) it takes or renews the lease (held for half the
 * delay, so exactly one process across the cluster sequences, and another takes over within half
 * the delay when the holder dies), and the holder appends every pending leaf. So a leaf is in the
 * tree within the maximum merge delay of its accept while some process can reach the store. An
 * outage is logged once when it starts and once when it ends, never per tick.
 *
 * @example
 * ```ts
 * const sequencer = startAuditSequencer({ store, maxMergeDelayMs: 10_000, logger });
 * await sequencer.stop();
 * ```
 */
export function startAuditSequencer(options: {
  store: Pick<Store, "auditSequence" | "auditSequencerLease">;
  maxMergeDelayMs: number;
  logger?: Logger;
  /** Who holds the lease (default: host, pid and a random id). */
  holder?: string;
}): AuditSequencer {
  const { store, logger } = options;
  const holder = options.holder ?? `${hostname()}:${process.pid}:${randomUUID()}`;
  const leaseMs = options.maxMergeDelayMs / 2;
  let failing = false;
  let held = false;
  let running: Promise<void> | null = null;

  const tick = async () => {
    try {
      held = await store.auditSequencerLease(holder, leaseMs);
      if (held) await sequenceAll(store);
      if (failing) logger?.info({ holder }, "audit sequencer reaches the store again");
      failing = false;
    } catch (error) {
      if (!failing) {
        logger?.warn(
          { err: (error as Error).message, holder },
          "audit sequencer cannot reach the store; accepted leaves stay pending until it can (logged once per outage)",
        );
      }
      failing = true;
    }
  };
  const timer = setInterval(
    () => {
      running ??= tick().finally(() => {
        running = null;
      });
    },
    Math.max(100, options.maxMergeDelayMs / 10),
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      if (held) await store.auditSequencerLease(holder, 0).catch(() => undefined);
    },
  };
}
