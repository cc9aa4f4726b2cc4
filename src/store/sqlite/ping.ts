import type Database from "better-sqlite3";

const heartbeatSql = `
  INSERT INTO hookinbox_heartbeat (id, at) VALUES (1, ?)
  ON CONFLICT (id) DO UPDATE SET at = excluded.at`;

/**
 * Prepares the heartbeat write used by `ping()`: it rewrites one row, so running it through the
 * group commit proves that a real write reaches a durable COMMIT (what /readyz must know).
 *
 * @example
 * ```ts
 * const beat = preparePing(db, Date.now);
 * await groupCommit.submit(beat); // rejects with HOOKINBOX_STORE_UNAVAILABLE when SQLite cannot commit
 * ```
 */
export function preparePing(db: Database.Database, now: () => number): () => void {
  const heartbeat = db.prepare<[number]>(heartbeatSql);
  return () => {
    heartbeat.run(now());
  };
}
