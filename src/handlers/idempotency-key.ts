import { createHash } from "node:crypto";

/**
 * A deterministic key for one named side effect of one provider event: the same (source,
 * provider event id, name) always gives the same key, across retries, replays and processes.
 * Pass it to APIs that deduplicate on a key (Stripe's `Idempotency-Key`, …).
 *
 * @example
 * ```ts
 * idempotencyKey("stripe", "evt_123", "refund"); // "hookinbox-3f1c…" (48 characters)
 * ```
 */
export function idempotencyKey(source: string, dedupKey: string, name: string): string {
  const digest = createHash("sha256").update(`${source}\0${dedupKey}\0${name}`).digest("hex");
  return `hookinbox-${digest.slice(0, 38)}`;
}
