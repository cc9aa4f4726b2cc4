import { hookinboxError } from "../../errors.ts";

/**
 * Default and maximum page sizes of `listEvents`.
 *
 * @example
 * ```ts
 * const limit = Math.min(requested ?? listLimits.default, listLimits.max);
 * ```
 */
export const listLimits = { default: 50, max: 500 } as const;

const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
const idPatterns = { evt: idPattern("evt"), dlv: idPattern("dlv"), rcp: idPattern("rcp") } as const;

/**
 * Encodes the last id of a page as an opaque cursor (base64url).
 *
 * @example
 * ```ts
 * encodeCursor("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V"); // "ZXZ0XzAxSkQ3…"
 * ```
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, "utf8").toString("base64url");
}

/**
 * Decodes a cursor made by `encodeCursor`; anything else throws HOOKINBOX_CURSOR_INVALID.
 *
 * @example
 * ```ts
 * decodeCursor(encodeCursor("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V")); // "evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V"
 * decodeCursor("nope"); // throws HookinboxError HOOKINBOX_CURSOR_INVALID
 * ```
 */
export function decodeCursor(cursor: string, prefix: "evt" | "dlv" | "rcp" = "evt"): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  const pattern = idPatterns[prefix];
  if (!pattern.test(id) || encodeCursor(id) !== cursor) {
    throw hookinboxError("HOOKINBOX_CURSOR_INVALID");
  }
  return id;
}

/**
 * Validates `limit`: an integer in 1..500, default 50; otherwise HOOKINBOX_QUERY_INVALID.
 *
 * @example
 * ```ts
 * pageLimit(undefined); // 50
 * pageLimit(0); // throws HookinboxError HOOKINBOX_QUERY_INVALID
 * ```
 */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return listLimits.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > listLimits.max) {
    throw hookinboxError(
      "HOOKINBOX_QUERY_INVALID",
      `limit must be an integer from 1 to ${listLimits.max}`,
    );
  }
  return limit;
}

/**
 * A newest-first page from rows read with `LIMIT limit + 1`: at most `limit` items, and a cursor
 * after the last exactly when the extra row came back.
 *
 * @example
 * ```ts
 * const rows = query(`… ORDER BY id DESC LIMIT ${limit + 1}`);
 * return pageOf(rows, limit, toReceiptRecord); // { items, nextCursor }
 * ```
 */
export function pageOf<R extends { id: string }, V>(
  rows: readonly R[],
  limit: number,
  view: (row: R) => V,
): { items: V[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((row) => view(row)),
    nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}
