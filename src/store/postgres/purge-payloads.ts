import type pg from "pg";
import { ulidTimePrefix } from "../../ids.ts";
import { purgeDigests } from "../purge-row.ts";
import {
  type PurgeBatchInput,
  type PurgeBatchResult,
  UNFINISHED_DELIVERY_STATUSES,
} from "../purge-types.ts";
import { withRetry, withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * One batch of payload purging on PostgreSQL, in one short transaction (see the SQLite
 * counterpart for the rules): rows are locked FOR UPDATE as they are picked, so a concurrent
 * replay of the same event waits for the batch instead of reading a half-purged row.
 *
 * @example
 * ```ts
 * await purgePayloadsPostgres(pool, t, { before, afterId: "", limit: 500, now: Date.now(), dryRun: true });
 * ```
 */
export async function purgePayloadsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  input: PurgeBatchInput,
): Promise<PurgeBatchResult> {
  return withRetry(() =>
    withTransaction(pool, async (client) => {
      const { rows } = await client.query<{
        id: string;
        body: Buffer;
        headers: [string, string][];
      }>(
        `SELECT e.id, e.body, e.headers FROM ${t.events} e
         WHERE e.id > $1 AND e.id < $2 AND e.purged_at IS NULL AND e.received_at < $5
           AND NOT EXISTS (SELECT 1 FROM ${t.deliveries} d WHERE d.event_id = e.id AND d.status = ANY($4::text[]))
         ORDER BY e.id LIMIT $3 FOR UPDATE OF e`,
        [
          input.afterId,
          `evt_${ulidTimePrefix(input.before)}`,
          input.limit,
          UNFINISHED_DELIVERY_STATUSES,
          Math.floor(input.before),
        ],
      );
      if (!input.dryRun && rows.length > 0) {
        const digests = rows.map((r) => purgeDigests(r.body, r.headers));
        await client.query(
          `UPDATE ${t.events} e SET body = '\\x', headers = '[]'::jsonb, purged_at = $1,
                  body_sha256 = p.body_sha256, headers_sha256 = p.headers_sha256
           FROM unnest($2::text[], $3::bytea[], $4::bytea[]) AS p (id, body_sha256, headers_sha256)
           WHERE e.id = p.id`,
          [
            input.now,
            rows.map((r) => r.id),
            digests.map((d) => d.bodySha256),
            digests.map((d) => d.headersSha256),
          ],
        );
      }
      return {
        purged: rows.length,
        nextAfterId: rows.length < input.limit ? null : rows[rows.length - 1]!.id,
      };
    }),
  );
}
