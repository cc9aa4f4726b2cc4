import { describe, expect, it } from "vitest";
import { aheadOnKeySql, eventStatusSql, inKeyQueueSql } from "./queue-rules.ts";

/** The generated statements, whitespace folded: what each store runs. */
const flat = (sql: string) => sql.replace(/\s+/g, " ").trim();

describe("queue rules: one definition, each store's spelling", () => {
  it("writes the key-queue predicate as SQLite's partial index states it", () => {
    const spelled = [inKeyQueueSql("sqlite", ""), inKeyQueueSql("postgres", "h")];
    expect(spelled).toEqual([
      "(status IN ('pending', 'blocked', 'running') OR blocks_key = 1)",
      "(h.status IN ('pending', 'blocked', 'running') OR h.blocks_key)",
    ]);
  });

  it("writes 'something ahead on this key' for either store", () => {
    const spelled = [
      aheadOnKeySql("postgres", "o", {
        target: "c.t",
        orderingKey: "c.k",
        id: "c.id",
        orderVersion: "c.v",
      }),
      aheadOnKeySql("sqlite", "", {
        target: "@t",
        orderingKey: "@k",
        id: "@id",
        orderVersion: "@v",
      }),
    ].map(flat);
    expect(spelled).toEqual([
      "o.target = c.t AND o.ordering_key = c.k AND o.id <> c.id" +
        " AND (o.status IN ('pending', 'blocked', 'running') OR o.blocks_key)" +
        " AND (o.status = 'running' OR o.blocks_key OR o.order_version < c.v" +
        " OR (o.order_version = c.v AND o.id < c.id))",
      "target = @t AND ordering_key = @k AND id <> @id" +
        " AND (status IN ('pending', 'blocked', 'running') OR blocks_key = 1)" +
        " AND (status = 'running' OR blocks_key = 1 OR order_version < @v" +
        " OR (order_version = @v AND id < @id))",
    ]);
  });

  it("writes the event-status rule for either store, probes fenced on PostgreSQL", () => {
    const rule = (fence: string) =>
      "CASE WHEN EXISTS (SELECT 1 FROM D o WHERE o.event_id = E" +
      ` AND o.status IN ('pending', 'blocked', 'running')${fence}) THEN 'pending'` +
      " WHEN EXISTS (SELECT 1 FROM D d WHERE d.event_id = E AND d.status = 'dead'" +
      " AND NOT EXISTS (SELECT 1 FROM D r WHERE r.event_id = d.event_id" +
      ` AND r.target = d.target AND r.id > d.id AND r.status IN ('done', 'stale')${fence})${fence})` +
      " THEN 'dead' ELSE 'done' END";
    expect(flat(eventStatusSql("sqlite", { deliveries: "D", event: "E" }))).toBe(rule(""));
    expect(flat(eventStatusSql("postgres", { deliveries: "D", event: "E" }))).toBe(
      rule(" OFFSET 0"),
    );
    const status = (alias: string) => `S(${alias})`;
    expect(flat(eventStatusSql("postgres", { deliveries: "D", event: "E", status }))).toContain(
      "AND S(o) IN ('pending', 'blocked', 'running') OFFSET 0) THEN 'pending'",
    );
  });
});
