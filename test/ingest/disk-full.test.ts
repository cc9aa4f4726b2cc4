import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { startGateway } from "../../src/gateway/start-gateway.ts";
import { standardRequest, testSources } from "../helpers/signers.ts";

/**
 * A real full disk: a 2 MB tmpfs mounted for this test. Mounting needs root (CI runs as root);
 * where it is refused the test says so on stderr and does not run.
 */
function mountSmallTmpfs(): { dir: string; cleanup(): void } | null {
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    console.warn(
      `disk-full test NOT RUN: cannot mount a tmpfs here (${(error as Error).message.split("\n")[0]})`,
    );
    return null;
  }
  return {
    dir,
    cleanup: () => {
      execFileSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const disk = mountSmallTmpfs();
afterAll(() => disk?.cleanup());

/** Fills the file system with one file until it is full. */
function fill(path: string): void {
  const chunk = Buffer.alloc(16 * 1024, 7);
  const parts: Buffer[] = [];
  for (;;) {
    try {
      writeFileSync(path, Buffer.concat([...parts, chunk]));
      parts.push(chunk);
    } catch {
      // Keep what fitted, then top up with smaller pieces.
      writeFileSync(path, Buffer.concat(parts));
      break;
    }
  }
  for (const size of [4096, 1024, 256, 64, 16, 1]) {
    for (;;) {
      try {
        writeFileSync(path, Buffer.alloc(size, 7), { flag: "a" });
      } catch {
        break;
      }
    }
  }
}

describe("disk full", () => {
  it.runIf(disk !== null)(
    "/readyz is 503 while accepts fail, 200 again once space returns, and every acknowledged event is stored",
    async () => {
      const dir = disk!.dir;
      const path = join(dir, "full.db");
      const gateway = await startGateway(
        { store: `sqlite:${path}`, sources: { standard: testSources.standard } },
        { env: {}, port: 0, adminToken: null, sqliteWriter: "thread" },
      );
      const post = async (id: string) => {
        const request = standardRequest(id, JSON.stringify({ type: "t", pad: "x".repeat(2_000) }));
        const response = await fetch(`${gateway.url}/webhooks/standard`, {
          method: "POST",
          headers: request.headers,
          body: request.body,
        });
        return { status: response.status, json: (await response.json()) as any };
      };
      const readyz = async () => {
        const response = await fetch(`${gateway.url}/readyz`);
        return { status: response.status, json: (await response.json()) as any };
      };
      expect((await readyz()).status).toBe(200);
      fill(join(dir, "filler"));

      const acknowledged: string[] = [];
      let refused: { id: string; code: string } | null = null;
      for (let i = 0; i < 2_000 && refused === null; i++) {
        const id = `msg_full_${i}`;
        const answer = await post(id);
        if (answer.status === 200) acknowledged.push(id);
        else refused = { id, code: answer.json.error.code };
      }
      expect(refused).toEqual({ id: expect.any(String), code: "HOOKINBOX_STORE_UNAVAILABLE" });
      // Every readiness check agrees with what ingest answers (a ping's small write may fit).
      for (let i = 0; i < 3; i++) {
        expect(await readyz()).toEqual({
          status: 503,
          json: { error: { code: "HOOKINBOX_STORE_UNAVAILABLE", message: expect.any(String) } },
        });
      }

      unlinkSync(join(dir, "filler"));
      // The provider retries the refused event: it is stored, and the node is ready again.
      const retried = await post(refused!.id);
      expect(retried).toMatchObject({ status: 200, json: { duplicate: false } });
      acknowledged.push(refused!.id);
      expect(await readyz()).toEqual({ status: 200, json: { ok: true, store: "sqlite" } });

      await gateway.close();
      const db = new Database(path, { readonly: true });
      const stored = (
        db.prepare("SELECT dedup_key FROM events").all() as Array<{ dedup_key: string }>
      ).map((r) => r.dedup_key);
      db.close();
      expect(new Set(stored)).toEqual(new Set(acknowledged));
      expect(stored).toHaveLength(acknowledged.length);
    },
    120_000,
  );
});
