import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseStoreUrl } from "../store/open-store.ts";

/** The file's name beside the SQLite database, or under `.hookinbox/` for other stores. */
const fileName = "admin-token";

/**
 * Where `hookinbox start` keeps the admin token it generated for this run: beside the SQLite
 * database file, else (PostgreSQL, `:memory:`) in `.hookinbox/` under the working directory.
 *
 * @example
 * ```ts
 * adminTokenPath("sqlite:./.hookinbox/hookinbox.db", "/srv/app"); // "/srv/app/.hookinbox/admin-token"
 * ```
 */
export function adminTokenPath(storeUrl: string, cwd: string): string {
  const store = parseStoreUrl(storeUrl);
  if (store.kind === "sqlite" && store.path !== ":memory:")
    return join(dirname(resolve(cwd, store.path)), fileName);
  return resolve(cwd, ".hookinbox", fileName);
}

/**
 * Writes a generated admin token to `path`, readable by its owner only (0600, in a folder made
 * 0700 when it is created): the token goes to no log and no terminal, only to this file. A file
 * left by an earlier run is replaced, never rewritten in place, so its old mode cannot leak the
 * new token. Returns a function that removes it (at shutdown: the token dies with the process).
 *
 * @example
 * ```ts
 * const remove = writeAdminTokenFile("/srv/app/.hookinbox/admin-token", token);
 * ```
 */
export function writeAdminTokenFile(path: string, token: string): () => void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  rmSync(path, { force: true });
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
  return () => rmSync(path, { force: true });
}
