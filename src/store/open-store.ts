import { hookinboxError } from "../errors.ts";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.ts";
import type { Store } from "./types.ts";

const acceptedForms =
  'use "sqlite:./relative/path.db", "sqlite:/absolute/path.db" or "sqlite::memory:" (tests only)';

/**
 * Parses a store URL into what it names, without opening anything.
 *
 * - `sqlite:./path.db`, `sqlite:path.db` (relative to the working directory), `sqlite:/abs/path.db`
 * - `sqlite::memory:`: an in-memory database, NOT durable (tests only)
 * - `postgres://…` / `postgresql://…`: recognised, but not supported yet
 *
 * Anything else throws HOOKINBOX_STORE_URL_INVALID naming the accepted forms.
 *
 * @example
 * ```ts
 * parseStoreUrl("sqlite:./.hookinbox/hookinbox.db"); // { kind: "sqlite", path: "./.hookinbox/hookinbox.db" }
 * parseStoreUrl("mysql://db"); // throws HookinboxError HOOKINBOX_STORE_URL_INVALID
 * ```
 */
export function parseStoreUrl(url: string): { kind: "sqlite"; path: string } {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    throw hookinboxError(
      "HOOKINBOX_STORE_URL_INVALID",
      `PostgreSQL support is coming in a later release; for now ${acceptedForms}`,
    );
  }
  const match = /^sqlite:(.*)$/i.exec(trimmed);
  const rest = match?.[1];
  if (rest === undefined || rest === "") {
    throw hookinboxError("HOOKINBOX_STORE_URL_INVALID", acceptedForms);
  }
  if (rest === ":memory:") return { kind: "sqlite", path: ":memory:" };
  if (rest.startsWith("//")) {
    // "sqlite://x" is ambiguous (host or path?): refuse rather than guess.
    throw hookinboxError(
      "HOOKINBOX_STORE_URL_INVALID",
      `"sqlite://…" is ambiguous; ${acceptedForms}`,
    );
  }
  return { kind: "sqlite", path: rest };
}

/**
 * Opens the store a URL names (see `parseStoreUrl`). Call `migrate()` on the result before use.
 *
 * @example
 * ```ts
 * const store = openStore(process.env.DATABASE_URL ?? "sqlite:./.hookinbox/hookinbox.db");
 * await store.migrate();
 * ```
 */
export function openStore(url: string, options: Omit<SqliteStoreOptions, "path"> = {}): Store {
  const parsed = parseStoreUrl(url);
  return openSqliteStore({ ...options, path: parsed.path });
}
