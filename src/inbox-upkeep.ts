import { auditKeyFile, loadAuditKey } from "./audit/audit-key.ts";
import { type RetentionSchedule, startRetention } from "./audit/retention-schedule.ts";
import { type AuditSequencer, startAuditSequencer } from "./audit/sequencer.ts";
import { type TreeHeads, treeHeads } from "./audit/tree-heads.ts";
import type { ResolvedConfig } from "./config/index.ts";
import type { Logger } from "./log.ts";
import type { Store } from "./store/types.ts";

/** An inbox's upkeep: started once on demand, stopped by `close()`. */
export interface InboxUpkeep {
  /** Starts retention (and on PostgreSQL with the audit log on, the sequencer) once; see `Inbox.upkeep`. */
  start(): RetentionSchedule;
  /** Stops what `start` started. */
  stop(): Promise<void>;
}

/**
 * The upkeep of one inbox: retention swept once migrations have run and then hourly (day
 * partitions on PostgreSQL), and on PostgreSQL with the audit log on its sequencer. Every store
 * call waits for the migrations first.
 *
 * @example
 * ```ts
 * const upkeep = inboxUpkeep({ store, config: resolved, now, logger, migrated });
 * upkeep.start().sweep();
 * await upkeep.stop();
 * ```
 */
export function inboxUpkeep(options: {
  readonly store: Store;
  readonly config: Pick<ResolvedConfig, "retention" | "audit">;
  readonly now: () => number;
  readonly logger: Logger;
  readonly migrated: Promise<unknown>;
}): InboxUpkeep {
  const { store, config, now, logger, migrated } = options;
  let retention: RetentionSchedule | null = null;
  let sequencer: AuditSequencer | null = null;
  const afterMigrations =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      await migrated;
      return run(...args);
    };
  return {
    start() {
      // One wrapper for both: retention sequences first, the sequencer sequences on its tick.
      const auditSequence = afterMigrations((limit: number) => store.auditSequence(limit));
      retention ??= startRetention({
        store: {
          purgePayloads: afterMigrations((input) => store.purgePayloads(input)),
          retentionStep: afterMigrations((input) => store.retentionStep(input)),
          maintainPartitions: afterMigrations((at) => store.maintainPartitions(at)),
          auditSequence,
        },
        windows: config.retention,
        now,
        logger,
        scheduled: config.retention.sweep,
      });
      if (config.audit.enabled && store.kind === "postgres") {
        sequencer ??= startAuditSequencer({
          store: {
            auditSequence,
            auditSequencerLease: afterMigrations((holder, ttlMs) =>
              store.auditSequencerLease(holder, ttlMs),
            ),
          },
          maxMergeDelayMs: config.audit.maxMergeDelayMs,
          logger,
        });
      }
      return retention;
    },
    async stop() {
      await retention?.stop();
      await sequencer?.stop();
    },
  };
}

/**
 * The signed tree heads of an inbox's audit log, or null when `audit.enabled` is false. The
 * signing key is loaded (or generated, and logged) on first use.
 *
 * @example
 * ```ts
 * const audit = auditHeadsOf({ store, config: resolved, now: Date.now, logger });
 * await audit?.signNow();
 * ```
 */
export function auditHeadsOf(options: {
  readonly store: Store;
  readonly config: Pick<ResolvedConfig, "audit" | "store">;
  readonly now: () => number;
  readonly logger: Logger;
}): TreeHeads | null {
  const { store, config, now, logger } = options;
  if (!config.audit.enabled) return null;
  return treeHeads({
    store,
    now,
    witness: config.audit.witness,
    logger,
    key: () => {
      const loaded = loadAuditKey(config.audit.key, auditKeyFile(config.store, process.cwd()));
      if (loaded.generated) logger.info({ file: loaded.from }, "generated the audit signing key");
      return loaded.key;
    },
  });
}
