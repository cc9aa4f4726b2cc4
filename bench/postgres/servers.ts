// `hookinbox start` on a PostgreSQL store, as its own process, for the ingest half of
// bench/postgres.ts. The same launch as bench/ingest/servers.ts (whose launcher writes an SQLite
// config and is not exported), with the store URL swapped.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { STRIPE_SECRET } from "../ingest/requests.ts";
import type { ServerUnderTest } from "../ingest/servers.ts";
import { repoRoot, watchMemory } from "../ingest/servers.ts";

/**
 * `hookinbox start --config <json> --port 0` with `store` = a PostgreSQL URL, one `stripe`
 * source and default ("info") logging to /dev/null: the same gateway bench:ingest runs. `extra`
 * adds config keys (bench:forward adds destinations and routes, and passes an SQLite URL too).
 */
export function startHookinboxPostgres(
  dir: string,
  store: string,
  cpuProfile = false,
  extra: Record<string, unknown> = {},
): Promise<ServerUnderTest> {
  const config = join(dir, "hookinbox.config.json");
  writeFileSync(
    config,
    JSON.stringify({
      store,
      sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
      ...extra,
    }),
  );
  const profile = cpuProfile ? ["--cpu-prof", "--cpu-prof-dir", join(dir, "profile")] : [];
  const args = [
    ...profile,
    join(repoRoot, "bin/hookinbox.mjs"),
    "start",
    "--config",
    config,
    "--port",
    "0",
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let started = false;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 20_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (!url || started) return;
      started = true;
      clearTimeout(timer);
      const pid = child.pid!;
      const memory = watchMemory(pid);
      resolve({
        pid,
        target: `${url}/webhooks/stripe`,
        memory,
        async stop() {
          memory.stop();
          child.kill("SIGTERM");
          const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
          await exited;
          clearTimeout(kill);
        },
      });
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${stderr}`)));
  });
}
