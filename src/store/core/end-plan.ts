import type {
  AttemptOutcome,
  CompleteInput,
  FailInput,
  TransactionClient,
} from "../queue-types.ts";
import { withStoredError } from "./failure-text.ts";

/**
 * How one running attempt ends, as core decided it: plain data, so that it crosses to SQLite's
 * writer thread as is. A driver runs it in one statement or one transaction, guarded by the
 * lease (the delivery still `running`, owned by `workerId` at `attempt`): it changes nothing
 * when the lease was lost, and decides nothing else.
 *
 * - `status`: the delivery's next status; `done` and `stale` end it, `pending` retries it at
 *   `runAt` (it stays the head of its key, so the key waits for it), `dead` dead-letters it.
 * - `outcome`, `error`: the attempt's end record (the error's text already capped).
 * - `circuitWait`: a retry marked to be due once its destination's circuit closes.
 * - `blockKey`: a dead delivery with an ordering key keeps blocking that key.
 * - `recordApplied`: the delivery's version becomes its key's applied version (never backwards).
 * - `followUps`: the key's next head wakes (unless the delivery keeps blocking the key) and the
 *   event's status is derived again (core/queue-rules.ts eventStatusSql).
 *
 * @example
 * ```ts
 * const plan = completionPlan(input, "done");
 * plan.status; // "done"
 * plan.followUps; // true
 * ```
 */
export interface EndPlan extends CompleteInput {
  readonly status: "done" | "stale" | "pending" | "dead";
  readonly outcome: AttemptOutcome;
  readonly error: { readonly message: string; readonly stack: string | null } | null;
  readonly runAt: number | null;
  readonly circuitWait: boolean;
  readonly blockKey: boolean;
  readonly recordApplied: boolean;
  readonly followUps: boolean;
}

/**
 * The driver primitives that run end plans. `runEndPlans` runs each plan guarded by its lease
 * (SQLite: inside the group commit; PostgreSQL: in one statement or one round trip, completions
 * of one status possibly batched together) and answers, per plan, whether it ended (false: the
 * lease was lost, nothing changed). `runEndPlanWith` runs one plan and then `work` (a handler's
 * SQL) in the same transaction, so both commit or neither; a lost lease rejects with
 * HOOKINBOX_LEASE_LOST before `work` runs.
 *
 * @example
 * ```ts
 * const [ended] = await driver.runEndPlans([completionPlan(input, "done")]);
 * ```
 */
export interface EndPlanDriver {
  runEndPlans(plans: readonly EndPlan[]): Promise<readonly boolean[]>;
  runEndPlanWith<T>(plan: EndPlan, work: (tx: TransactionClient) => Promise<T>): Promise<T>;
}

/** The attempt fields of `input`, its time floored to whole milliseconds. */
function attemptOf(input: CompleteInput): CompleteInput {
  return {
    deliveryId: input.deliveryId,
    workerId: input.workerId,
    attempt: input.attempt,
    now: Math.floor(input.now),
    ...(input.orderingKey === undefined ? {} : { orderingKey: input.orderingKey }),
    ...(input.eventId === undefined ? {} : { eventId: input.eventId }),
    ...(input.response === undefined ? {} : { response: input.response }),
  };
}

/**
 * The plan of a successful attempt (`done`: its version becomes the key's applied version) or of
 * a claimed delivery skipped as stale (`stale`): the delivery ends, the key's next head wakes,
 * the event's status follows.
 *
 * @example
 * ```ts
 * await driver.runEndPlans([completionPlan(input, "stale")]);
 * ```
 */
export function completionPlan(input: CompleteInput, status: "done" | "stale"): EndPlan {
  return {
    ...attemptOf(input),
    status,
    outcome: status === "done" ? "success" : "stale",
    error: null,
    runAt: null,
    circuitWait: false,
    blockKey: false,
    recordApplied: status === "done",
    followUps: true,
  };
}

/**
 * The plan of a failed attempt: a retry at `retryAt` (the delivery stays its key's head, so
 * nothing wakes and the event stays pending), or, with `retryAt` null, a dead letter that either
 * keeps blocking its key (`blockKey`) or lets the key's next head run. The error's text is capped
 * (core/failure-text.ts).
 *
 * @example
 * ```ts
 * failurePlan({ ...input, error, retryAt: null, outcome: "permanent", blockKey: true }).status; // "dead"
 * ```
 */
export function failurePlan(input: FailInput): EndPlan {
  const failed = withStoredError(input);
  const dead = failed.retryAt === null;
  return {
    ...attemptOf(failed),
    status: dead ? "dead" : "pending",
    outcome: failed.outcome,
    error: failed.error,
    runAt: failed.retryAt === null ? null : Math.floor(failed.retryAt),
    circuitWait: !dead && failed.circuitWait === true,
    blockKey: dead && failed.blockKey,
    recordApplied: false,
    followUps: dead,
  };
}
