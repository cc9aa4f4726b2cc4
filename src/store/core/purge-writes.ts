import { ulidTimePrefix } from "../../ids.ts";
import { purgeDigests } from "../purge-row.ts";
import { UNFINISHED_DELIVERY_STATUSES } from "../purge-types.ts";
import type { Store } from "../types.ts";
import { type ReadDriver, rowsOf } from "./read-driver.ts";
import { nextCursor, SCAN_FACTOR, type ScanWindow } from "./scan-window.ts";
import { inList, listValue } from "./sql-template.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";

/** An event whose payload may go: its id, body and headers as stored. */
interface PurgeRow {
  id: string;
  body: Buffer;
  headers: string | [string, string][];
}

/**
 * Payload purging once for both stores: a batch picks events below the `before` time prefix
 * after the cursor, received before `before`, not purged and without an unfinished delivery
 * (on SQLite within the next `limit × SCAN_FACTOR` ids, walked on the primary key alone, handing
 * back the window's end as the cursor when it found nothing), keeps their body and header
 * digests (what their audit leaves committed to) and empties body and headers. The digests are
 * made from the rows as read; the write re-checks in its own statement that each event is still
 * unpurged and has no unfinished delivery, so a replay or purge in between leaves it as it is
 * (a payload never changes while it is unpurged). The audit leaf is untouched.
 *
 * @example
 * ```ts
 * const { purgePayloads } = purgeWrites(driver);
 * await purgePayloads({ before, afterId: "", limit: 500, now: Date.now(), dryRun: false });
 * ```
 */
export function purgeWrites(driver: ReadDriver & WriteDriver): Pick<Store, "purgePayloads"> {
  const { dialect } = driver;
  const [events, deliveries] = [driver.table("events"), driver.table("deliveries")];
  const finished = (eventId: string) =>
    `NOT EXISTS (SELECT 1 FROM ${deliveries} d WHERE d.event_id = ${eventId} AND ${inList(dialect, "d.status")})`;
  const unfinished = listValue(dialect, UNFINISHED_DELIVERY_STATUSES);
  return {
    async purgePayloads(input) {
      const cut = `evt_${ulidTimePrefix(input.before)}`;
      // SQLite: the ids this batch may look at, up to `end` (inclusive); `full` when bounded.
      let window: ScanWindow = { end: null, full: false };
      if (dialect === "sqlite") {
        const bound = input.limit * SCAN_FACTOR;
        const [row] = await rowsOf<{ end: string | null; n: number }>(
          driver,
          `SELECT max(id) AS end, count(*) AS n
           FROM (SELECT id FROM ${events} WHERE id > ? AND id < ? ORDER BY id LIMIT ?)`,
          [input.afterId, cut, bound],
        );
        window = { end: row?.end ?? null, full: (row?.n ?? 0) >= bound };
        if (window.end === null) return { purged: 0, nextAfterId: null };
      }
      const rows = await rowsOf<PurgeRow>(
        driver,
        `SELECT e.id, e.body, e.headers FROM ${events} e
         WHERE e.id > ? AND e.id ${window.end === null ? "<" : "<="} ? AND e.purged_at IS NULL
           AND e.received_at < ? AND ${finished("e.id")}
         ORDER BY e.id LIMIT ?`,
        [input.afterId, window.end ?? cut, Math.floor(input.before), unfinished, input.limit],
      );
      let purged = rows.length;
      if (!input.dryRun && rows.length > 0) {
        const digests = rows.map((r) =>
          purgeDigests(r.body, typeof r.headers === "string" ? JSON.parse(r.headers) : r.headers),
        );
        const emptied =
          dialect === "postgres"
            ? "body = '\\x', headers = '[]'::jsonb"
            : "body = X'', headers = '[]'";
        const still = `e.purged_at IS NULL AND ${finished("e.id")}`;
        const results = await executeText(
          driver,
          dialect === "postgres"
            ? [
                [
                  `UPDATE ${events} e SET ${emptied}, purged_at = ?,
                          body_sha256 = p.body_sha256, headers_sha256 = p.headers_sha256
                   FROM unnest(?::text[], ?::bytea[], ?::bytea[]) AS p (id, body_sha256, headers_sha256)
                   WHERE e.id = p.id AND ${still}`,
                  [
                    input.now,
                    rows.map((r) => r.id),
                    digests.map((d) => d.bodySha256),
                    digests.map((d) => d.headersSha256),
                    unfinished,
                  ],
                ],
              ]
            : rows.map((r, i) => [
                `UPDATE ${events} AS e SET ${emptied}, purged_at = ?, body_sha256 = ?, headers_sha256 = ?
                 WHERE e.id = ? AND ${still}`,
                [input.now, digests[i]!.bodySha256, digests[i]!.headersSha256, r.id, unfinished],
              ]),
        );
        purged = results.reduce((sum, r) => sum + r.rowCount, 0);
      }
      return { purged, nextAfterId: nextCursor(rows, input.limit, window) };
    },
  };
}
