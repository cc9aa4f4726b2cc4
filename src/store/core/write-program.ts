import { bindText, type CoreTable } from "./read-driver.ts";
import type { SqlDialect, SqlResult, SqlStatement } from "./sql-template.ts";

/** What a write program knows of its store: the dialect and the table names (plain data). */
export interface ProgramContext {
  readonly dialect: SqlDialect;
  table(name: CoreTable): string;
}

/** One step's results, as a driver answers the statements a program yielded. */
export type StepResults = SqlResult<Record<string, unknown>>[];

/**
 * A Store write whose next statement depends on what the previous ones answered (insert or get,
 * then decide), written once in core as a generator: it yields the statements of each step and
 * gets their results back, and returns the Store method's answer. A driver runs every step in
 * one transaction (SQLite: synchronously inside its group commit, on the writer thread too;
 * PostgreSQL: between BEGIN and COMMIT, retried as a whole) and decides nothing.
 *
 * @example
 * ```ts
 * const touch: WriteProgram<{ id: string }, boolean> = function* (ctx, input) {
 *   const [update] = yield* steps(ctx, [[`UPDATE ${ctx.table("effects")} SET claims = 0 WHERE id = ?`, [input.id]]]);
 *   return update?.rowCount === 1;
 * };
 * ```
 */
export type WriteProgram<Input, Output> = (
  ctx: ProgramContext,
  input: Input,
) => Generator<SqlStatement[], Output, StepResults>;

/**
 * One step of a write program: the statements written with `?` placeholders, bound for the
 * context's dialect, yielded to the driver; answers their results in order.
 *
 * @example
 * ```ts
 * const [found] = yield* steps(ctx, [[`SELECT id FROM ${ctx.table("effects")} WHERE id = ?`, [id]]]);
 * ```
 */
export function* steps(
  ctx: ProgramContext,
  statements: ReadonlyArray<readonly [text: string, params: unknown[]]>,
): Generator<SqlStatement[], StepResults, StepResults> {
  return yield statements.map(([text, params]) => bindText(ctx.dialect, text, params));
}

/**
 * Runs a write program's steps with a synchronous statement runner (SQLite's, inside its group
 * commit) and answers what the program returns.
 *
 * @example
 * ```ts
 * const claim = driveProgram(claimEffectProgram(ctx, input), (statements) => run(statements));
 * ```
 */
export function driveProgram<Output>(
  program: Generator<SqlStatement[], Output, StepResults>,
  run: (statements: SqlStatement[]) => SqlResult<unknown>[],
): Output {
  let step = program.next();
  while (!step.done) step = program.next(run(step.value) as StepResults);
  return step.value;
}

/**
 * Runs a write program's steps with an asynchronous statement runner (PostgreSQL's, on one
 * transaction's connection) and answers what the program returns.
 *
 * @example
 * ```ts
 * const claim = await driveProgramAsync(claimEffectProgram(ctx, input), (s) => runOn(client, s));
 * ```
 */
export async function driveProgramAsync<Output>(
  program: Generator<SqlStatement[], Output, StepResults>,
  run: (statements: SqlStatement[]) => Promise<SqlResult<unknown>[]>,
): Promise<Output> {
  let step = program.next();
  while (!step.done) step = program.next((await run(step.value)) as StepResults);
  return step.value;
}
