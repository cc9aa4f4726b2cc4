import { hookinboxError } from "../../errors.ts";

/**
 * The operator's "run now" once its direct step (dead → pending with a fresh budget, pending →
 * due now) changed nothing, by the delivery's status: no delivery → `none` (not found), blocked
 * → `run-key-head` (run the head of its ordering key, so order holds); running or finished
 * throws HOOKINBOX_DELIVERY_NOT_RETRYABLE.
 *
 * @example
 * ```ts
 * if (retryFallback(row?.status) === "run-key-head") runNow(headOf(id));
 * ```
 */
export function retryFallback(status: string | null | undefined): "none" | "run-key-head" {
  if (status === null || status === undefined) return "none";
  if (status === "blocked") return "run-key-head";
  throw hookinboxError("HOOKINBOX_DELIVERY_NOT_RETRYABLE", `delivery is ${status}`);
}
