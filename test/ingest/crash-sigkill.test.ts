import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const rounds = 5;

describe("crash: SIGKILL the gateway while deliveries stream", () => {
  // Heavy by design (real processes, thousands of rows); no time is asserted, so the shared CI
  // machine gets room beyond the 60 s default.
  it(`keeps every delivery that received a 2xx, over ${rounds} kills`, async () => {
    const dbPath = join(tmp.dir, "crash.db");
    const config = { store: `sqlite:${dbPath}`, sources: { stripe: testSources.stripe } };
    const acknowledged: string[] = [];
    const cutOff: string[] = [];
    let next = 0;
    for (let round = 0; round < rounds; round++) {
      const gateway = await spawnGateway(tmp.dir, config);
      // Kill after a different number of acknowledgements each round (100, 180, 260, …).
      const killAfter = acknowledged.length + 100 + round * 80;
      let killed = false;
      // 16 concurrent senders stream unique events until the kill breaks their connections.
      const sender = async () => {
        while (!killed) {
          const id = `evt_crash_${next++}`;
          try {
            const response = await fetch(`${gateway.url}/webhooks/stripe`, {
              method: "POST",
              ...stripeRequest(id),
            });
            if (response.status === 200) acknowledged.push(id);
            else cutOff.push(id);
          } catch {
            cutOff.push(id);
            return;
          }
          if (acknowledged.length >= killAfter && !killed) {
            killed = true;
            gateway.child.kill("SIGKILL");
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, sender));
      expect((await gateway.exited()).signal).toBe("SIGKILL");
    }

    // Restart on the same file: the store must open (WAL recovery) and be ready.
    const restarted = await spawnGateway(tmp.dir, config);
    expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200);
    restarted.child.kill("SIGTERM");
    await restarted.exited();

    const db = new Database(dbPath, { readonly: true });
    const stored = new Set(
      (db.prepare("SELECT dedup_key FROM events").all() as Array<{ dedup_key: string }>).map(
        (r) => r.dedup_key,
      ),
    );
    db.close();
    const lost = acknowledged.filter((id) => !stored.has(id));
    console.info(
      `crash test: ${rounds} SIGKILLs, ${acknowledged.length} acknowledged, ${cutOff.length} cut off in flight, ${stored.size} stored, ${lost.length} lost`,
    );
    expect(lost).toEqual([]);
    // A request cut off in flight may have committed without its 2xx reaching us; never the reverse.
    expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
    expect(stored.size).toBeLessThanOrEqual(acknowledged.length + cutOff.length);
  }, 300_000);
});
