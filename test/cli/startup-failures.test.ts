// Every startup failure is one line on stderr, `hookinbox: HOOKINBOX_…: <what, where, what to
// do>`, and a non-zero exit; no stack trace unless --debug (issue 8, item 10). Each case spawns
// the real CLI.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.ts";
import { postgresServerUrl } from "../helpers/postgres.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const bin = join(repoRoot, "bin/hookinbox.mjs");

/** Runs the CLI to its exit (a startup failure must not hang: 60 s is a hang). */
function run(
  cwd: string,
  args: string[],
  shell?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [file, argv] = shell
    ? ["/bin/sh", ["-c", shell, "sh", process.execPath, bin, ...args]]
    : [process.execPath, [bin, ...args]];
  return new Promise((resolve) => {
    execFile(
      file,
      argv as string[],
      { cwd, env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** A folder with a config file (a JSON value, or a file's text under `name`). */
function folderWith(name: string, content: string | Record<string, unknown>) {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const path = join(tmp.dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return { dir: tmp.dir, path };
}

/** Asserts exactly one line on stderr matching `pattern`, no stack, and exit code 1. */
function expectOneLine(result: { code: number | null; stderr: string }, pattern: RegExp) {
  const lines = result.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.code).toBe(1);
}

describe("startup failures", () => {
  it("a missing PostgreSQL database names it, its host and port, and says create it", async () => {
    const server = new URL(postgresServerUrl());
    const missing = `hookinbox_missing_${process.pid}_${Date.now()}`;
    server.pathname = `/${missing}`;
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: server.toString(),
      sources: {},
    });
    const port = server.port || "5432";
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_STORE_DATABASE_MISSING: The PostgreSQL database does not exist: database "${missing}" on ${server.hostname}:${port}; create it \\(createdb -h ${server.hostname} -p ${port} ${missing}\\) or fix the store URL$`,
      ),
    );
  });

  it("an unreachable PostgreSQL server names its host and port", async () => {
    const port = await freePort();
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: `postgres://postgres@127.0.0.1:${port}/app`,
      sources: {},
    });
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_STORE_UNREACHABLE: The PostgreSQL server cannot be reached: nothing answers at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); start PostgreSQL there or fix the host and port in the store URL$`,
      ),
    );
  });

  it("an SQLite path that cannot be created names the path", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    // A file where a folder must be: refused even for root, which any folder mode is not.
    writeFileSync(join(tmp.dir, "not-a-folder"), "");
    const store = join(tmp.dir, "not-a-folder", "hookinbox.db");
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: `sqlite:${store}`,
      sources: {},
    });
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_STORE_PATH_UNUSABLE: The SQLite file cannot be opened or created: ${store} \\((EEXIST|ENOTDIR)\\); make sure its folder exists or can be created and is writable, or point store elsewhere$`,
      ),
    );
  });

  it("a store under /proc fails at once, naming the path", async () => {
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: "sqlite:/proc/self/hookinbox.db",
      sources: {},
    });
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      /^hookinbox: HOOKINBOX_STORE_PATH_UNUSABLE: The SQLite file cannot be opened or created: \/proc\/self\/hookinbox\.db is on a virtual filesystem \(\/proc\); point store at a folder on a disk$/,
    );
  });

  it("a port in use names the host and port", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as { port: number };
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: "sqlite:./hookinbox.db",
      sources: {},
    });
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", String(port)]),
      new RegExp(
        `^hookinbox: HOOKINBOX_PORT_IN_USE: The port is already in use: 127\\.0\\.0\\.1:${port} is taken by another process; stop it or pass --port \\(or set http\\.port\\)$`,
      ),
    );
  });

  it("a destination that is the gateway's own webhook listener names it and says where to point it", async () => {
    const port = await freePort();
    const { dir, path } = folderWith("hookinbox.config.json", {
      store: "sqlite:./hookinbox.db",
      sources: {
        loop: {
          provider: "standard-webhooks",
          secrets: ["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"],
        },
      },
      destinations: {
        back: {
          url: `http://localhost:${port}/webhooks/loop`,
          secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
          allowPrivateNetworks: true,
        },
      },
      routes: [{ from: "loop", to: "back" }],
    });
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", String(port)]),
      new RegExp(
        `^hookinbox: HOOKINBOX_DESTINATION_LOOP: .*: destinations\\.back\\.url is http://localhost:${port}/webhooks/loop; point it at the app that handles the events$`,
      ),
    );
  });

  it("a config with a syntax error names the file and line", async () => {
    const { dir, path } = folderWith(
      "hookinbox.config.mjs",
      'export default {\n  store: "sqlite:./h.db",\n  sources: { a: },\n};\n',
    );
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_CONFIG_LOAD_FAILED: The config file could not be loaded \\(a syntax error, or it threw\\): ${path}:3: SyntaxError: Unexpected token '}'; fix it there$`,
      ),
    );
  });

  it("a config importing a missing module names the module", async () => {
    const { dir, path } = folderWith(
      "hookinbox.config.mjs",
      'import { secret } from "hookinbox-no-such-package";\nexport default { sources: {}, secret };\n',
    );
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_CONFIG_IMPORT_MISSING: The config file imports a module that is not installed: ${path} imports hookinbox-no-such-package, which is not there; npm install it, or fix the import$`,
      ),
    );
  });

  it("a JSON config that does not parse names its line and column", async () => {
    const { dir, path } = folderWith(
      "hookinbox.config.json",
      '{\n  "store": "sqlite:./h.db",\n  "sources": { "a": tru }\n}\n',
    );
    expectOneLine(
      await run(dir, ["start", "--config", path, "--port", "0"]),
      new RegExp(
        `^hookinbox: HOOKINBOX_CONFIG_INVALID: Config is invalid: ${path}:3:24 is not valid JSON; fix it there$`,
      ),
    );
  });

  it("--debug adds the stack after the same line", async () => {
    const { dir, path } = folderWith("hookinbox.config.json", '{"sources": ');
    const result = await run(dir, ["start", "--config", path, "--port", "0", "--debug"]);
    expect(result.code).toBe(1);
    const [first, ...rest] = result.stderr.split("\n");
    expect(first).toMatch(
      new RegExp(`^hookinbox: HOOKINBOX_CONFIG_INVALID: Config is invalid: ${path}:1:13 is not`),
    );
    expect(rest.join("\n")).toMatch(/^\s+at /m);
  });

  it("a command run in a deleted folder fails with one line instead of spinning", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const gone = join(tmp.dir, "gone");
    mkdirSync(gone);
    // The shell enters the folder, removes it, then runs `hookinbox events list` there.
    const result = await run(
      tmp.dir,
      ["events", "list"],
      `cd "${gone}" && rmdir "${gone}" && exec "$@"`,
    );
    expectOneLine(
      result,
      /^hookinbox: HOOKINBOX_CWD_MISSING: The current folder no longer exists \(deleted or moved\): cd to an existing folder and run again$/,
    );
  });
});
