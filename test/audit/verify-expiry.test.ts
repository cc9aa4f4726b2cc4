import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAuditKey } from "../../src/audit/audit-key.ts";
import { currentTree, verifyLog } from "../../src/audit/log.ts";
import { runRetention } from "../../src/audit/retention.ts";
import { signTreeHead } from "../../src/audit/tree-head.ts";
import type { Store } from "../../src/store/types.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { eventsOnly, openedStore } from "./opened-store.ts";

// A missing event row counts as expired by retention.events only below the largest head signed
// with the trusted key at least retention.events before the verifier's clock: the database's own
// `events_before` mark, which anyone who can edit the database can raise, excuses nothing.

const day = 86_400_000;
const eventsMs = 365 * day;
const { privateKey, publicKey } = generateKeyPairSync("ed25519");

/** Three events 400 days old (a head signed a minute after them), then three from yesterday. */
async function agedLog(store: Store, now: number) {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const receivedAt = i < 3 ? now - 400 * day + i : now - day + i;
    const input = acceptInput({ identity: { dedupKey: `evt_${i}` }, receivedAt });
    ids.push((await store.accept(input)).eventId);
    if (i === 2) {
      await store.saveTreeHead(
        signTreeHead(privateKey, await currentTree(store), receivedAt + 60_000),
      );
    }
  }
  return ids;
}

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("verify and retention.events ($name)", ({ open }) => {
  it("excuses only events below a signed head old enough; a raised mark excuses nothing", async () => {
    const { db, store } = await openedStore(open);
    const now = Date.UTC(2026, 2, 1, 12);
    const ids = await agedLog(store, now);
    const head = await currentTree(store);
    expect((await runRetention(store, eventsOnly(eventsMs), { now, dryRun: false })).events).toBe(
      3,
    );
    const expiry = { trustedKey: publicKey, eventsMs, now };
    // Retention appended a leaf recording the 3 events (and on SQLite one for their receipts,
    // which go with them there).
    expect(await verifyLog(store, head, { expiry })).toEqual({
      ok: true,
      leaves: db.kind === "sqlite" ? 8 : 7,
      defect: null,
      coverage: expect.any(Object),
    });

    const missing = (seq: number) => ({
      seq,
      eventId: ids[seq],
      reason: "the leaf's event row is missing",
    });
    // No policy, retention.events off, another key, or a clock too early: nothing is excused.
    expect((await verifyLog(store, head)).defect).toEqual(missing(0));
    expect(
      (await verifyLog(store, head, { expiry: { ...expiry, eventsMs: null } })).defect,
    ).toEqual(missing(0));
    const other = generateKeyPairSync("ed25519").publicKey;
    expect(
      (await verifyLog(store, head, { expiry: { ...expiry, trustedKey: other } })).defect,
    ).toEqual(missing(0));
    expect(
      (await verifyLog(store, head, { expiry: { ...expiry, now: now - 40 * day } })).defect,
    ).toEqual(missing(0));

    // Raising the mark past everything and deleting yesterday's event 4 is named, not excused.
    await db.rows(
      "UPDATE retention_marks SET value = 'evt_ZZZZZZZZZZ' WHERE name = 'events_before'",
    );
    await db.rows("DELETE FROM receipts WHERE event_id = ?", [ids[4]]);
    await db.rows("DELETE FROM events WHERE id = ?", [ids[4]]);
    expect(
      await db.count("SELECT count(*) AS n FROM retention_marks WHERE value = 'evt_ZZZZZZZZZZ'"),
    ).toBe(1);
    expect((await verifyLog(store, head, { expiry })).defect).toEqual(missing(4));
  });
});

describe("audit verify (CLI, sqlite) and retention.events", () => {
  it("passes after retention with the key from HOOKINBOX_AUDIT_KEY, and names a deleted recent event", async () => {
    const { db, store } = await openedStore(stores[0]!.open);
    expect(db.kind).toBe("sqlite");
    // The key only through the environment variable: the CLI must find it there.
    const seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const env = { HOOKINBOX_AUDIT_KEY: seed };
    const key = parseAuditKey(seed, "test");
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const receivedAt = i < 2 ? now - 400 * day + i : now - day + i;
      ids.push(
        (await store.accept(acceptInput({ identity: { dedupKey: `evt_${i}` }, receivedAt })))
          .eventId,
      );
      if (i === 1)
        await store.saveTreeHead(signTreeHead(key, await currentTree(store), receivedAt + 60_000));
    }
    const config = join(db.dir, "hookinbox.config.json");
    writeFileSync(config, JSON.stringify({ store: db.url, retention: { events: "365d" } }));
    const head = await runCli(["audit", "head", "--config", config], env);
    expect(head.code).toBe(0);
    const headFile = join(db.dir, "head.json");
    writeFileSync(headFile, head.stdout);

    const run = await runCli(["retention", "run", "--config", config], env);
    expect(run.code).toBe(0);
    expect(await db.count("SELECT count(*) AS n FROM events")).toBe(3);
    const ok = await runCli(["audit", "verify", "--config", config, "--head", headFile], env);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: 7 leaves match their events; the first 5 hash to root/);
    expect(ok.stdout).toContain("deleted by retention (recorded in leaves 5): leaves 0-1\n");

    await db.rows(
      "UPDATE retention_marks SET value = 'evt_ZZZZZZZZZZ' WHERE name = 'events_before'",
    );
    await db.rows("DELETE FROM receipts WHERE event_id = ?", [ids[3]]);
    await db.rows("DELETE FROM events WHERE id = ?", [ids[3]]);
    const bad = await runCli(["audit", "verify", "--config", config, "--head", headFile], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n").at(-1)).toBe(
      `hookinbox: HOOKINBOX_AUDIT_VERIFY_FAILED: The stored log does not match the trusted tree head: leaf 3 ${ids[3]}: the leaf's event row is missing`,
    );
    // Without the variable the CLI would make and trust a new key: the saved head is refused.
    const noKey = await runCli(["audit", "verify", "--config", config, "--head", headFile], {});
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/HOOKINBOX_AUDIT_HEAD_INVALID: /);
  });
});
