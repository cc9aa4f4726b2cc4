import { describe, expect, it } from "vitest";
import { type IdentityRules, rootAt, verifyLog } from "../../src/audit/log.ts";
import type { Store } from "../../src/store/types.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// Each test breaks exactly one derived column of one stored event (what ingest read from the body
// with the source's identity rules) and expects exactly one finding, naming the leaf, the event
// and the column: `audit verify` reads the stored payload again with the same rules.

const rules: IdentityRules = (source) =>
  source === "stripe"
    ? {
        id: "$.id",
        type: "$.type",
        orderingKey: "$.customer",
        occurredAt: "$.created",
        version: "$.seq",
      }
    : null;

const bodyOf = (i: number) =>
  `{"id":"evt_${i}","type":"invoice.paid","customer":"cus_${i % 3}","created":${1767323040 + i},"seq":${10 + i}}`;

/** Six events accepted as ingest stores them (their columns are what the rules read). */
async function sixEvents(store: Store): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const result = await store.accept(
      acceptInput({
        body: new TextEncoder().encode(bodyOf(i)),
        receivedAt: Date.UTC(2026, 0, 2) + i * 1_000,
        identity: {
          dedupKey: `evt_${i}`,
          type: "invoice.paid",
          orderingKey: `cus_${i % 3}`,
          occurredAt: (1767323040 + i) * 1000,
          version: 10 + i,
        },
      }),
    );
    ids.push(result.eventId);
  }
  return ids;
}

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("verify re-derives the derived columns ($name)", ({ open }) => {
  const edits: Array<[field: string, set: string, value: unknown]> = [
    ["type", "type = ?", "invoice.voided"],
    ["ordering_key", "ordering_key = ?", "cus_other"],
    ["occurred_at", "occurred_at = ?", 1767000000000],
    ["version", "version = ?", 99],
    ["dedup_key", "dedup_key = ?", "evt_forged"],
  ];

  it("passes an untouched log and counts nothing unchecked", async () => {
    const { store } = await openedStore(open);
    await sixEvents(store);
    const head = { size: 6, root: await rootAt(store, 6) };
    expect(await verifyLog(store, head, { identities: rules })).toEqual({
      ok: true,
      leaves: 6,
      defect: null,
      coverage: {
        notConfigured: new Map(),
        digestOnly: [],
        retention: { leaves: [], recordedIn: [], unrecorded: [] },
      },
    });
  });

  it.each(edits)("an edited %s is named", async (field, set, value) => {
    const { db, store } = await openedStore(open);
    const ids = await sixEvents(store);
    const head = { size: 6, root: await rootAt(store, 6) };
    await db.rows(`UPDATE events SET ${set} WHERE id = ?`, [value, ids[3]]);
    const result = await verifyLog(store, head, { identities: rules });
    expect(result.ok).toBe(false);
    expect(result.leaves).toBe(3);
    expect(result.defect?.seq).toBe(3);
    expect(result.defect?.eventId).toBe(ids[3]);
    expect(result.defect?.reason).toMatch(new RegExp(`^the stored ${field} (is not|does not)`));
  });

  it("reports a source that is not configured any more, distinctly, and passes", async () => {
    const { store } = await openedStore(open);
    await sixEvents(store);
    const head = { size: 6, root: await rootAt(store, 6) };
    const result = await verifyLog(store, head, { identities: () => null });
    expect(result).toEqual({
      ok: true,
      leaves: 6,
      defect: null,
      coverage: {
        notConfigured: new Map([["stripe", 6]]),
        digestOnly: [],
        retention: { leaves: [], recordedIn: [], unrecorded: [] },
      },
    });
  });
});
