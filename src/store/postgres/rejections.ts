import type pg from "pg";
import { ulid } from "../../ids.ts";
import type { RejectionInput } from "../types.ts";
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
