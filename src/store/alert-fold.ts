import { encodeTime, ulid } from "../ids.ts";
import type { AlertOccurrence, AlertRecord } from "./alert-types.ts";

/**
 * A lower bound on the ids of receipts received at or after `since` (ms): ids are `rcp_<ulid>`,
 * and a ULID's time is never before the time it was made for, so this bound keeps every such
 * receipt while the primary key skips older ones (the query still filters on received_at).
 *
 * @example
 * ```ts
 * receiptIdFloor(Date.now() - 300_000); // "rcp_01KB…"
 * ```
 */
export function receiptIdFloor(since: number): string {
  return `rcp_${encodeTime(Math.max(0, Math.floor(since)))}`;
}

/**
 * Where an occurrence goes: into the condition's waiting alert (its slot is still ahead and it
 * was never tried), or a new alert whose slot is now or one window after the previous slot.
 *
 * @example
 * ```ts
 * foldTarget({ waiting: null, lastSlot: 1_000, now: 1_500, windowMs: 60_000 }); // { newSlot: 61_000 }
 * ```
 */
export function foldTarget(input: {
  waiting: string | null;
  lastSlot: number | null;
  now: number;
  windowMs: number;
}): { foldInto: string } | { newSlot: number; id: string } {
  if (input.waiting) return { foldInto: input.waiting };
  const slot =
    input.lastSlot === null ? input.now : Math.max(input.now, input.lastSlot + input.windowMs);
  return { newSlot: Math.floor(slot), id: `alr_${ulid()}` };
}

/**
 * The occurrences of a held-effect alert record, each payload given the effect's id (known only
 * inside the transaction that holds it).
 *
 * @example
 * ```ts
 * withEffectId(record, "eff_01…")[0]?.payload.effectId; // "eff_01…"
 * ```
 */
export function withEffectId(record: AlertRecord, effectId: string): AlertOccurrence[] {
  return record.occurrences.map((occurrence) => ({
    ...occurrence,
    payload: { ...occurrence.payload, effectId },
  }));
}
