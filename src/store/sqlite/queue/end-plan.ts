import type Database from "better-sqlite3";
import type { EndPlan } from "../../core/end-plan.ts";
import { prepareFollowUps } from "./key-queue.ts";

// Every end of an attempt is guarded: a worker that lost its lease changes nothing.
const ownedSql = `
  SELECT event_id, target, ordering_key, version FROM deliveries
  WHERE id = @deliveryId AND status = 'running' AND lease_owner = @workerId AND attempts = @attempt`;

// The delivery's next state, one statement per kind of plan (core/end-plan.ts).
const endedSql = `
  UPDATE deliveries
  SET status = @status, lease_owner = NULL, lease_expires_at = NULL, last_error = NULL,
      completed_at = @now, updated_at = @now
  WHERE id = @deliveryId`;

const retrySql = `
  UPDATE deliveries
  SET status = 'pending', run_at = @runAt, lease_owner = NULL, lease_expires_at = NULL,
      last_error = @message, updated_at = @now, circuit_wait = @circuitWait
  WHERE id = @deliveryId`;

const deadSql = `
  UPDATE deliveries
  SET status = 'dead', lease_owner = NULL, lease_expires_at = NULL, last_error = @message,
      blocks_key = @blocksKey, completed_at = @now, updated_at = @now
  WHERE id = @deliveryId`;

const endAttemptSql = `
  UPDATE attempts SET ended_at = @now, outcome = @outcome, error_message = @message, error_stack = @stack
  WHERE delivery_id = @deliveryId AND attempt = @attempt`;

// The stale guard's reference only moves forward.
const appliedSql = `
  INSERT INTO applied_versions (target, ordering_key, version) VALUES (@target, @orderingKey, @version)
  ON CONFLICT (target, ordering_key) DO UPDATE SET version = max(version, excluded.version)`;

interface OwnedDelivery {
  event_id: string;
  target: string;
  ordering_key: string | null;
  version: number | null;
}

/**
 * The end-plan primitive (core/end-plan.ts) on SQLite: runs each plan inside the caller's
 * transaction (the group commit's, or the handler's exclusive one) and answers, per plan, whether
 * its lease was still held (false: nothing changed). A plan runs as written: the lease guard, the
 * delivery's next state, the attempt's end, the applied version, the key's next head and the
 * event's status when the plan asks for them.
 *
 * @example
 * ```ts
 * const run = runEndPlans(db);
 * const [ended] = run([completionPlan(input, "done")]);
 * ```
 */
export function runEndPlans(db: Database.Database): (plans: readonly EndPlan[]) => boolean[] {
  const owned = db.prepare<[Record<string, unknown>], OwnedDelivery>(ownedSql);
  const ended = db.prepare(endedSql);
  const retry = db.prepare(retrySql);
  const dead = db.prepare(deadSql);
  const endAttempt = db.prepare(endAttemptSql);
  const applied = db.prepare(appliedSql);
  const follow = prepareFollowUps(db);
  const run = (plan: EndPlan): boolean => {
    const { deliveryId, now } = plan;
    const row = owned.get({ deliveryId, workerId: plan.workerId, attempt: plan.attempt });
    if (!row) return false;
    const message = plan.error?.message ?? null;
    let blocksKey = false;
    if (plan.status === "pending") {
      retry.run({
        deliveryId,
        runAt: plan.runAt,
        message,
        now,
        circuitWait: plan.circuitWait ? 1 : 0,
      });
    } else if (plan.status === "dead") {
      blocksKey = plan.blockKey && row.ordering_key !== null;
      dead.run({ deliveryId, message, blocksKey: blocksKey ? 1 : 0, now });
    } else {
      ended.run({ deliveryId, status: plan.status, now });
    }
    endAttempt.run({
      deliveryId,
      attempt: plan.attempt,
      now,
      outcome: plan.outcome,
      message,
      stack: plan.error?.stack ?? null,
    });
    if (plan.recordApplied && row.ordering_key !== null && row.version !== null) {
      applied.run({ target: row.target, orderingKey: row.ordering_key, version: row.version });
    }
    if (plan.followUps) {
      if (!blocksKey) follow.wakeNextHead(row.target, row.ordering_key, now);
      follow.refreshEventStatus(row.event_id);
    }
    return true;
  };
  return (plans) => plans.map(run);
}
