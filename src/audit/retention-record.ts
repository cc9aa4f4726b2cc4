import type { RetentionLeafFields, RetentionRecordKind } from "./retention-leaf.ts";

/**
 * A retention leaf's `audit_leaves.event_id`: `ret_<unique>` and the record's fields, each after a
 * `/`: `ret_01J…/events/evt_…/evt_…/500/1767225600000` (kind, first id, last id, rows deleted,
 * cut in ms). The fields live in the leaf's own row, so verify recomputes the leaf from it.
 *
 * @example
 * ```ts
 * retentionLeafId(ulid(), { kind: "receipts", firstId, lastId, removed: 3, cut }); // "ret_01J…/receipts/rcp_…/rcp_…/3/1767…"
 * ```
 */
export function retentionLeafId(unique: string, fields: Omit<RetentionLeafFields, "seq">): string {
  const cut = Math.floor(fields.cut);
  return `ret_${unique}/${fields.kind}/${fields.firstId}/${fields.lastId}/${fields.removed}/${cut}`;
}

const integer = /^-?\d{1,16}$/;

/**
 * The fields of a retention leaf's id (see {@link retentionLeafId}); null when it is not one or is
 * malformed.
 *
 * @example
 * ```ts
 * parseRetentionLeafId("ret_01J…/events/evt_A/evt_B/2/1767225600000"); // { kind: "events", firstId: "evt_A", … }
 * ```
 */
export function parseRetentionLeafId(id: string): Omit<RetentionLeafFields, "seq"> | null {
  const parts = id.split("/");
  if (parts.length !== 6 || !parts[0]?.startsWith("ret_")) return null;
  const [, kind, firstId, lastId, removed, cut] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (kind !== "events" && kind !== "receipts") return null;
  if (!integer.test(removed) || !integer.test(cut) || firstId > lastId) return null;
  return { kind, firstId, lastId, removed: Number(removed), cut: Number(cut) };
}

/**
 * Whether a leaf's id names a retention record.
 *
 * @example
 * ```ts
 * isRetentionLeafId("ret_01J…/events/evt_A/evt_B/2/1767225600000"); // true
 * ```
 */
export const isRetentionLeafId = (id: string) => id.startsWith("ret_");

/**
 * One retention record as verify looks ids up in it: its leaf and its inclusive id range.
 *
 * @example
 * ```ts
 * const range: RetentionRange = { seq: 120, firstId: "evt_A", lastId: "evt_B" };
 * ```
 */
export interface RetentionRange {
  readonly seq: number;
  readonly firstId: string;
  readonly lastId: string;
}

/**
 * The retention records of the stored log, by kind, for "was this missing row deleted by
 * retention?": ranges sorted by first id, with the largest last id so far, so a lookup is a binary
 * search and a short walk back.
 *
 * @example
 * ```ts
 * const index = retentionIndex(records);
 * index.coveringLeaf("events", "evt_01J…"); // 120, or null
 * ```
 */
export function retentionIndex(
  records: ReadonlyArray<{ readonly seq: number; readonly eventId: string }>,
): { coveringLeaf(kind: RetentionRecordKind, id: string): number | null } {
  const byKind = new Map<RetentionRecordKind, { ranges: RetentionRange[]; maxLast: string[] }>();
  for (const kind of ["events", "receipts"] as const) {
    const ranges = records
      .flatMap((r) => {
        const fields = parseRetentionLeafId(r.eventId);
        return fields && fields.kind === kind ? [{ seq: r.seq, ...fields }] : [];
      })
      .sort((a, b) => (a.firstId < b.firstId ? -1 : a.firstId > b.firstId ? 1 : 0));
    const maxLast: string[] = [];
    for (const r of ranges) {
      const before = maxLast[maxLast.length - 1];
      maxLast.push(before !== undefined && before > r.lastId ? before : r.lastId);
    }
    byKind.set(kind, { ranges, maxLast });
  }
  return {
    coveringLeaf(kind, id) {
      const { ranges, maxLast } = byKind.get(kind)!;
      let low = 0;
      let high = ranges.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (ranges[mid]!.firstId <= id) low = mid + 1;
        else high = mid;
      }
      for (let i = low - 1; i >= 0 && maxLast[i]! >= id; i--) {
        if (ranges[i]!.lastId >= id) return ranges[i]!.seq;
      }
      return null;
    },
  };
}

/**
 * The id of an event's first receipt: since version-2 event leaves, a new event and its first
 * receipt share one ULID (`evt_X` and `rcp_X`), so verify finds the receipt by primary key.
 *
 * @example
 * ```ts
 * firstReceiptIdOf("evt_01JD7…"); // "rcp_01JD7…"
 * ```
 */
export const firstReceiptIdOf = (eventId: string) => `rcp_${eventId.slice(4)}`;

/**
 * The `retention_marks` name under which retention keeps an event's first receipt's remote
 * address and secret index when it deletes that receipt and the event stays (verify needs them to
 * recompute the event's leaf).
 *
 * @example
 * ```ts
 * firstReceiptMarkName("evt_01JD7…"); // "first_receipt:evt_01JD7…"
 * ```
 */
export const firstReceiptMarkName = (eventId: string) => `first_receipt:${eventId}`;
