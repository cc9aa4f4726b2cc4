import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { encodeTime } from "../../src/ids.ts";
import type {
  AcceptInput,
  EventIdentity,
  EventQuery,
  EventSummary,
  RejectionInput,
  Store,
} from "../../src/store/types.ts";

/**
 * What a conformance run needs: a fresh, migrated store per test and a way to dispose of it.
 *
 * @example
 * ```ts
 * const opened: OpenedStore = { store, cleanup: () => store.close() };
 * ```
 */
export interface OpenedStore {
  readonly store: Store;
  cleanup(): Promise<void>;
}

/**
 * Builds an AcceptInput with sensible defaults; override any field.
 *
 * @example
 * ```ts
 * await store.accept(acceptInput({ source: "stripe", identity: { dedupKey: "evt_1" } }));
 * ```
 */
export function acceptInput(
  overrides: Partial<Omit<AcceptInput, "identity">> & { identity?: Partial<EventIdentity> } = {},
): AcceptInput {
  const { identity, ...rest } = overrides;
  return {
    source: "stripe",
    body: new TextEncoder().encode('{"id":"evt_1","type":"invoice.paid"}'),
    headers: [
      ["Content-Type", "application/json"],
      ["Stripe-Signature", "t=1,v1=00"],
    ],
    receivedAt: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    remoteAddress: "203.0.113.9",
    secretIndex: 0,
    ...rest,
    identity: {
      dedupKey: "evt_1",
      type: "invoice.paid",
      occurredAt: Date.UTC(2026, 0, 2, 3, 4, 0),
      orderingKey: "cus_1",
      version: 1767323040,
      ...identity,
    },
  };
}

/**
 * Builds a RejectionInput with sensible defaults.
 *
 * @example
 * ```ts
 * await store.recordRejection(rejectionInput({ code: "HOOKINBOX_SIGNATURE_MISMATCH" }));
 * ```
 */
export function rejectionInput(overrides: Partial<RejectionInput> = {}): RejectionInput {
  return {
    source: "stripe",
    receivedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    remoteAddress: "198.51.100.7",
    status: 401,
    code: "HOOKINBOX_SIGNATURE_MISMATCH",
    size: 812,
    headerNames: ["content-type", "stripe-signature"],
    ...overrides,
  };
}

/** Reads every page of a query; asserts page sizes never exceed the limit. */
async function allPages(store: Store, query: EventQuery): Promise<EventSummary[][]> {
  const pages: EventSummary[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listEvents(cursor === undefined ? query : { ...query, cursor });
    pages.push(page.items);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
    if (pages.length > 1000) throw new Error("listEvents does not terminate");
  }
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

/**
 * Defines the tests every Store must pass (SQLite now, PostgreSQL later). `open` must return a
 * fresh, empty, migrated store; `cleanup` closes it (if still open) and removes its data.
 *
 * @example
 * ```ts
 * runStoreConformance("sqlite", async () => {
 *   const store = openSqliteStore({ path: join(mkdtempSync(tmp), "db.sqlite") });
 *   await store.migrate();
 *   return { store, cleanup: () => store.close() };
 * });
 * ```
 */
export function runStoreConformance(name: string, open: () => Promise<OpenedStore>): void {
  describe(`Store conformance: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;

    beforeEach(async () => {
      opened = await open();
      store = opened.store;
    });

    afterEach(async () => {
      await opened.cleanup();
    });

    describe("accept and deduplication", () => {
      it("accepts a new event as not duplicate", async () => {
        const result = await store.accept(acceptInput());
        expect(result.duplicate).toBe(false);
        expect(result.eventId).toMatch(/^evt_/);
        expect(result.receiptId).toMatch(/^rcp_/);
        const event = await store.getEvent(result.eventId);
        expect(event).not.toBeNull();
        expect(event?.status).toBe("ignored");
        expect(event?.receipts.map((r) => r.id)).toEqual([result.receiptId]);
      });

      it("returns the same event id as duplicate for the same (source, dedupKey), with 2 receipts", async () => {
        const first = await store.accept(acceptInput({ receivedAt: 1_000 }));
        const second = await store.accept(acceptInput({ receivedAt: 2_000 }));
        expect(second.duplicate).toBe(true);
        expect(second.eventId).toBe(first.eventId);
        expect(second.receiptId).not.toBe(first.receiptId);
        const event = await store.getEvent(first.eventId);
        expect(event?.receiptCount).toBe(2);
        expect(event?.receipts.map((r) => [r.id, r.duplicate])).toEqual([
          [first.receiptId, false],
          [second.receiptId, true],
        ]);
        const page = await store.listEvents({});
        expect(page.items).toHaveLength(1);
      });

      it("keeps the first event's stored data when a duplicate carries different bytes", async () => {
        const first = await store.accept(acceptInput({ body: new Uint8Array([1, 2, 3]) }));
        await store.accept(acceptInput({ body: new Uint8Array([9, 9]) }));
        const event = await store.getEvent(first.eventId);
        expect(Array.from(event?.body ?? [])).toEqual([1, 2, 3]);
      });

      it("treats the same dedupKey in a different source as a distinct event", async () => {
        const a = await store.accept(acceptInput({ source: "stripe" }));
        const b = await store.accept(acceptInput({ source: "github" }));
        expect(a.duplicate).toBe(false);
        expect(b.duplicate).toBe(false);
        expect(b.eventId).not.toBe(a.eventId);
      });

      it("stores byte-identical bodies with different dedup keys as two events (no body hashing)", async () => {
        const body = new TextEncoder().encode('{"same":"bytes"}');
        const a = await store.accept(acceptInput({ body, identity: { dedupKey: "k1" } }));
        const b = await store.accept(acceptInput({ body, identity: { dedupKey: "k2" } }));
        expect(a.duplicate).toBe(false);
        expect(b.duplicate).toBe(false);
        expect(b.eventId).not.toBe(a.eventId);
      });

      it("50 concurrent accepts of one event: 1 event, 50 receipts, exactly 49 duplicates", async () => {
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            store.accept(acceptInput({ receivedAt: 1_000 + i })),
          ),
        );
        expect(new Set(results.map((r) => r.eventId)).size).toBe(1);
        expect(new Set(results.map((r) => r.receiptId)).size).toBe(50);
        expect(results.filter((r) => r.duplicate)).toHaveLength(49);
        const page = await store.listEvents({});
        expect(page.items).toHaveLength(1);
        expect(page.items[0]?.receiptCount).toBe(50);
        const event = await store.getEvent(results[0]?.eventId ?? "");
        expect(event?.receipts).toHaveLength(50);
        expect(event?.receipts.filter((r) => !r.duplicate)).toHaveLength(1);
      });

      it("200 concurrent accepts of 20 distinct events × 10 copies: 20 events", async () => {
        const inputs = Array.from({ length: 200 }, (_, i) =>
          acceptInput({ identity: { dedupKey: `evt_${i % 20}` } }),
        );
        const results = await Promise.all(inputs.map((input) => store.accept(input)));
        expect(new Set(results.map((r) => r.eventId)).size).toBe(20);
        expect(results.filter((r) => !r.duplicate)).toHaveLength(20);
        for (let key = 0; key < 20; key++) {
          const ids = results.filter((_, i) => i % 20 === key).map((r) => r.eventId);
          expect(new Set(ids).size).toBe(1);
        }
        const pages = await allPages(store, { limit: 500 });
        const items = pages.flat();
        expect(items).toHaveLength(20);
        expect(items.every((item) => item.receiptCount === 10)).toBe(true);
      });

      it("round-trips body bytes (non-UTF-8, 0x00) and headers verbatim (order and case)", async () => {
        const body = new Uint8Array([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x00, 0x7b, 0x22, 0x80, 0x00]);
        const headers: Array<[string, string]> = [
          ["Content-Type", "application/json; charset=utf-8"],
          ["X-Custom", "first"],
          ["x-custom", "Second Value"],
          ["Stripe-Signature", "t=1700000000,v1=abc,v0=def"],
          ["X-Empty", ""],
          ["X-Latin1", "caf\u00e9 \u00ff"],
        ];
        const result = await store.accept(acceptInput({ body, headers }));
        const event = await store.getEvent(result.eventId);
        expect(event?.body).toBeInstanceOf(Uint8Array);
        expect(Array.from(event?.body ?? [])).toEqual(Array.from(body));
        expect(event?.headers).toEqual(headers);
      });

      it("round-trips an empty body and the identity fields", async () => {
        const result = await store.accept(
          acceptInput({
            body: new Uint8Array(0),
            secretIndex: 2,
            identity: {
              dedupKey: "d",
              type: null,
              occurredAt: null,
              orderingKey: null,
              version: null,
            },
          }),
        );
        const event = await store.getEvent(result.eventId);
        expect(event?.body.byteLength).toBe(0);
        expect(event).toMatchObject({
          source: "stripe",
          dedupKey: "d",
          type: null,
          occurredAt: null,
          orderingKey: null,
          version: null,
        });
        expect(event?.receipts[0]?.secretIndex).toBe(2);

        const full = await store.accept(acceptInput({ identity: { dedupKey: "e", version: 2.5 } }));
        const detail = await store.getEvent(full.eventId);
        expect(detail).toMatchObject({
          type: "invoice.paid",
          orderingKey: "cus_1",
          version: 2.5,
          occurredAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 0)).toISOString(),
          receivedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)).toISOString(),
        });
        expect(detail?.receipts[0]).toMatchObject({
          remoteAddress: "203.0.113.9",
          duplicate: false,
          receivedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)).toISOString(),
        });
      });

      it("stores times with millisecond precision (fractions truncated)", async () => {
        const result = await store.accept(
          acceptInput({
            receivedAt: 1_700_000_000_456.9,
            identity: { occurredAt: 1_700_000_000_123.456 },
          }),
        );
        const event = await store.getEvent(result.eventId);
        expect(event?.receivedAt).toBe("2023-11-14T22:13:20.456Z");
        expect(event?.occurredAt).toBe("2023-11-14T22:13:20.123Z");
        expect(event?.receipts[0]?.receivedAt).toBe("2023-11-14T22:13:20.456Z");
        await store.recordRejection(rejectionInput({ receivedAt: 1_700_000_000_000.5 }));
      });
    });

    describe("listEvents", () => {
      /** 120 events accepted one after another: sources a/b/c, types x/y. */
      async function seed120(): Promise<string[]> {
        const ids: string[] = [];
        for (let i = 0; i < 120; i++) {
          const result = await store.accept(
            acceptInput({
              source: ["a", "b", "c"][i % 3] ?? "a",
              receivedAt: 1_700_000_000_000 + i,
              identity: { dedupKey: `key_${i}`, type: i % 2 === 0 ? "x" : "y" },
            }),
          );
          ids.push(result.eventId);
        }
        return ids;
      }

      it("pages 120 events by 50: 50, 50, 20, newest first, no duplicates or gaps", async () => {
        const ids = await seed120();
        const pages = await allPages(store, { limit: 50 });
        expect(pages.map((page) => page.length)).toEqual([50, 50, 20]);
        const listed = pages.flat().map((item) => item.id);
        expect(listed).toEqual([...ids].reverse());
        expect(new Set(listed).size).toBe(120);
        const first = pages[0]?.[0];
        expect(first).toMatchObject({
          id: ids[119],
          source: "c",
          dedupKey: "key_119",
          type: "y",
          status: "ignored",
          receivedAt: new Date(1_700_000_000_119).toISOString(),
          receiptCount: 1,
        });
      });

      it("uses a default limit of 50 and ends with nextCursor null on an exactly full last page", async () => {
        await seed120();
        const page = await store.listEvents({});
        expect(page.items).toHaveLength(50);
        expect(page.nextCursor).not.toBeNull();
        const pages = await allPages(store, { limit: 60 });
        expect(pages.map((p) => p.length)).toEqual([60, 60]);
        const all = await store.listEvents({ limit: 500 });
        expect(all.items).toHaveLength(120);
        expect(all.nextCursor).toBeNull();
      });

      it("filters by source, type, status and their combinations", async () => {
        const ids = await seed120();
        const bySource = (await allPages(store, { source: "a", limit: 7 })).flat();
        expect(bySource).toHaveLength(40);
        expect(bySource.every((item) => item.source === "a")).toBe(true);
        expect(bySource.map((item) => item.id)).toEqual(
          ids.filter((_, i) => i % 3 === 0).reverse(),
        );

        const byType = (await allPages(store, { type: "y", limit: 50 })).flat();
        expect(byType).toHaveLength(60);
        expect(byType.every((item) => item.type === "y")).toBe(true);

        const both = (await allPages(store, { source: "b", type: "x", limit: 3 })).flat();
        expect(both.map((item) => item.id)).toEqual(
          ids.filter((_, i) => i % 3 === 1 && i % 2 === 0).reverse(),
        );

        const received = (await allPages(store, { status: "ignored", limit: 500 })).flat();
        expect(received).toHaveLength(120);
        const none = await store.listEvents({ status: "delivered" });
        expect(none).toEqual({ items: [], nextCursor: null });

        const three = (
          await allPages(store, { source: "c", type: "y", status: "ignored", limit: 4 })
        ).flat();
        expect(three.map((item) => item.id)).toEqual(
          ids.filter((_, i) => i % 3 === 2 && i % 2 === 1).reverse(),
        );
        const typeStatus = (await allPages(store, { type: "x", status: "ignored" })).flat();
        expect(typeStatus).toHaveLength(60);
      });

      it("rejects an invalid cursor with HOOKINBOX_CURSOR_INVALID", async () => {
        await store.accept(acceptInput());
        for (const cursor of ["not a cursor!", "Zm9v", "", "ZXZ0Xw"]) {
          const error = await rejectionOf(store.listEvents({ cursor }));
          expect(isHookinboxError(error, "HOOKINBOX_CURSOR_INVALID")).toBe(true);
        }
      });

      it("rejects a limit outside 1..500 with HOOKINBOX_QUERY_INVALID", async () => {
        for (const limit of [0, -1, 501, 1.5, Number.NaN]) {
          const error = await rejectionOf(store.listEvents({ limit }));
          expect(isHookinboxError(error, "HOOKINBOX_QUERY_INVALID")).toBe(true);
        }
        await expect(store.listEvents({ limit: 500 })).resolves.toMatchObject({ items: [] });
        await expect(store.listEvents({ limit: 1 })).resolves.toMatchObject({ items: [] });
      });
    });

    describe("getEvent", () => {
      it("returns null for an unknown id", async () => {
        expect(await store.getEvent("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V")).toBeNull();
        expect(await store.getEvent("nonsense")).toBeNull();
      });

      it("lists receipts ordered by received time", async () => {
        const first = await store.accept(acceptInput({ receivedAt: 3_000, remoteAddress: "a" }));
        const second = await store.accept(acceptInput({ receivedAt: 1_000, remoteAddress: "b" }));
        const third = await store.accept(acceptInput({ receivedAt: 2_000, remoteAddress: null }));
        const event = await store.getEvent(first.eventId);
        expect(event?.receipts).toEqual([
          {
            id: second.receiptId,
            receivedAt: new Date(1_000).toISOString(),
            duplicate: true,
            remoteAddress: "b",
            secretIndex: 0,
          },
          {
            id: third.receiptId,
            receivedAt: new Date(2_000).toISOString(),
            duplicate: true,
            remoteAddress: null,
            secretIndex: 0,
          },
          {
            id: first.receiptId,
            receivedAt: new Date(3_000).toISOString(),
            duplicate: false,
            remoteAddress: "a",
            secretIndex: 0,
          },
        ]);
        expect(event?.receiptCount).toBe(3);
        expect(event?.receivedAt).toBe(new Date(3_000).toISOString());
      });
    });

    describe("rejections, ping, close, migrate", () => {
      it("recordRejection does not create events and never shows among an event's receipts", async () => {
        await store.recordRejection(rejectionInput());
        await Promise.all([
          store.recordRejection(rejectionInput({ status: 413, code: "HOOKINBOX_BODY_TOO_LARGE" })),
          store.recordRejection(rejectionInput({ remoteAddress: null, headerNames: [] })),
        ]);
        expect(await store.listEvents({})).toEqual({ items: [], nextCursor: null });
        const accepted = await store.accept(acceptInput());
        await store.recordRejection(rejectionInput());
        const event = await store.getEvent(accepted.eventId);
        expect(event?.receipts.map((r) => r.id)).toEqual([accepted.receiptId]);
        expect((await store.listEvents({})).items[0]?.receiptCount).toBe(1);
      });

      it("lists rejections newest first with their reason and metadata, paged, never bodies", async () => {
        for (let i = 0; i < 7; i++) {
          await store.recordRejection(
            rejectionInput({ source: i % 2 ? "a" : "b", size: i, receivedAt: 1_000 + i }),
          );
        }
        const accepted = await store.accept(acceptInput());
        const first = await store.listReceipts({ rejected: true, limit: 3 });
        expect(first.items.map((r) => r.size)).toEqual([6, 5, 4]);
        expect(first.items[0]).toEqual({
          id: expect.stringMatching(/^rcp_/),
          source: "b",
          receivedAt: new Date(1_006).toISOString(),
          eventId: null,
          duplicate: false,
          remoteAddress: "198.51.100.7",
          status: 401,
          code: "HOOKINBOX_SIGNATURE_MISMATCH",
          size: 6,
          headerNames: ["content-type", "stripe-signature"],
        });
        const rest = await store.listReceipts({
          rejected: true,
          limit: 10,
          cursor: first.nextCursor!,
        });
        expect(rest.items.map((r) => r.size)).toEqual([3, 2, 1, 0]);
        expect(rest.nextCursor).toBeNull();
        expect(
          (await store.listReceipts({ rejected: true, source: "a" })).items.map((r) => r.size),
        ).toEqual([5, 3, 1]);
        expect((await store.listReceipts({ rejected: false })).items.map((r) => r.id)).toEqual([
          accepted.receiptId,
        ]);
        expect((await store.listReceipts({})).items).toHaveLength(8);
      });

      it("accepts and rejections committed side by side all succeed", async () => {
        const work: Promise<unknown>[] = [];
        for (let i = 0; i < 30; i++) {
          work.push(store.accept(acceptInput({ identity: { dedupKey: `k${i % 10}` } })));
          work.push(store.recordRejection(rejectionInput()));
          if (i % 10 === 0) work.push(store.ping());
        }
        await Promise.all(work);
        expect((await store.listEvents({})).items).toHaveLength(10);
      });

      it("ping performs a write and resolves", async () => {
        await expect(store.ping()).resolves.toBeUndefined();
        await expect(Promise.all([store.ping(), store.ping()])).resolves.toHaveLength(2);
      });

      it("after close, accept rejects with HOOKINBOX_STORE_CLOSED (close is idempotent)", async () => {
        await store.close();
        await store.close();
        const error = await rejectionOf(store.accept(acceptInput()));
        expect(isHookinboxError(error, "HOOKINBOX_STORE_CLOSED")).toBe(true);
        const pingError = await rejectionOf(store.ping());
        expect(isHookinboxError(pingError, "HOOKINBOX_STORE_CLOSED")).toBe(true);
        const rejectionError = await rejectionOf(store.recordRejection(rejectionInput()));
        expect(isHookinboxError(rejectionError, "HOOKINBOX_STORE_CLOSED")).toBe(true);
      });

      it("commits accepts already submitted when close is called", async () => {
        const pending = Array.from({ length: 5 }, (_, i) =>
          store.accept(acceptInput({ identity: { dedupKey: `k${i}` } })),
        );
        const closing = store.close();
        const results = await Promise.all(pending);
        await closing;
        expect(results.every((result) => !result.duplicate)).toBe(true);
      });

      it("mints event and receipt ids from the caller's receivedAt, not its own clock", async () => {
        // A minute ahead of the store's clock (Date.now): ids are monotonic within a process, so
        // a time earlier than any id already minted would be raised to that id's time.
        const receivedAt = Date.now() + 60_000;
        const result = await store.accept(acceptInput({ receivedAt }));
        const again = await store.accept(acceptInput({ receivedAt: receivedAt + 1 }));
        await store.recordRejection(rejectionInput({ receivedAt: receivedAt + 2 }));
        const time = (id: string) => id.slice(4, 14);
        expect(time(result.eventId)).toBe(encodeTime(receivedAt));
        expect(time(result.receiptId)).toBe(encodeTime(receivedAt));
        expect(time(again.receiptId)).toBe(encodeTime(receivedAt + 1));
        const rejected = await store.listReceipts({ rejected: true });
        expect(rejected.items.map((r) => time(r.id))).toEqual([encodeTime(receivedAt + 2)]);
      });

      it("close waits for each read and write already started", async () => {
        const { eventId } = await opened.store.accept(acceptInput());
        await opened.cleanup();
        // One operation at a time, then close at once: nothing else keeps close() waiting.
        const operations: Array<[string, (s: Store) => Promise<unknown>]> = [
          ["getEvent", (s) => s.getEvent(eventId)],
          ["listEvents", (s) => s.listEvents({})],
          ["listReceipts", (s) => s.listReceipts({})],
          ["ping", (s) => s.ping()],
          ["recordRejection", (s) => s.recordRejection(rejectionInput())],
          ["accept", (s) => s.accept(acceptInput({ identity: { dedupKey: "late" } }))],
        ];
        const outcomes: string[] = [];
        for (const [name, run] of operations) {
          opened = await open();
          const started = run(opened.store);
          await opened.store.close();
          const [settled] = await Promise.allSettled([started]);
          outcomes.push(`${name}: ${settled?.status}`);
        }
        expect(outcomes).toEqual(operations.map(([name]) => `${name}: fulfilled`));
      });

      it("migrate again is idempotent", async () => {
        const again = await store.migrate();
        expect(again.applied).toEqual([]);
        expect(again.current).toBeGreaterThanOrEqual(1);
        const third = await store.migrate();
        expect(third).toEqual(again);
        await store.accept(acceptInput());
        expect((await store.listEvents({})).items).toHaveLength(1);
      });
    });
  });
}
