import { describe, expect, it } from "vitest";
import { currentTree, verifyLog } from "../../src/audit/log.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { postForEventId, spawnAuditGateways } from "../helpers/audit-gateways.ts";
import { inParallel, killHard, useCluster } from "../helpers/cluster.ts";
import { schemaPool } from "../helpers/stores.ts";

// Three `hookinbox start` processes on one PostgreSQL schema accept events concurrently; their
// accepts only queue leaves (migration 014) and the one holding the sequencer lease appends them.
// That one is SIGKILLed mid-run: another process takes the lease once it expires and sequences
// the rest by itself (the test never sequences). Every acknowledged event ends in the log exactly
// once, the leaves are numbered 0..n-1 without a gap, and the log verifies.

const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const EVENTS = 300;
const KILL_AFTER = 100;

const cluster = useCluster();
const { tmp, processes } = cluster;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("audit sequencer with three gateway processes on PostgreSQL", () => {
  it(`${EVENTS} events over three processes, the sequencer SIGKILLed after ${KILL_AFTER} acks → another takes the lease, every ack sequenced exactly once`, {
    timeout: 120_000,
  }, async () => {
    const storeUrl = cluster.database.schemaUrl();
    const gateways = await spawnAuditGateways(tmp.dir, storeUrl, {
      key: SEED,
      maxMergeDelay: "1s",
    });
    processes.push(...gateways);
    const pool = schemaPool(storeUrl, 1);
    cluster.pools.push(pool);
    const holder = async () =>
      (await pool.query<{ holder: string | null }>("SELECT holder FROM audit_sequencer")).rows[0]
        ?.holder ?? null;
    const pidOf = (h: string | null) => Number(h?.split(":")[1]);
    while ((await holder()) === null) await pause(50);
    const first = await holder();
    const sequencer = gateways.find((g) => g.child.pid === pidOf(first));
    expect(sequencer).toBeDefined();

    const acked: string[] = [];
    let killed: Promise<void> | null = null;
    await inParallel(
      Array.from({ length: EVENTS }, (_, i) => i),
      24,
      async (i) => {
        const eventId = await postForEventId(
          gateways[i % 3]!.url,
          `msg_seq_${i}`,
          "sequencer.test",
        );
        if (eventId) acked.push(eventId);
        if (acked.length === KILL_AFTER && !killed) killed = killHard(sequencer!);
      },
    );
    await killed;
    expect(acked.length).toBeGreaterThanOrEqual(EVENTS * (2 / 3));

    // A survivor takes the expired lease and empties the queue by itself.
    const survivors = gateways.filter((g) => g !== sequencer).map((g) => g.child.pid);
    const count = async (sql: string) => Number((await pool.query<{ n: number }>(sql)).rows[0]!.n);
    while (
      !survivors.includes(pidOf(await holder())) ||
      (await count("SELECT count(*) AS n FROM audit_pending")) > 0
    ) {
      await pause(100);
    }

    const store = openPostgresStore(storeUrl);
    try {
      const tree = await currentTree(store);
      const leaves = await store.auditLeafPage(-1, EVENTS * 2);
      expect(leaves.map((l) => l.seq)).toEqual(Array.from({ length: tree.size }, (_, i) => i));
      const leafIds = leaves.map((l) => l.eventId);
      expect(new Set(leafIds).size).toBe(leafIds.length);
      expect(acked.filter((id) => !leafIds.includes(id))).toEqual([]);
      expect(await count("SELECT count(*) AS n FROM events")).toBe(tree.size);
      expect(await store.auditUnloggedEvents("", 10)).toEqual([]);
      expect(await verifyLog(store, tree)).toEqual({
        ok: true,
        leaves: tree.size,
        defect: null,
        coverage: expect.any(Object),
      });
      console.log(
        `acknowledged ${acked.length} of ${EVENTS}; tree size ${tree.size}; lease ${first} → ${await holder()}`,
      );
    } finally {
      await store.close();
    }
  });
});
