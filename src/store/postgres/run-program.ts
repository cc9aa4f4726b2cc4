import type pg from "pg";
import {
  type ProgramInput,
  type ProgramName,
  type ProgramOutput,
  startProgram,
} from "../core/program-writes.ts";
import type { CoreTable } from "../core/read-driver.ts";
import { driveProgramAsync } from "../core/write-program.ts";
import { withRetry, withTransaction } from "./connection.ts";
import { runOnClient } from "./run-statements.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * Runs core's write program `name` on `input` (core/program-writes.ts) between BEGIN and COMMIT
 * on one connection, each step's statements in order; on a transient failure the transaction
 * rolled back and the whole program runs again from its start.
 *
 * @example
 * ```ts
 * const claim = await runWriteProgram(pool, schemaNames("hookinbox"), "claimEffect", input);
 * ```
 */
export function runWriteProgram<N extends ProgramName>(
  pool: pg.Pool,
  t: SchemaNames,
  name: N,
  input: ProgramInput<N>,
): Promise<ProgramOutput<N>> {
  const ctx = { dialect: "postgres" as const, table: (table: CoreTable) => t[table] };
  return withRetry(() =>
    withTransaction(pool, (client) =>
      driveProgramAsync(startProgram(ctx, name, input), (statements) =>
        runOnClient(client, statements),
      ),
    ),
  );
}
