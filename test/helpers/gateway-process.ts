import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./temp.ts";

/** A gateway running as a real child process (`hookinbox start`), with its output captured. */
export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything the process wrote so far to stdout and stderr. */
  output(): { stdout: string; stderr: string };
  /** Waits for the process to exit (after a kill or SIGTERM). */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Writes a JSON config into `dir` and starts `hookinbox start --port 0` there. */
export async function spawnGateway(
  dir: string,
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  options: { maxOpenFiles?: number } = {},
): Promise<GatewayProcess> {
  const configPath = join(dir, "hookinbox.config.json");
  writeFileSync(configPath, JSON.stringify(config));
  return spawnCommand(dir, ["start", "--config", configPath, "--port", "0"], env, options);
}

/**
 * Starts `hookinbox <args>` in `cwd` and resolves once it says where it listens (or, with
 * `ready`, once its stderr matches that pattern: e.g. a `--role worker` process, whose `url` is
 * then empty). `hookinbox` is this checkout's bin/hookinbox.mjs unless `command` names another
 * (such as `["npx", "hookinbox"]` in a clone); with `group`, the process leads its own process
 * group, which `stopGroup` ends with everything it started.
 */
export function spawnCommand(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  options: {
    ready?: RegExp;
    maxOpenFiles?: number;
    command?: readonly string[];
    group?: boolean;
  } = {},
): Promise<GatewayProcess> {
  const ready = options.ready ?? /listening on (http:\/\/[^\s]+)/;
  const command = [
    ...(options.command ?? [process.execPath, join(repoRoot, "bin/hookinbox.mjs")]),
    ...args,
  ];
  // A file-descriptor limit (soft and hard, so Node cannot raise it) through the shell's ulimit.
  const [file, ...argv] =
    options.maxOpenFiles === undefined
      ? command
      : ["/bin/sh", "-c", `ulimit -n ${options.maxOpenFiles} && exec "$@"`, "sh", ...command];
  const child = spawn(file!, argv, {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.group === true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${stderr}`)), 60_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = ready.exec(stderr);
      if (match) {
        clearTimeout(timer);
        const url = match[1]?.startsWith("http") ? match[1] : "";
        resolve({ child, url, output: () => ({ stdout, stderr }), exited: () => exit });
      }
    });
    exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${stderr}`));
    });
  });
}

/** Sends SIGTERM to the process group a `group: true` command leads; waits for its leader. */
export async function stopGroup(gateway: GatewayProcess): Promise<void> {
  const pid = gateway.child.pid;
  if (pid === undefined || gateway.child.exitCode !== null || gateway.child.signalCode !== null)
    return;
  const exited = gateway.exited();
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  await exited;
}
