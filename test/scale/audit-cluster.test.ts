import { describe, expect, it } from "vitest";
import { currentTree, proveConsistency, verifyLog } from "../../src/audit/log.ts";
import { verifyConsistency } from "../../src/audit/merkle.ts";
import { sequenceAll } from "../../src/audit/sequencer.ts";
import { publicKeyFromHex, verifyTreeHead } from "../../src/audit/tree-head.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { postForEventId, spawnAuditGateways } from "../helpers/audit-gateways.ts";
import { inParallel, killHard, useCluster } from "../helpers/cluster.ts";
import { schemaPool } from "../helpers/stores.ts";

// Three `hookinbox start` processes queue leaves for one audit tree on one PostgreSQL schema while
// events arrive at all three in parallel; one is SIGKILLed mid-stream. Every acknowledged event
// is a leaf, leaves are numbered 0..n-1 without gaps, the stored log verifies against the last
// head, and every pair of consecutive signed heads (from all three processes) is consistent.

// RFC 8032 §7.1 test 1 seed, shared by the three processes (one key for one log).
const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const EVENTS = 300;
const KILL_AFTER = 100;

const cluster = useCluster();
const { tmp, processes } = cluster;

describe("audit log with three gateway processes on PostgreSQL", () => {
  it(`${EVENTS} events over three processes, one SIGKILLed after ${KILL_AFTER} acks → one tree, every ack a leaf, heads consistent`, {
    timeout: 120_000,
  }, async () => {
    const storeUrl = cluster.database.schemaUrl();
    const gateways = await spawnAuditGateways(tmp.dir, storeUrl, {
      key: SEED,
      headInterval: "100ms",
      // Sequence every 100 ms (a tenth of this) so the tree grows, and heads are signed, many
      // times while the 300 events arrive: the test checks consistency between those heads.
      maxMergeDelay: "1s",
    });
    processes.push(...gateways);
    for (const g of gateways) expect(g.output().stderr).toContain(`Ed25519 key ${PUBLIC}`);

    const acked: string[] = [];
    let killed: Promise<void> | null = null;
    await inParallel(
      Array.from({ length: EVENTS }, (_, i) => i),
      24,
      async (i) => {
        const eventId = await postForEventId(gateways[i % 3]!.url, `msg_audit_${i}`, "audit.test");
        if (eventId) acked.push(eventId);
        if (acked.length === KILL_AFTER && !killed) killed = killHard(gateways[0]!);
      },
    );
    await killed;
    // Every event sent to a surviving process was acknowledged; some sent to the killed one not.
    expect(acked.length).toBeGreaterThanOrEqual(EVENTS * (2 / 3));
    expect(acked.length).toBeLessThan(EVENTS);
    const store = openPostgresStore(storeUrl);
    try {
      // Accepts queue their leaves (migration 014); sequence what the survivors' sequencer has
      // not yet, then wait for a survivor's head of the whole tree.
      await sequenceAll(store);
      const size = (await store.auditTree()).size;
      while (((await store.latestTreeHead())?.size ?? -1) < size) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const tree = await currentTree(store);
      const leaves = await store.auditLeafPage(-1, EVENTS + 1);
      // No gaps, no forks: leaves 0..n-1, one per stored event, every acknowledged one among them.
      expect(leaves.map((l) => l.seq)).toEqual(Array.from({ length: tree.size }, (_, i) => i));
      const leafEvents = new Set(leaves.map((l) => l.eventId));
      expect(leafEvents.size).toBe(tree.size);
      expect(acked.filter((id) => !leafEvents.has(id))).toEqual([]);
      expect(await store.auditUnloggedEvents("", 10)).toEqual([]);
      expect(tree.size).toBeGreaterThanOrEqual(acked.length);
      expect(tree.size).toBeLessThanOrEqual(EVENTS);
      expect(await verifyLog(store, tree)).toEqual({
        ok: true,
        leaves: tree.size,
        defect: null,
        coverage: expect.any(Object),
      });

      // Heads signed by all three processes: each verifies, sizes only grow, each is
      // consistent with the one before, and the newest covers the whole tree.
      const pool = schemaPool(storeUrl, 1);
      const { rows } = await pool.query<{ size: number }>(
        "SELECT size FROM audit_heads ORDER BY size, signed_at",
      );
      await pool.end();
      const trusted = publicKeyFromHex(PUBLIC);
      const heads = [];
      for (const row of rows) heads.push((await store.treeHeadOfSize(Number(row.size)))!);
      expect(heads.length).toBeGreaterThan(2);
      console.log(
        `acknowledged ${acked.length} of ${EVENTS}; tree size ${tree.size}; ${heads.length} signed heads, consecutive pairs consistent`,
      );
      expect(heads.at(-1)!.size).toBe(tree.size);
      expect(heads.at(-1)!.root.equals(tree.root)).toBe(true);
      for (const head of heads) expect(verifyTreeHead(head, trusted)).toBe(true);
      for (let i = 1; i < heads.length; i++) {
        const [a, b] = [heads[i - 1]!, heads[i]!];
        const proof = await proveConsistency(store, a.size, b.size);
        expect(verifyConsistency(a.size, b.size, a.root, b.root, proof)).toBe(true);
      }
    } finally {
      await store.close();
    }
  });
});
