import type Database from "better-sqlite3";
import { hookinboxError } from "../../errors.ts";
import type { AlertRecord } from "../alert-types.ts";
import type { SqliteClaimPlan } from "../core/claim-plan.ts";
import { effectHeldAlert } from "../core/effects.ts";
import type { EndPlan } from "../core/end-plan.ts";
import type { DestinationState } from "../forward-types.ts";
import type { EffectClaimInput } from "../queue-types.ts";
import { prepareAlertOutbox } from "./alert-outbox.ts";
import { prepareAuditAppend } from "./audit.ts";
import { prepareDestinationWrites } from "./destinations.ts";
import { prepareEffects } from "./effects.ts";
import type { GroupCommit } from "./group-commit.ts";
import { prepareInsertOrGetEvent } from "./insert-or-get-event.ts";
import { preparePing } from "./ping.ts";
import { prepareSqlitePurge } from "./purge-payloads.ts";
import { runClaimPlan } from "./queue/claim-plan.ts";
import { runEndPlans } from "./queue/end-plan.ts";
import { prepareRetentionStep } from "./retention-step.ts";
import { prepareRunStatements } from "./run-statements.ts";

/**
 * Every write the SQLite store makes, as synchronous operations with plain-data arguments and
 * results, so that they can run in a group commit on this thread or be sent by name to the
 * writer thread. Each runs inside the caller's transaction.
 *
 * @example
 * ```ts
 * const ops = prepareWriteOps(db, group, Date.now);
 * group.submit(() => ops.insertOrGetEvent(acceptPlanOf(input, true)));
 * ```
 */
export function prepareWriteOps(db: Database.Database, group: GroupCommit, now: () => number) {
  // One appender for accepts and retention: a transaction's appends share its tree state.
  const log = prepareAuditAppend(db);
  group.addFinisher(log.finisher);
  const insertOrGetEvent = prepareInsertOrGetEvent(
    db,
    (finisher) => group.addFinisher(finisher),
    log,
  );
  const purgePayloads = prepareSqlitePurge(db);
  const retentionStep = prepareRetentionStep(db, log);
  const ping = preparePing(db, now);
  const endPlans = runEndPlans(db);
  const effects = prepareEffects(db);
  const statements = prepareRunStatements(db);
  const outbox = prepareAlertOutbox(db);
  const { recordAttemptResponse, ...destinations } = prepareDestinationWrites(db);
  // What the destination answered, stored in the same transaction as the attempt's end.
  const end = (plans: readonly EndPlan[]): boolean[] =>
    endPlans(plans).map((ended, i) => {
      const plan = plans[i];
      if (ended && plan?.response) {
        recordAttemptResponse(plan.deliveryId, plan.attempt, plan.response);
      }
      return ended;
    });
  return {
    ...destinations,
    /** Sets the state and, when it was set, records `alert` in the same transaction. */
    setDestinationState(
      name: string,
      state: DestinationState,
      reason: string | null,
      at: number,
      alert?: AlertRecord,
    ) {
      const row = destinations.setDestinationState(name, state, reason, at);
      if (row && alert) outbox.record(alert.occurrences, { now: at, windowMs: alert.windowMs });
      return row;
    },
    insertOrGetEvent,
    purgePayloads,
    retentionStep,
    ping,
    /** A claim core planned (core/claim-plan.ts), run in this transaction. */
    claimPlan: (plan: SqliteClaimPlan) => runClaimPlan(db, plan),
    /** End plans core computed (core/end-plan.ts): whether each one's lease was held. */
    endPlans: end,
    /** Claims an effect and, when this claim holds it, records its alert in the same transaction. */
    claimEffect(input: EffectClaimInput) {
      const claim = effects.claim(input);
      const alert = effectHeldAlert(claim, input); // decided in core, recorded here
      if (alert) outbox.record(alert.occurrences, alert.at);
      return claim;
    },
    resolveEffect: (
      effectId: string,
      resolution: "done" | "release",
      at: number,
      result?: unknown,
    ) => effects.resolve(effectId, resolution, at, result),
    recordAlerts: outbox.record,
    /** Statements core wrote (core/write-driver.ts), run in this transaction. */
    statements,
    /** One end plan, in a handler's exclusive transaction: HOOKINBOX_LEASE_LOST when not held. */
    endHeld(plan: EndPlan): void {
      if (!end([plan])[0]) throw hookinboxError("HOOKINBOX_LEASE_LOST", plan.deliveryId);
    },
  };
}

/** The write operations by name. */
export type WriteOps = ReturnType<typeof prepareWriteOps>;
/** The name of one write operation. */
export type WriteOp = keyof WriteOps;
