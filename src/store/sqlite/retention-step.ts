import type { RetentionProgramInput } from "../core/retention-step.ts";
import { retentionProgram } from "../core/retention-step.ts";
import type { SqlResult, SqlStatement } from "../core/sql-template.ts";
import { driveProgram, type ProgramContext } from "../core/write-program.ts";
import type { RetentionStepResult } from "../retention-types.ts";
import type { AuditAppender } from "./audit.ts";

const sqlite: ProgramContext = { dialect: "sqlite", table: (name) => name };

/**
 * Runs core's retention program (core/retention-step.ts) with `run`, the write primitive of the
 * group transaction it is called in, and appends the retention leaves it answers through the
 * writer's shared audit appender, in that same transaction (a transaction's appends share its
 * tree state). On the writer thread too, which receives only the plain-data input.
 *
 * @example
 * ```ts
 * runRetentionProgram(prepareRunStatements(db), log, { step: "rows", input, partition: null });
 * ```
 */
export function runRetentionProgram(
  run: (statements: readonly SqlStatement[]) => SqlResult<unknown>[],
  log: AuditAppender,
  program: RetentionProgramInput,
): RetentionStepResult {
  const { result, leaves } = driveProgram(retentionProgram(sqlite, program), run);
  for (const leaf of leaves) log.appendRetention(leaf.unique, leaf.fields);
  return result;
}
