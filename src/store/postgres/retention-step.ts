import type pg from "pg";
import { retentionLeafId } from "../../audit/retention-record.ts";
import type { CoreTable } from "../core/read-driver.ts";
import { type RetentionProgramInput, retentionProgram } from "../core/retention-step.ts";
import { driveProgramAsync } from "../core/write-program.ts";
import type { RetentionStepResult } from "../retention-types.ts";
import { retentionLeafParts } from "./audit.ts";
import { runTransactionPostgres } from "./run-transaction.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * Runs core's retention program (core/retention-step.ts) between BEGIN and COMMIT on one
 * connection, retried as a whole on a transient failure, and queues the retention leaves it
 * answers for the sequencer (hookinbox_audit_append_leaves) in that same transaction.
 *
 * @example
 * ```ts
 * await runRetentionProgram(pool, t, { step: "rows", input, partition: null });
 * ```
 */
export function runRetentionProgram(
  pool: pg.Pool,
  t: SchemaNames,
  program: RetentionProgramInput,
): Promise<RetentionStepResult> {
  const ctx = { dialect: "postgres" as const, table: (table: CoreTable) => t[table] };
  return runTransactionPostgres(pool, t, async (tx) => {
    const { result, leaves } = await driveProgramAsync(retentionProgram(ctx, program), (s) =>
      tx.execute(s),
    );
    if (leaves.length > 0) {
      const parts = leaves.map((leaf) => retentionLeafParts(leaf.fields));
      await tx.execute([
        {
          text: `SELECT ${t.hookinbox_audit_append_leaves}($1::text[], $2::bytea[], $3::bytea[])`,
          params: [
            leaves.map((leaf) => retentionLeafId(leaf.unique, leaf.fields)),
            parts.map(([prefix]) => prefix),
            parts.map(([, rest]) => rest),
          ],
        },
      ]);
    }
    return result;
  });
}

/**
 * One bounded batch of the processing rows of the events with ids in [from, to) (core's
 * retention program, `processing` step), in one short transaction of its own: how many
 * deliveries and effects it removed (0: none are left).
 *
 * @example
 * ```ts
 * while ((await deleteProcessingBatchPostgres(pool, t, "evt_01J…", "evt_01K…", 1000)) > 0);
 * ```
 */
export async function deleteProcessingBatchPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  from: string,
  to: string,
  limit: number,
): Promise<number> {
  return (await runRetentionProgram(pool, t, { step: "processing", from, to, limit })).removed;
}
