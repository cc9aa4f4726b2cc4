import type Database from "better-sqlite3";
import type { ProgramInput, ProgramName } from "../core/program-writes.ts";
import type { ReplayPair } from "../core/replay.ts";
import type { CompleteInput, FailInput } from "../queue-types.ts";
import { prepareAccept } from "./accept.ts";
import { prepareAuditAppend } from "./audit.ts";
import { prepareDestinationWrites } from "./destinations.ts";
import type { GroupCommit } from "./group-commit.ts";
import { preparePing } from "./ping.ts";
import { prepareSqlitePurge } from "./purge-payloads.ts";
import { prepareClaimDeliveries } from "./queue/claim-deliveries.ts";
import { prepareCompleteDelivery } from "./queue/complete-delivery.ts";
import { prepareFailDelivery } from "./queue/fail-delivery.ts";
import { prepareLeases } from "./queue/leases.ts";
import { prepareRetryDelivery } from "./queue/retry-delivery.ts";
import { prepareRecordRejection } from "./rejections.ts";
import { prepareReplay, type ReplayableEvent } from "./replay.ts";
import { prepareRetentionStep } from "./retention-step.ts";
import { runWriteProgram } from "./run-program.ts";
import { prepareRunStatements } from "./run-statements.ts";

/**
 * Every write the SQLite store makes, as synchronous operations with plain-data arguments and
 * results, so that they can run in a group commit on this thread or be sent by name to the
 * writer thread. Each runs inside the caller's transaction.
 *
 * @example
 * ```ts
 * const ops = prepareWriteOps(db, group, Date.now);
 * group.submit(() => ops.accept(input));
 * ```
 */
export function prepareWriteOps(db: Database.Database, group: GroupCommit, now: () => number) {
  // One appender for accepts and retention: a transaction's appends share its tree state.
  const log = prepareAuditAppend(db);
  group.addFinisher(log.finisher);
  const accept = prepareAccept(db, (finisher) => group.addFinisher(finisher), log);
  const purgePayloads = prepareSqlitePurge(db);
  const retentionStep = prepareRetentionStep(db, log);
  const recordRejection = prepareRecordRejection(db);
  const ping = preparePing(db, now);
  const claim = prepareClaimDeliveries(db);
  const complete = prepareCompleteDelivery(db);
  const fail = prepareFailDelivery(db);
  const leases = prepareLeases(db);
  const retry = prepareRetryDelivery(db);
  const replay = prepareReplay(db);
  const statements = prepareRunStatements(db);
  const { recordAttemptResponse, ...destinations } = prepareDestinationWrites(db);
  // What the destination answered, stored in the same transaction as the attempt's end.
  const withResponse = <T>(input: CompleteInput, end: () => T): T => {
    const result = end();
    if (input.response) recordAttemptResponse(input.deliveryId, input.attempt, input.response);
    return result;
  };
  return {
    ...destinations,
    accept,
    purgePayloads,
    retentionStep,
    recordRejection,
    ping,
    claim,
    complete: (input: CompleteInput, status: "done" | "stale") =>
      withResponse(input, () => complete(input, status)),
    fail: (input: FailInput) => withResponse(input, () => fail(input)),
    releaseDeliveries: leases.release,
    rescue: leases.rescue,
    retry,
    replayOne: replay.one,
    /** Replays a page's (event, target) pairs; returns the deliveries created. */
    replayPage: (pairs: ReadonlyArray<ReplayPair<ReplayableEvent>>, at: number) =>
      replay.pairs(pairs, at),
    /** Statements core wrote (core/write-driver.ts), run in this transaction. */
    statements,
    /** A core write program (core/program-writes.ts), run by name in this transaction. */
    program: <N extends ProgramName>(name: N, input: ProgramInput<N>) =>
      runWriteProgram(statements, name, input),
    completeDone: (input: CompleteInput) => withResponse(input, () => complete(input, "done")),
  };
}

/** The write operations by name. */
export type WriteOps = ReturnType<typeof prepareWriteOps>;
/** The name of one write operation. */
export type WriteOp = keyof WriteOps;
