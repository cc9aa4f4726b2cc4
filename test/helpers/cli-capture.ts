import { Writable } from "node:stream";
import { main } from "../../src/cli/main.ts";

/** Runs the `hookinbox` CLI in this process with `env`, capturing its exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    cwd: process.cwd(),
    env,
    stdout: sink((s) => {
      stdout += s;
    }),
    stderr: sink((s) => {
      stderr += s;
    }),
  });
  return { code, stdout, stderr };
}
