import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openConnection } from "./connection.ts";

const folder = mkdtempSync(join(tmpdir(), "hookinbox-open-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// Another process holds the write lock of a file still in rollback mode: what a concurrent
// opener does while it switches a new file to WAL. It lets go after 300 ms, or when its stdin
// closes if the first argument is "stdin".
const holdWriteLock = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1]);
db.exec("CREATE TABLE IF NOT EXISTS t (x)");
db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)");
const release = () => { db.exec("COMMIT"); db.close(); };
process.stdout.write("locked\\n");
if (process.argv[2] === "stdin") {
  process.stdin.resume();
  process.stdin.on("end", release);
} else {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
  release();
}
`;

/** Starts the lock holder and resolves once it holds the lock. */
async function holdLock(path: string, until: "300ms" | "stdin") {
  const child = spawn(process.execPath, ["-e", holdWriteLock, path, until], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve();
    });
  });
  return { exited, release: () => child.stdin.end() };
}

describe("openConnection", () => {
  it("switches to WAL once a concurrent writer lets go, although SQLite skips the busy handler there", async () => {
    const path = join(folder, "locked.db");
    const holder = await holdLock(path, "300ms");
    const db = openConnection(path, 5000);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
    db.close();
    expect(await holder.exited).toBe(0);
  });

  it("still fails with a typed error when the lock outlasts the busy timeout", async () => {
    const path = join(folder, "held.db");
    const holder = await holdLock(path, "stdin");
    expect(() => openConnection(path, 50)).toThrow(
      expect.objectContaining({ code: "HOOKINBOX_STORE_PATH_UNUSABLE" }),
    );
    holder.release();
    expect(await holder.exited).toBe(0);
  });
});
