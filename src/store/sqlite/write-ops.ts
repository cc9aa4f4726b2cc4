import type Database from "better-sqlite3";
import type { AlertRecord } from "../alert-types.ts";
import { effectHeldAlert } from "../core/effects.ts";
import type { ReplayPair } from "../core/replay.ts";
import type { DestinationState } from "../forward-types.ts";
import type { CompleteInput, EffectClaimInput, FailInput } from "../queue-types.ts";
import { prepareAccept } from "./accept.ts";
import { prepareAlertOutbox } from "./alert-outbox.ts";
import { prepareAuditAppend } from "./audit.ts";
import { prepareDestinationWrites } from "./destinations.ts";
import { prepareEffects } from "./effects.ts";
import type { GroupCommit } from "./group-commit.ts";
import { preparePing } from "./ping.ts";
import { prepareClaimDeliveries } from "./queue/claim-deliveries.ts";
import { prepareCompleteDelivery } from "./queue/complete-delivery.ts";
import { prepareFailDelivery } from "./queue/fail-delivery.ts";
import { prepareLeases } from "./queue/leases.ts";
import { prepareRetryDelivery } from "./queue/retry-delivery.ts";
import { prepareRecordRejection } from "./rejections.ts";
import { prepareReplay, type ReplayableEvent } from "./replay.ts";
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
 * group.submit(() => ops.accept(input));
 * ```
 */
export function prepareWriteOps(db: Database.Database, group: GroupCommit, now: () => number) {
  // One appender for accepts and retention: a transaction's appends share its tree state.
  const log = prepareAuditAppend(db);
  group.addFinisher(log.finisher);
  const accept = prepareAccept(db, (finisher) => group.addFinisher(finisher), log);
  const retentionStep = prepareRetentionStep(db, log);
  const recordRejection = prepareRecordRejection(db);
  const ping = preparePing(db, now);
  const claim = prepareClaimDeliveries(db);
  const complete = prepareCompleteDelivery(db);
  const fail = prepareFailDelivery(db);
  const leases = prepareLeases(db);
  const retry = prepareRetryDelivery(db);
  const replay = prepareReplay(db);
  const effects = prepareEffects(db);
  const statements = prepareRunStatements(db);
  const outbox = prepareAlertOutbox(db);
  const { recordAttemptResponse, ...destinations } = prepareDestinationWrites(db);
  // What the destination answered, stored in the same transaction as the attempt's end.
  const withResponse = <T>(input: CompleteInput, end: () => T): T => {
    const result = end();
    if (input.response) recordAttemptResponse(input.deliveryId, input.attempt, input.response);
    return result;
  };
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
    accept,
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
    completeDone: (input: CompleteInput) => withResponse(input, () => complete(input, "done")),
  };
}

/** The write operations by name. */
export type WriteOps = ReturnType<typeof prepareWriteOps>;
/** The name of one write operation. */
export type WriteOp = keyof WriteOps;
