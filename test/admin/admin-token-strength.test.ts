import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { createInbox } from "../../src/inbox.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// A weak admin token is refused at boot: the real `hookinbox start` process exits with one line
// (code and the command that makes a strong token), and a library inbox throws the same code.

const run = promisify(execFile);
const tmp = tempDir();
afterAll(() => tmp.cleanup());

function start(token: string) {
  return run(process.execPath, [join(repoRoot, "bin/hookinbox.mjs"), "start", "--port", "0"], {
    cwd: tmp.dir,
    env: { PATH: process.env.PATH ?? "", HOOKINBOX_ADMIN_TOKEN: token },
    timeout: 60_000,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

const codeOf = (token: string) => {
  try {
    createInbox({ store: `sqlite:${join(tmp.dir, "lib.db")}`, sources: {} } as never, {
      env: {},
      adminToken: token,
    });
    return "accepted";
  } catch (error) {
    return isHookinboxError(error) ? error.code : String(error);
  }
};

describe("admin token strength", () => {
  it("hookinbox start refuses a short token with one line naming the code and openssl rand -hex 32", async () => {
    const result = await start("changeme");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^hookinbox: HOOKINBOX_ADMIN_TOKEN_WEAK: [^\n]*it has 8 characters, at least 32 are needed; generate one with: openssl rand -hex 32[^\n]*\n$/,
    );
    expect(result.stderr).not.toContain("changeme");
  });

  it("refuses a long token of few distinct characters, accepts a strong one", async () => {
    expect(codeOf("a".repeat(64))).toBe("HOOKINBOX_ADMIN_TOKEN_WEAK");
    expect(codeOf("abab".repeat(10))).toBe("HOOKINBOX_ADMIN_TOKEN_WEAK");
    expect(codeOf("short")).toBe("HOOKINBOX_ADMIN_TOKEN_WEAK");
    expect(codeOf(testAdminToken)).toBe("accepted");
  });
});
