import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProbeReport } from "../../src/testing/probe/run-probe.ts";
import { fixtureSecret } from "../fixtures/receivers/kit.ts";
import { startReserialiseReceiver } from "../fixtures/receivers/reserialise.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { type GatewayProcess, spawnCommand } from "../helpers/gateway-process.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// `hookinbox probe` from the command line: against hookinbox itself (a real gateway process
// with an in-process handler, over loopback) every one of the eight checks passes; against a
// buggy receiver the table names the failed check and the exit code is 1.

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const cli = (args: string[]) =>
  runCli(args, { PATH: process.env.PATH ?? "", HOOKINBOX_SECRET: fixtureSecret });

describe("hookinbox probe (CLI)", () => {
  it("hookinbox itself, as a real gateway process, passes all eight checks", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const effectsFile = join(tmp.dir, "effects.jsonl");
    const gateway: GatewayProcess = await spawnCommand(
      tmp.dir,
      [
        "start",
        "--config",
        join(repoRoot, "test/fixtures/receivers/hookinbox.config.ts"),
        "--port",
        "0",
      ],
      { PROBE_STORE: join(tmp.dir, "probe.db"), PROBE_EFFECTS_FILE: effectsFile },
    );
    cleanups.push(async () => {
      gateway.child.kill("SIGTERM");
      await gateway.exited();
    });
    const effects = `node ${join(repoRoot, "test/fixtures/receivers/effects-from-file.mjs")} ${effectsFile}`;
    const result = await cli([
      "probe",
      `${gateway.url}/webhooks/stripe`,
      "--provider",
      "stripe",
      "--effects",
      effects,
      "--quiet",
      "500",
      "--json",
    ]);
    const report = JSON.parse(result.stdout) as ProbeReport;
    expect(report.checks.map((c) => [c.key, c.outcome, c.detail])).toEqual(
      report.checks.map((c) => [c.key, "pass", c.detail]),
    );
    expect(report.checks).toHaveLength(8);
    expect(result.code).toBe(0);
  });

  it("a buggy receiver: the table shows the failed check and the exit code is 1", async () => {
    const receiver = await startReserialiseReceiver();
    cleanups.push(() => receiver.close());
    const result = await cli([
      "probe",
      receiver.url,
      "--provider",
      "stripe",
      "--effects",
      receiver.effectsUrl,
      "--quiet",
      "300",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^#\s+CHECK\s+RESULT\s+DETAIL$/m);
    expect(result.stdout).toMatch(/^5\s+same JSON with other spacing.*\s+FAIL\s+/m);
    expect(result.stdout.match(/\sPASS\s/g)).toHaveLength(7);
    expect(result.stdout).toContain("1 check failed");
  });

  it("usage errors carry HOOKINBOX_USAGE", async () => {
    const noUrl = await cli(["probe", "--provider", "stripe"]);
    const noProvider = await cli(["probe", "http://127.0.0.1:9/x"]);
    expect([noUrl.code, noProvider.code]).toEqual([2, 2]);
    expect(noUrl.stderr).toMatch(/^hookinbox: HOOKINBOX_USAGE: /);
    expect(noProvider.stderr).toContain("--provider");
  });
});
