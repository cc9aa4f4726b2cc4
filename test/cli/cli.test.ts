import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { loadSqliteMigrations } from "../../src/store/sqlite/migrate.ts";
import { spawnCommand } from "../helpers/gateway-process.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

const run = promisify(execFile);
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

function hookinbox(cwd: string, args: string[]) {
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

describe("hookinbox CLI", () => {
  it("starts with no config file on the embedded default, and a newcomer's test event is stored", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const gateway = await spawnCommand(tmp.dir, ["start", "--port", "0"]);
    const banner = gateway.output().stderr;
    expect(banner).toContain("no config file: embedded default");
    expect(banner).toMatch(/demo source "demo" \(Standard Webhooks\), secret: whsec_/);
    const tokenFile = join(tmp.dir, ".hookinbox", "admin-token");
    expect(banner).toContain(
      `admin token (generated for this run; set HOOKINBOX_ADMIN_TOKEN to choose one): in ${tokenFile} (mode 0600), read it with: cat ${tokenFile}`,
    );
    // The token is in a file only its owner reads, never in the process's output.
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, "utf8").trim();
    expect(token).toMatch(/^[\w-]{32}$/);
    expect(banner).toContain(`npx hookinbox send demo --url ${gateway.url}`);

    const sent = await hookinbox(tmp.dir, ["send", "demo", "--url", gateway.url]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^200 \{"ok":true,"eventId":"evt_\w+","duplicate":false\}/);

    const api = await fetch(`${gateway.url}/api/events`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await api.json()) as { items: unknown[] }).items).toHaveLength(1);
    gateway.child.kill("SIGTERM");
    expect((await gateway.exited()).code).toBe(0);
    const output = gateway.output();
    expect(output.stdout.includes(token) || output.stderr.includes(token)).toBe(false);
    // The token died with the process: its file goes at shutdown.
    expect(existsSync(tokenFile)).toBe(false);

    const listed = await hookinbox(tmp.dir, ["events", "list", "--json"]);
    const page = JSON.parse(listed.stdout) as {
      items: Array<{ id: string; source: string; type: string }>;
    };
    expect(page.items.map((e) => [e.source, e.type])).toEqual([["demo", "demo.ping"]]);
    const table = await hookinbox(tmp.dir, ["events", "list"]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^ID\s+SOURCE\s+TYPE\s+STATUS\s+RECEIVED\s+RECEIPTS\s+DEDUP KEY$/,
    );
    const shown = await hookinbox(tmp.dir, ["events", "show", page.items[0]!.id]);
    expect(shown.stdout).toContain("type:         demo.ping");
    expect(shown.stdout).toContain("receipts (1):");

    // The demo secret is kept, so a second start accepts the same sender.
    const again = await spawnCommand(tmp.dir, ["start", "--port", "0"]);
    expect(/secret: (\S+)/.exec(again.output().stderr)![1]).toBe(/secret: (\S+)/.exec(banner)![1]);
    again.child.kill("SIGTERM");
    await again.exited();
  }, 180_000);

  it("loads a hookinbox.config.ts written in TypeScript", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    writeFileSync(
      join(tmp.dir, "hookinbox.config.ts"),
      `const limit: string = "64kb";\nexport default { store: "sqlite:./data/ts.db", http: { bodyLimit: limit }, sources: ${JSON.stringify({ stripe: testSources.stripe })} };\n`,
    );
    const gateway = await spawnCommand(tmp.dir, ["start", "--port", "0"]);
    expect(gateway.output().stderr).toContain("hookinbox.config.ts");
    const response = await fetch(`${gateway.url}/webhooks/stripe`, {
      method: "POST",
      ...stripeRequest("evt_cli_ts"),
    });
    expect(response.status).toBe(200);
    gateway.child.kill("SIGTERM");
    await gateway.exited();
    const listed = JSON.parse(
      (await hookinbox(tmp.dir, ["events", "list", "--json", "--source", "stripe"])).stdout,
    );
    expect(listed.items.map((e: { dedupKey: string }) => e.dedupKey)).toEqual(["evt_cli_ts"]);
  });

  it("migrates idempotently and reports invalid configs with the key and a code", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    writeFileSync(
      join(tmp.dir, "hookinbox.config.json"),
      JSON.stringify({ store: "sqlite:./m.db" }),
    );
    const first = await hookinbox(tmp.dir, ["migrate"]);
    expect(first.code).toBe(0);
    // Every SQLite migration, in order (the list follows the migrations folder).
    const migrations = loadSqliteMigrations();
    expect(first.stdout).toBe(
      `applied ${migrations.map((m) => m.name).join(", ")}; store is at migration ${migrations.length}\n`,
    );
    const second = await hookinbox(tmp.dir, ["migrate"]);
    expect(second.stdout).toBe(`store is up to date (migration ${migrations.length})\n`);

    writeFileSync(
      join(tmp.dir, "bad.json"),
      JSON.stringify({ sources: { s: { provider: "stripe", secrets: ["x"], tolerence: "5m" } } }),
    );
    const bad = await hookinbox(tmp.dir, ["start", "--config", "bad.json"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("HOOKINBOX_CONFIG_INVALID");
    expect(bad.stderr).toContain(
      'sources.s.tolerence: unknown key "tolerence" (did you mean "tolerance"?)',
    );

    const usage = await hookinbox(tmp.dir, ["frobnicate"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown command "frobnicate"');
  });

  it("--version prints the package's version and exits 0", async () => {
    const version = await hookinbox(repoRoot, ["--version"]);
    expect(version).toEqual({ code: 0, stdout: "hookinbox 0.1.0\n", stderr: "" });
  });
});
