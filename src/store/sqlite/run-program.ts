import {
  type ProgramInput,
  type ProgramName,
  type ProgramOutput,
  startProgram,
} from "../core/program-writes.ts";
import type { SqlResult, SqlStatement } from "../core/sql-template.ts";
import { driveProgram, type ProgramContext } from "../core/write-program.ts";

const sqlite: ProgramContext = { dialect: "sqlite", table: (name) => name };

/**
 * Runs core's write program `name` on `input` (core/program-writes.ts) with `run`, the write
 * primitive of the group transaction it is called in: every step synchronously, so the whole
 * program commits or rolls back with that transaction (on the writer thread too, which receives
 * only the name and the input).
 *
 * @example
 * ```ts
 * const claim = runWriteProgram(prepareRunStatements(db), "claimEffect", input);
 * ```
 */
export function runWriteProgram<N extends ProgramName>(
  run: (statements: readonly SqlStatement[]) => SqlResult<unknown>[],
  name: N,
  input: ProgramInput<N>,
): ProgramOutput<N> {
  return driveProgram(startProgram(sqlite, name, input), run);
}
