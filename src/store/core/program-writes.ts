import { hookinboxError } from "../../errors.ts";
import type { Store } from "../types.ts";
import { recordAlertsProgram } from "./alert-record.ts";
import {
  closeCircuitProgram,
  setDestinationStateProgram,
  wakeCircuitWaitingSql,
} from "./destination-wakes.ts";
import { claimEffectProgram, resolveEffectProgram } from "./effect-writes.ts";
import type { SqlStatement } from "./sql-template.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";
import type { ProgramContext, StepResults, WriteProgram } from "./write-program.ts";

/**
 * Every write program core has, by name: a driver runs one by its name and plain-data input
 * (SQLite's writer thread receives only those), never a closure.
 */
export const writePrograms = {
  claimEffect: claimEffectProgram,
  resolveEffect: resolveEffectProgram,
  recordAlerts: recordAlertsProgram,
  setDestinationState: setDestinationStateProgram,
  closeCircuit: closeCircuitProgram,
};

/** The name of one of core's write programs. */
export type ProgramName = keyof typeof writePrograms;
/** What the program `N` takes. */
export type ProgramInput<N extends ProgramName> = Parameters<(typeof writePrograms)[N]>[1];
/** What the program `N` answers. */
export type ProgramOutput<N extends ProgramName> =
  ReturnType<(typeof writePrograms)[N]> extends Generator<unknown, infer Output, never>
    ? Output
    : never;

/**
 * Starts core's write program `name` on `input` for a store of `ctx`: the generator a driver
 * runs step by step in one transaction (`driveProgram`, `driveProgramAsync`).
 *
 * @example
 * ```ts
 * const claim = driveProgram(startProgram(ctx, "claimEffect", input), run);
 * ```
 */
export function startProgram<N extends ProgramName>(
  ctx: ProgramContext,
  name: N,
  input: ProgramInput<N>,
): Generator<SqlStatement[], ProgramOutput<N>, StepResults> {
  const program = writePrograms[name] as unknown as WriteProgram<ProgramInput<N>, ProgramOutput<N>>;
  return program(ctx, input);
}

/**
 * What a driver gives core for the Store writes that are programs (core/write-program.ts): its
 * `execute` primitive, `runProgram`, which runs core's program `name` on `input` in one
 * transaction and answers its output, and `notifyDeliveries`, which wakes the workers of every
 * process sharing the store after deliveries were made due (PostgreSQL's NOTIFY; nothing on
 * SQLite, whose workers share its process).
 *
 * @example
 * ```ts
 * const woken = await driver.runProgram("closeCircuit", { name: "app", openUntil, now });
 * ```
 */
export interface ProgramDriver extends WriteDriver {
  runProgram<N extends ProgramName>(name: N, input: ProgramInput<N>): Promise<ProgramOutput<N>>;
  notifyDeliveries(): Promise<void>;
}

/** The Store writes core implements as programs (drivers leave them out). */
export type CoreProgramWrites =
  | "claimEffect"
  | "resolveEffect"
  | "recordAlerts"
  | "setDestinationState"
  | "closeCircuit"
  | "wakeCircuitWaiting";

/**
 * The Store writes whose steps depend on what earlier steps answered, once for both stores:
 * claiming an effect (insert-or-get, then the core's decision and the held-effect alert),
 * resolving a held effect, recording alerts, setting a destination's state (with its wake and
 * alert) and closing its circuit; plus waking deliveries waiting for a half-open circuit (one
 * statement). Each runs in one transaction on the driver; a write that made deliveries due
 * wakes every process's workers.
 *
 * @example
 * ```ts
 * const writes = programWrites(driver);
 * const claim = await writes.claimEffect(input);
 * ```
 */
export function programWrites(driver: ProgramDriver): Pick<Store, CoreProgramWrites> {
  /** Wakes other processes' workers when `woken` deliveries were made due (best effort). */
  const woke = async <T extends number | null>(woken: T): Promise<T> => {
    if (woken !== null && woken > 0) await driver.notifyDeliveries().catch(() => undefined);
    return woken;
  };
  return {
    claimEffect: (input) => driver.runProgram("claimEffect", input),
    async resolveEffect(effectId, resolution, now, result) {
      const outcome = await driver.runProgram("resolveEffect", {
        effectId,
        resolution,
        now,
        ...(result === undefined ? {} : { result }),
      });
      if ("notHeld" in outcome) {
        throw hookinboxError("HOOKINBOX_EFFECT_NOT_HELD", `effect is ${outcome.notHeld}`);
      }
      return outcome.view;
    },
    async recordAlerts(occurrences, input) {
      if (occurrences.length === 0) return;
      await driver.runProgram("recordAlerts", { occurrences, ...input });
    },
    setDestinationState: (name, state, reason, now, alert) =>
      driver.runProgram("setDestinationState", { name, state, reason, now, alert }),
    async closeCircuit(name, openUntil, now) {
      return woke(await driver.runProgram("closeCircuit", { name, openUntil, now }));
    },
    async wakeCircuitWaiting(name, now, limit) {
      if (limit <= 0) return 0;
      const [result] = await executeText(driver, [
        wakeCircuitWaitingSql(driver.dialect, driver.table("deliveries"), name, now, limit),
      ]);
      return woke(result?.rowCount ?? 0);
    },
  };
}
