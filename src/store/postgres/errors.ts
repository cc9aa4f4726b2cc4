import { type HookinboxError, hookinboxError } from "../../errors.ts";

const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** The error and its causes, outermost first. */
function chain(error: unknown): Array<{ code?: unknown; message?: unknown }> {
  const found: Array<{ code?: unknown; message?: unknown }> = [];
  let current = error as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  while (current && typeof current === "object" && found.length < 5) {
    found.push(current);
    current = current.cause as typeof current;
  }
  return found;
}

/**
 * Names what a failed first contact with PostgreSQL means, with where and what to do: a missing
 * database (3D000) or a server that does not answer. Anything else is returned as it was.
 *
 * @example
 * ```ts
 * try { await migrate() } catch (e) { throw explainStartupError(e, url.connectionString) }
 * ```
 */
export function explainStartupError(error: unknown, connectionString: string): unknown {
  const url = new URL(connectionString);
  const host = url.searchParams.get("host") ?? (url.hostname || "localhost");
  const port = url.port || "5432";
  const database = decodeURIComponent(url.pathname.slice(1)) || url.username || "postgres";
  const where = `${host}:${port}`;
  for (const link of chain(error)) {
    const code = typeof link.code === "string" ? link.code : "";
    if (code === "3D000") {
      return wrap(
        "HOOKINBOX_STORE_DATABASE_MISSING",
        `database "${database}" on ${where}; create it (createdb -h ${host} -p ${port} ${database}) or fix the store URL`,
        error,
      );
    }
    const timedOut = /timeout exceeded when trying to connect|connection timeout/i.test(
      String(link.message ?? ""),
    );
    if (unreachableCodes.has(code) || timedOut) {
      return wrap(
        "HOOKINBOX_STORE_UNREACHABLE",
        `nothing answers at ${where} (${code || "connect timeout"}); start PostgreSQL there or fix the host and port in the store URL`,
        error,
      );
    }
  }
  return error;
}

/** SQLSTATEs of a schema that is gone: undefined table, undefined function, invalid schema. */
const schemaMissingStates = new Set(["42P01", "42883", "3F000"]);

/**
 * Whether an error (or its cause) says hookinbox's schema is missing: dropped, or the database
 * was recreated empty.
 *
 * @example
 * ```ts
 * if (isSchemaMissing(error)) await store.migrate();
 * ```
 */
export function isSchemaMissing(error: unknown): boolean {
  return chain(error).some(
    (link) => typeof link.code === "string" && schemaMissingStates.has(link.code),
  );
}

function wrap(
  code: "HOOKINBOX_STORE_DATABASE_MISSING" | "HOOKINBOX_STORE_UNREACHABLE",
  detail: string,
  cause: unknown,
): HookinboxError {
  return hookinboxError(code, detail, cause);
}
