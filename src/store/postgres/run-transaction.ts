import type pg from "pg";
import type { SqlStatement } from "../core/sql-template.ts";
import type { WriteDriver } from "../core/write-driver.ts";
import { byteaArrayParam } from "./binary-array.ts";
import { withRetry, withTransaction } from "./connection.ts";
import { runOnClient } from "./run-statements.ts";
import type { SchemaNames } from "./schema-names.ts";

/** A parameter as pg sends it: a non-empty list of byte strings goes as a binary bytea[]. */
const bound = (value: unknown): unknown =>
  Array.isArray(value) && value.length > 0 && value.every((v) => v instanceof Uint8Array)
    ? byteaArrayParam(value as Uint8Array[])
    : value;

/**
 * The interactive transaction primitive core's audit sequencing runs on
 * (core/audit-writes.ts's AuditDriver): `work` runs core's statements on one connection between
 * BEGIN and COMMIT, and the whole transaction is retried on a transient failure (one that failed
 * rolled back, so nothing of it stands). A list of Buffers bound as one parameter goes in
 * PostgreSQL's binary array format (binary-array.ts); the statement casts it (`?::bytea[]`).
 *
 * @example
 * ```ts
 * const n = await runTransactionPostgres(pool, t, async (tx) => (await tx.execute([statement]))[0]?.rowCount);
 * ```
 */
export function runTransactionPostgres<T>(
  pool: pg.Pool,
  t: SchemaNames,
  work: (tx: WriteDriver) => Promise<T>,
): Promise<T> {
  return withRetry(() =>
    withTransaction(pool, (client) =>
      work({
        dialect: "postgres",
        table: (name) => t[name],
        execute: (statements: readonly SqlStatement[]) => runOnClient(client, statements, bound),
      }),
    ),
  );
}
