// How hookinbox's SQL finds its own tables on PostgreSQL (read this before writing SQL here).
//
// hookinbox never changes a connection's `search_path`: its connections keep the database's
// default, so the SQL a handler runs in `ctx.transaction` resolves the user's tables (`credits`
// in `public`) exactly as the user's own connection would. In exchange, hookinbox's own SQL
// names its schema explicitly:
//
// - TypeScript SQL modules qualify every table and function with `schemaNames(schema)`:
//   `const t = schemaNames(url.schema)` once per store, then `` `SELECT … FROM ${t.events}` ``.
//   A new table or function gets a line in `tables` or `functions` below. Never write a bare
//   table name and never `SET search_path`.
// - Migration files (`migrations/NNN_*.sql`) use bare names: the runner applies them inside
//   their transaction with `SET LOCAL search_path` set to the store's schema, so one file serves
//   every schema. A function defined in a migration must pin its own path
//   (`CREATE FUNCTION … SET search_path FROM CURRENT`), because its body resolves names when it
//   is called, on the caller's connection. (010 dropped the queue's functions: its state
//   changes are TypeScript SQL modules in postgres/queue/.)

const tables = [
  "events",
  "receipts",
  "deliveries",
  "attempts",
  "applied_versions",
  "effects",
  "hookinbox_heartbeat",
  "hookinbox_migrations",
  "destinations",
  "audit_leaves",
  "audit_nodes",
  "audit_tree",
  "audit_heads",
  "audit_pending",
  "audit_sequencer",
  "alert_outbox",
  "event_dedup",
  "retention_marks",
  "receipts_accepted",
  "receipts_rejected",
] as const;

// The queue's functions of 002/003 went in migration 010 (its SQL lives in postgres/queue/),
// retention's partition helpers of 009 and 011's audit append in 016 (partitions.ts makes the
// partitions with plain DDL). The one left is 012's batch append, which retention records its
// batches through; test/store/postgres-functions.test.ts holds the schema to this list.
const functions = ["hookinbox_audit_append_leaves"] as const;

/** A name hookinbox owns in its schema. */
export type SchemaObject = (typeof tables)[number] | (typeof functions)[number];

/** hookinbox's tables and functions, each as `"schema".name`, ready to put in SQL text. */
export type SchemaNames = Readonly<Record<SchemaObject, string>> & {
  /** The schema itself, quoted (`"hookinbox"`). */
  readonly schema: string;
};

/**
 * Qualifies hookinbox's tables and functions with the store's schema (quoted, so any valid
 * schema name works, reserved words included).
 *
 * @example
 * ```ts
 * const t = schemaNames("hookinbox");
 * const sql = `SELECT count(*) FROM ${t.events}`; // SELECT count(*) FROM "hookinbox".events
 * ```
 */
export function schemaNames(schema: string): SchemaNames {
  const quoted = `"${schema.replaceAll('"', '""')}"`;
  const names: Record<string, string> = { schema: quoted };
  for (const name of [...tables, ...functions]) names[name] = `${quoted}.${name}`;
  return names as SchemaNames;
}
