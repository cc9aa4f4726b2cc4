import { hookinboxError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { openPostgresStore } from "./postgres/store.ts";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite/store.ts";
import type { Store } from "./types.ts";

const acceptedForms =
  'use "sqlite:./relative/path.db", "sqlite:/absolute/path.db", "sqlite::memory:" (tests only) or "postgres://user@host:5432/db?schema=hookinbox"';

/**
 * Parses a store URL into what it names, without opening anything.
 *
 * - `sqlite:./path.db`, `sqlite:path.db` (relative to the working directory), `sqlite:/abs/path.db`
 * - `sqlite::memory:`: an in-memory database, NOT durable (tests only)
 * - `postgres://…` / `postgresql://…`: PostgreSQL (`?schema=`, `?pool=`)
 *
 * Anything else throws HOOKINBOX_STORE_URL_INVALID naming the accepted forms.
 *
 * @example
 * ```ts
 * parseStoreUrl("sqlite:./.hookinbox/hookinbox.db"); // { kind: "sqlite", path: "./.hookinbox/hookinbox.db" }
 * parseStoreUrl("mysql://db"); // throws HookinboxError HOOKINBOX_STORE_URL_INVALID
 * ```
 */
export function parseStoreUrl(
  url: string,
): { kind: "sqlite"; path: string } | { kind: "postgres"; url: string } {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { kind: "postgres", url: trimmed };
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
export function openStore(
  url: string,
  options: Omit<SqliteStoreOptions, "path"> & { logger?: Logger } = {},
): Store {
  const parsed = parseStoreUrl(url);
  if (parsed.kind === "postgres")
    return openPostgresStore(parsed.url, {
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.audit === undefined ? {} : { audit: options.audit }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  const { logger: _logger, ...sqliteOptions } = options;
  return openSqliteStore({ ...sqliteOptions, path: parsed.path });
}
