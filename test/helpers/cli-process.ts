import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./temp.ts";

const run = promisify(execFile);

/**
 * Runs `bin/hookinbox.mjs` as a child process in `cwd` (PATH only in its environment), resolving
 * with its exit code and output whether it succeeds or not.
 *
 * @example
 * ```ts
 * const { code, stdout } = await hookinboxProcess(dir, ["work", "--once"]);
 * ```
 */
export function hookinboxProcess(
  cwd: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [join(repoRoot, "bin/hookinbox.mjs"), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "" },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}
