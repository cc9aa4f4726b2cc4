import { hookinboxError } from "../../errors.ts";
import type { DeliveryView, QueueStore } from "../queue-types.ts";
import { completionPlan, type EndPlanDriver, failurePlan } from "./end-plan.ts";
import { eventStatusSql, inKeyQueueSql } from "./queue-rules.ts";
import { retryFallback } from "./retry.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";

/** The Store methods that end or re-run a delivery, implemented here (drivers leave them out). */
export type CoreSettles = "completeDelivery" | "failDelivery" | "markStale" | "retryDelivery";

/**
 * What `storeSettles` runs on: the end-plan primitives (core/end-plan.ts), the `execute`
 * primitive, the Store's own `deliveryById`, and `wake`, which tells workers elsewhere that
 * deliveries became due (PostgreSQL: NOTIFY; SQLite, whose workers share its process: nothing).
 *
 * @example
 * ```ts
 * const driver: SettleDriver = { ...endPlans, dialect: "sqlite", table: (n) => n, execute, wake: async () => {}, deliveryById };
 * ```
 */
export interface SettleDriver extends EndPlanDriver, WriteDriver {
  wake(): Promise<void>;
  deliveryById(id: string): Promise<DeliveryView | null>;
}

/**
 * Completing, failing, skipping as stale and "run now", once for both stores. Core computes each
 * end's plan (next status, retry or dead letter, due time, capped error, whether the key stays
 * blocked, the applied version, the key and event follow-ups) and the driver runs it under the
 * lease; a lost lease is HOOKINBOX_LEASE_LOST. "Run now" is one transaction of statements
 * written here: a dead delivery goes back to pending with a fresh attempt budget, a pending one
 * is due now, a blocked one has the head of its key run now (so order holds); an unknown id is
 * null and a running or finished delivery HOOKINBOX_DELIVERY_NOT_RETRYABLE.
 *
 * @example
 * ```ts
 * const settles = storeSettles(driver);
 * await settles.completeDelivery({ deliveryId, workerId, attempt: 1, now: Date.now() });
 * ```
 */
export function storeSettles(driver: SettleDriver): Pick<QueueStore, CoreSettles> {
  const endOne = async (plan: Parameters<EndPlanDriver["runEndPlans"]>[0][number]) => {
    const [ended] = await driver.runEndPlans([plan]);
    if (ended !== true) throw hookinboxError("HOOKINBOX_LEASE_LOST", plan.deliveryId);
  };
  const runNow = retryStatements(driver);
  return {
    async completeDelivery(input, work) {
      const plan = completionPlan(input, "done");
      if (work) return driver.runEndPlanWith(plan, work);
      await endOne(plan);
      return undefined;
    },
    async failDelivery(input) {
      const plan = failurePlan(input);
      await endOne(plan);
      return { dead: plan.status === "dead" };
    },
    async markStale(input) {
      await endOne(completionPlan(input, "stale"));
    },
    async retryDelivery(id, now) {
      const [direct, head, current] = await executeText(driver, runNow(id, Math.floor(now)));
      if ((direct?.rowCount ?? 0) > 0) {
        await driver.wake();
        return driver.deliveryById(id);
      }
      if (retryFallback(current?.rows[0]?.status as string | undefined) === "none") return null;
      // A running head is already being run: nothing to hurry.
      if ((head?.rowCount ?? 0) > 0) await driver.wake();
      return driver.deliveryById(id);
    },
  };
}

/**
 * The statements of "run now" for one delivery, in one transaction: run it now when dead or
 * pending; else, when blocked, run the head of its key now; read its status (null: no such
 * delivery); derive the status of both deliveries' events again.
 */
function retryStatements(driver: WriteDriver) {
  const deliveries = driver.table("deliveries");
  const events = driver.table("events");
  // "Run now": dead → pending with a fresh budget (it stops blocking its key but, being the
  // oldest of its key, it is still the key's head); pending → due now (same budget).
  const runNowSql = (which: string) => `
    UPDATE ${deliveries} SET status = 'pending', run_at = ?, blocks_key = FALSE,
           budget_base = CASE status WHEN 'dead' THEN attempts ELSE budget_base END,
           alerted_at = CASE status WHEN 'dead' THEN NULL ELSE alerted_at END,
           completed_at = NULL, updated_at = ?
    WHERE id = ${which} AND status IN ('dead', 'pending') RETURNING event_id`;
  // A blocked delivery waits for the head of its target and ordering key (deliveries_key_queue).
  const keyHeadSql = `(SELECT h.id FROM ${deliveries} d JOIN ${deliveries} h
      ON h.target = d.target AND h.ordering_key = d.ordering_key
     AND ${inKeyQueueSql(driver.dialect, "h")}
    WHERE d.id = ? AND d.status = 'blocked'
    ORDER BY h.order_version, h.id LIMIT 1)`;
  const next = eventStatusSql(driver.dialect, { deliveries, event: "ev.id" });
  const refreshSql = `
    UPDATE ${events} AS ev SET status = ${next}
    WHERE ev.id IN (SELECT event_id FROM ${deliveries} WHERE id = ? OR id = ${keyHeadSql})
      AND ev.status <> ${next}`;
  return (id: string, now: number): Array<[string, unknown[]]> => [
    [runNowSql("?"), [now, now, id]],
    [runNowSql(keyHeadSql), [now, now, id]],
    [`SELECT status FROM ${deliveries} WHERE id = ?`, [id]],
    [refreshSql, [id, id]],
  ];
}
