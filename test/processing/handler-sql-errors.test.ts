// A handler's own SQL failing inside ctx.transaction (the README's example before its `credits`
// table exists) is that handler's failure, recorded and logged as itself, on every store
// (issue 8, item 10).
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { type StoreVariant, storeVariants, type TestStore } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The driver's words for a missing table, as each store reports them. */
const missingTable = (store: TestStore) =>
  store.kind === "sqlite"
    ? "SqliteError: no such table: credits (SQLITE_ERROR)"
    : 'error: relation "credits" does not exist (42P01)';

// SQLite runs with both writers: inline (library default) and thread (`hookinbox start`).
describe.each(storeVariants())(
  "a handler's own SQL error ($name)",
  ({ open, writer }: StoreVariant) => {
    it("is recorded, logged and retried as the handler's failure, then succeeds once the table exists", async () => {
      const store = await open();
      cleanups.push(() => store.cleanup());
      const lines: Array<Record<string, unknown>> = [];
      const destination = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
          done();
        },
      });
      let runs = 0;
      const env = processingInbox(
        {
          store: store.url,
          handlers: {
            "std:*": async (event: { id: string }, ctx: any) => {
              runs++;
              await ctx.transaction(async (tx: any) => {
                await tx.query(
                  store.dialect.sql("INSERT INTO credits (event_id, amount) VALUES (?, ?)"),
                  [event.id, 5],
                );
              });
            },
          },
          retry: { schedule: ["10ms"], maxAttempts: 2, jitter: "none" },
          worker: { pollInterval: "20ms", lease: "30s" },
        },
        {
          logger: createLogger({ level: "info", destination }),
          ...(writer ? { sqliteWriter: writer } : {}),
        },
      );
      cleanups.push(env.cleanup);
      const worker = env.inbox.startWorker();
      await env.post("msg_credit", { type: "order.paid" });
      await until(() => worker.stats().dead === 1, 10_000, "the dead letter");
      expect(runs).toBe(2);
      expect(worker.stats()).toMatchObject({ done: 0, retry: 1, dead: 1 });

      const dead = await env.inbox.store.listDeliveries({ status: "dead" });
      expect(dead.items).toHaveLength(1);
      expect(dead.items[0]!.lastError).toBe(missingTable(store));
      const attempts = await store.rows<{ outcome: string; error_message: string }>(
        "SELECT outcome, error_message FROM attempts ORDER BY attempt",
      );
      expect(attempts).toEqual([
        { outcome: "error", error_message: missingTable(store) },
        { outcome: "error", error_message: missingTable(store) },
      ]);
      const logged = lines.filter((l) => l.msg === "delivery" && l.outcome !== "done");
      expect(logged.map((l) => [l.outcome, l.err])).toEqual([
        ["retry", missingTable(store)],
        ["dead", missingTable(store)],
      ]);
      expect(JSON.stringify(lines)).not.toContain("Store cannot commit");

      // The operator creates the table and runs the delivery again: it commits.
      await store.exec("CREATE TABLE credits (event_id TEXT PRIMARY KEY, amount INTEGER)");
      await env.inbox.retryDelivery(dead.items[0]!.id);
      await until(() => worker.stats().done === 1, 10_000, "the retried delivery");
      expect(await store.count("SELECT count(*) AS n FROM credits")).toBe(1);
      expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
        1,
      );
    });
  },
);
