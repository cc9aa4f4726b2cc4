import type pg from "pg";
import { ulid } from "../../ids.ts";
import type { RejectionInput } from "../types.ts";
import { withRetry } from "./connection.ts";
import { withPartition } from "./partitions.ts";
import type { SchemaNames } from "./schema-names.ts";

const rejectionSql = (t: SchemaNames) => `
  INSERT INTO ${t.receipts} (id, event_id, source, received_at, duplicate, remote_address, status, code, size, header_names, rejected)
  VALUES ($1, NULL, $2, $3, false, $4, $5, $6, $7, $8::jsonb, true)`;

/**
 * Records a rejected request's metadata (never its body).
 *
 * @example
 * ```ts
 * await recordRejectionPostgres(pool, schemaNames("hookinbox"), rejection);
 * ```
 */
export async function recordRejectionPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  input: RejectionInput,
): Promise<void> {
  const at = Math.floor(input.receivedAt);
  const id = `rcp_${ulid(at)}`;
  await withPartition(pool, t, [id], () =>
    pool.query(rejectionSql(t), [
      id,
      input.source,
      at,
      input.remoteAddress,
      input.status,
      input.code,
      input.size,
      JSON.stringify(input.headerNames),
    ]),
  );
}

/**
 * Deletes up to `limit` rejected receipts received before `before` (ms), oldest first.
 *
 * @example
 * ```ts
 * await pruneRejectionsPostgres(pool, schemaNames("hookinbox"), Date.now() - 7 * 86_400_000, 1000);
 * ```
 */
export async function pruneRejectionsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  before: number,
  limit: number,
): Promise<number> {
  const result = await withRetry(() =>
    pool.query(
      `DELETE FROM ${t.receipts_rejected} WHERE id IN (
         SELECT id FROM ${t.receipts_rejected} WHERE received_at < $1 ORDER BY id LIMIT $2)`,
      [Math.floor(before), limit],
    ),
  );
  return result.rowCount ?? 0;
}
