import { readHeaders } from "../ingest/headers.ts";
import { identify } from "../ingest/identify.ts";
import type { IdentitySpec } from "../providers/types.ts";
import type { EventIdentity } from "../store/types.ts";

/** A stored column that ingest derived from the body or headers with the source's identity rules. */
export type DerivedField = "dedup_key" | "type" | "ordering_key" | "occurred_at" | "version";

/** The derived columns of a stored event, as stored. */
export interface StoredIdentity {
  readonly dedupKey: string;
  readonly type: string | null;
  readonly orderingKey: string | null;
  readonly occurredAt: number | null;
  readonly version: number | null;
}

/** What reading a stored payload again with the source's identity rules gave. */
export type Rederivation =
  | { readonly ok: true; readonly identity: StoredIdentity; readonly differing: DerivedField[] }
  | { readonly ok: false; readonly code: string };

/** The identity as the accept path stores it (occurred-at in whole ms). */
const asStored = (identity: EventIdentity): StoredIdentity => ({
  dedupKey: identity.dedupKey,
  type: identity.type,
  orderingKey: identity.orderingKey,
  occurredAt: identity.occurredAt === null ? null : Math.floor(identity.occurredAt),
  version: identity.version,
});

/**
 * Reads an event's identity again from its stored raw body and headers with the source's identity
 * rules (src/ingest/identify.ts, the same code ingest runs) and names each stored column that
 * differs. An identity that cannot be read any more (`HOOKINBOX_EVENT_ID_MISSING`…) is `ok: false`
 * with the code.
 *
 * @example
 * ```ts
 * const r = rederiveIdentity(spec, event.headers, event.body, event);
 * if (r.ok && r.differing.length > 0) console.log(r.differing); // ["type"]
 * ```
 */
export function rederiveIdentity(
  spec: IdentitySpec,
  headers: ReadonlyArray<readonly [string, string]>,
  body: Uint8Array,
  stored: StoredIdentity,
): Rederivation {
  let identity: StoredIdentity;
  try {
    identity = asStored(identify(spec, readHeaders(headers), body));
  } catch (error) {
    return { ok: false, code: (error as { code?: string }).code ?? "HOOKINBOX_INTERNAL_ERROR" };
  }
  const differing: DerivedField[] = [];
  if (identity.dedupKey !== stored.dedupKey) differing.push("dedup_key");
  if (identity.type !== stored.type) differing.push("type");
  if (identity.orderingKey !== stored.orderingKey) differing.push("ordering_key");
  if (identity.occurredAt !== stored.occurredAt) differing.push("occurred_at");
  if (identity.version !== stored.version) differing.push("version");
  return { ok: true, identity, differing };
}
