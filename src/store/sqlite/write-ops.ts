import type Database from "better-sqlite3";
import { hookinboxError } from "../../errors.ts";
import type { SqliteClaimPlan } from "../core/claim-plan.ts";
import type { EndPlan } from "../core/end-plan.ts";
import type { ProgramInput, ProgramName } from "../core/program-writes.ts";
import type { RetentionProgramInput } from "../core/retention-step.ts";
import { prepareAuditAppend } from "./audit.ts";
import type { GroupCommit } from "./group-commit.ts";
import { prepareInsertOrGetEvent } from "./insert-or-get-event.ts";
import { prepareAttemptResponses } from "./queue/attempt-responses.ts";
import { runClaimPlan } from "./queue/claim-plan.ts";
import { runEndPlans } from "./queue/end-plan.ts";
import { runRetentionProgram } from "./retention-step.ts";
import { runWriteProgram } from "./run-program.ts";
import { prepareRunStatements } from "./run-statements.ts";

/**
 * Every write the SQLite store makes, as synchronous operations with plain-data arguments and
 * results, so that they can run in a group commit on this thread or be sent by name to the
 * writer thread. Each runs inside the caller's transaction.
 *
 * @example
 * ```ts
 * const ops = prepareWriteOps(db, group);
 * group.submit(() => ops.insertOrGetEvent(acceptPlanOf(input, true)));
 * ```
 */
export function prepareWriteOps(db: Database.Database, group: GroupCommit) {
  // One appender for accepts and retention: a transaction's appends share its tree state.
  const log = prepareAuditAppend(db);
  group.addFinisher(log.finisher);
  const insertOrGetEvent = prepareInsertOrGetEvent(
    db,
    (finisher) => group.addFinisher(finisher),
    log,
  );
  const endPlans = runEndPlans(db);
  const statements = prepareRunStatements(db);
  const recordAttemptResponse = prepareAttemptResponses(db);
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
    insertOrGetEvent,
    /** Core's retention program (core/retention-step.ts), its leaves appended, in this transaction. */
    retentionProgram: (program: RetentionProgramInput) =>
      runRetentionProgram(statements, log, program),
    /** A claim core planned (core/claim-plan.ts), run in this transaction. */
    claimPlan: (plan: SqliteClaimPlan) => runClaimPlan(db, plan),
    /** End plans core computed (core/end-plan.ts): whether each one's lease was held. */
    endPlans: end,
    /** Statements core wrote (core/write-driver.ts), run in this transaction. */
    statements,
    /** One end plan, in a handler's exclusive transaction: HOOKINBOX_LEASE_LOST when not held. */
    endHeld(plan: EndPlan): void {
      if (!end([plan])[0]) throw hookinboxError("HOOKINBOX_LEASE_LOST", plan.deliveryId);
    },
    /** A core write program (core/program-writes.ts), run by name in this transaction. */
    program: <N extends ProgramName>(name: N, input: ProgramInput<N>) =>
      runWriteProgram(statements, name, input),
  };
}

/** The write operations by name. */
export type WriteOps = ReturnType<typeof prepareWriteOps>;
/** The name of one write operation. */
export type WriteOp = keyof WriteOps;
