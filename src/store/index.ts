/**
 * Durable storage for receipts and events: the `Store` contract, the SQLite store (embedded
 * default) and `openStore(url)`.
 *
 * @example
 * ```ts
 * import { openStore } from "./store/index.ts";
 * const store = openStore("sqlite:./.hookinbox/hookinbox.db");
 * await store.migrate();
 * ```
 */

export { decodeCursor, encodeCursor, listLimits, pageLimit } from "./core/paging.ts";
export { openStore, parseStoreUrl } from "./open-store.ts";
export { type CommitInfo, GroupCommit } from "./sqlite/group-commit.ts";
export { loadSqliteMigrations, migrateSqlite, type SqliteMigration } from "./sqlite/migrate.ts";
export {
  openSqliteStore,
  type SqlitePragmas,
  type SqliteStore,
  type SqliteStoreOptions,
  type SqliteStoreStats,
} from "./sqlite/store.ts";
export type {
  AcceptInput,
  AcceptResult,
  EventDetail,
  EventIdentity,
  EventPage,
  EventQuery,
  EventStatus,
  EventSummary,
  MigrationReport,
  ReceiptView,
  RejectionInput,
  Store,
} from "./types.ts";
