import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-capture.ts";
import { freePort } from "../helpers/free-port.ts";
import { counted, processingInbox } from "../helpers/processing.ts";
import { secrets } from "../helpers/signers.ts";
import { storeFactories } from "../helpers/stores.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A config module on `store`: `std:ok` returns, `std:fail` throws and retries in an hour,
 * `std:dead` throws on its only attempt. Returns its path.
 */
function writeConfig(store: string): string {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const path = join(tmp.dir, "hookinbox.config.mjs");
  writeFileSync(
    path,
    `export default {
  store: ${JSON.stringify(store)},
  log: { level: "silent" },
  sources: { std: { provider: "standard-webhooks", secrets: [${JSON.stringify(secrets.standard)}] } },
  retry: { schedule: ["1h"], maxAttempts: 3, jitter: "none" },
  handlers: {
    "std:ok": async () => {},
    "std:fail": async () => { throw new Error("not yet"); },
    "std:dead": { handler: async () => { throw new Error("never"); }, options: { retry: { maxAttempts: 1 } } },
  },
};
`,
  );
  return path;
}

/** A one-line error on stderr, nothing on stdout, and the exit code. */
function expectOneLine(
  result: { code: number; stdout: string; stderr: string },
  code: number,
  pattern: RegExp,
) {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(/^hookinbox: [A-Z_]+: [^\n]*\n$/);
  expect(result.stderr).toMatch(pattern);
}

describe.each(storeFactories())("hookinbox work --once ($name)", (factory) => {
  it("processes what is due, prints one summary line or JSON, exits 0 with dead letters", async () => {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const config = writeConfig(store.url);
    // Events accepted by an inbox with the same handler patterns (as a gateway would).
    const env = processingInbox({
      store: store.url,
      handlers: {
        "std:ok": async () => {},
        "std:fail": async () => {},
        "std:dead": async () => {},
      },
    });
    cleanups.push(env.cleanup);
    for (const type of ["ok", "ok", "fail", "dead"])
      await env.post(`msg_${type}_${Math.random()}`, { type });

    const first = await runCli(["work", "--once", "--config", config, "--max-time", "30s"]);
    expect(first).toEqual({
      code: 0,
      stdout:
        "processed 4 deliveries: 2 done, 1 retried, 1 dead, 0 failed, 0 released; 0 still due\n",
      stderr: "",
    });
    const again = await runCli([
      "work",
      "--once",
      "--config",
      config,
      "--json",
      "--concurrency",
      "2",
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(counted());
    expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'dead'")).toBe(1);
  });
});

describe("hookinbox work: usage and store failures", () => {
  it("refuses work without --once and bad values, HOOKINBOX_USAGE, exit 2", async () => {
    const config = writeConfig("sqlite:./never-opened.db");
    expectOneLine(
      await runCli(["work", "--config", config]),
      2,
      /HOOKINBOX_USAGE: .*work runs once and exits: hookinbox work --once/,
    );
    expectOneLine(
      await runCli(["work", "--once", "--max-time", "soon"]),
      2,
      /HOOKINBOX_USAGE: .*--max-time must be a duration/,
    );
    expectOneLine(
      await runCli(["work", "--once", "--grace", "5 minutes"]),
      2,
      /HOOKINBOX_USAGE: .*--grace must be a duration/,
    );
    expectOneLine(
      await runCli(["work", "--once", "--concurrency", "0"]),
      2,
      /HOOKINBOX_USAGE: .*--concurrency takes an integer of at least 1/,
    );
    expectOneLine(
      await runCli(["work", "--once", "--bogus"]),
      2,
      /HOOKINBOX_USAGE: Unknown option '--bogus'/,
    );
  });

  it("exits 1 when the store fails: PostgreSQL unreachable, SQLite path unusable", async () => {
    const port = await freePort();
    expectOneLine(
      await runCli([
        "work",
        "--once",
        "--config",
        writeConfig(`postgres://postgres@127.0.0.1:${port}/app`),
      ]),
      1,
      /^hookinbox: HOOKINBOX_STORE_UNREACHABLE: .*127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    writeFileSync(join(tmp.dir, "not-a-folder"), "");
    expectOneLine(
      await runCli([
        "work",
        "--once",
        "--config",
        writeConfig(`sqlite:${join(tmp.dir, "not-a-folder", "x.db")}`),
      ]),
      1,
      /^hookinbox: HOOKINBOX_STORE_PATH_UNUSABLE: /,
    );
  });
});
