import { hookinboxError } from "../errors.ts";
import type { Store } from "../store/types.ts";
import { proveConsistency, proveInclusion } from "./log.ts";

/**
 * A tree size from a query (`?size=`, `?from=`): a non-negative integer no larger than the
 * stored tree; anything else is HOOKINBOX_QUERY_INVALID naming the parameter.
 *
 * @example
 * ```ts
 * parseTreeSize("8", "size", 21); // 8
 * ```
 */
export function parseTreeSize(value: string | null | undefined, name: string, max: number): number {
  if (value === null || value === undefined || !/^\d{1,15}$/.test(value) || Number(value) > max) {
    throw hookinboxError(
      "HOOKINBOX_QUERY_INVALID",
      `${name} must be a tree size from 0 to ${max} (the log's current size)`,
    );
  }
  return Number(value);
}

/**
 * The inclusion proof of an event's leaf, as the API and CLI show it (hex hashes). Everything an
 * auditor needs to recompute the leaf from the event as they received it is named in
 * docs/audit.md. HOOKINBOX_AUDIT_LEAF_PENDING (409) when its leaf is accepted but not sequenced
 * yet (PostgreSQL, within the maximum merge delay), HOOKINBOX_AUDIT_NOT_IN_LOG when the event has
 * no leaf within `size`.
 *
 * @example
 * ```ts
 * const proof = await inclusionProofJson(store, "evt_…", head.size);
 * ```
 */
export async function inclusionProofJson(
  store: Pick<Store, "auditLeafOf" | "auditSubtrees" | "auditLeafPending">,
  eventId: string,
  size: number,
) {
  const proof = await proveInclusion(store, eventId, size);
  if (!proof && (await store.auditLeafPending(eventId)))
    throw hookinboxError("HOOKINBOX_AUDIT_LEAF_PENDING", eventId);
  if (!proof) throw hookinboxError("HOOKINBOX_AUDIT_NOT_IN_LOG", `${eventId} at size ${size}`);
  return {
    eventId,
    leafIndex: proof.seq,
    treeSize: proof.size,
    leafHash: proof.leafHash.toString("hex"),
    proof: proof.proof.map((h) => h.toString("hex")),
  };
}

/**
 * The consistency proof between two tree sizes, as the API and CLI show it (hex hashes).
 *
 * @example
 * ```ts
 * const { proof } = await consistencyProofJson(store, 6, 8);
 * ```
 */
export async function consistencyProofJson(
  store: Pick<Store, "auditSubtrees">,
  from: number,
  to: number,
) {
  if (from > to) {
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", "from must not be larger than to");
  }
  const proof = await proveConsistency(store, from, to);
  return { from, to, proof: proof.map((h) => h.toString("hex")) };
}
