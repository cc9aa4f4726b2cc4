import pg from "pg";
import { hookinboxError, isHookinboxError } from "../../errors.ts";

/** What a `postgres://` store URL says, with hookinbox's own parameters taken out. */
export interface PostgresUrl {
  /** The URL for the `pg` driver, without hookinbox's parameters. */
  readonly connectionString: string;
  /** Schema holding hookinbox's tables (`?schema=`, default `hookinbox`). */
  readonly schema: string;
  /** Pool size (`?pool=`, default 10). */
  readonly poolSize: number;
  /**
   * `?pgbouncer=true` (Prisma's convention): the URL is a transaction-mode pooler (PgBouncer,
   * Supavisor, Neon's pooler), so no named prepared statements and no session state.
   */
  readonly pgbouncer: boolean;
  /** `?directUrl=` (URL-encoded): a direct connection for migrations, as Prisma's `directUrl`. */
  readonly directUrl: string | null;
  /**
   * Where to `LISTEN`: `?listenUrl=`, else `directUrl`, else (behind a pooler) nowhere: workers
   * in other processes then find new work by polling (`worker.pollInterval`).
   */
  readonly listenUrl: string | null;
}

/**
 * Parses `postgres://user@host:5432/db?schema=hookinbox&pool=20`, and behind a transaction-mode
 * pooler `…?pgbouncer=true&directUrl=<URL-encoded direct URL>`.
 *
 * @example
 * ```ts
 * parsePostgresUrl("postgres://localhost/app?schema=inbox"); // { schema: "inbox", poolSize: 10, … }
 * ```
 */
export function parsePostgresUrl(url: string): PostgresUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw hookinboxError("HOOKINBOX_STORE_URL_INVALID", "not a valid postgres:// URL");
  }
  const schema = parsed.searchParams.get("schema") ?? "hookinbox";
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw hookinboxError(
      "HOOKINBOX_STORE_URL_INVALID",
      "schema must be a lower-case identifier (a-z, 0-9, _)",
    );
  }
  const poolSize = Number(parsed.searchParams.get("pool") ?? 10);
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000) {
    throw hookinboxError("HOOKINBOX_STORE_URL_INVALID", "pool must be an integer from 1 to 1000");
  }
  const flag = parsed.searchParams.get("pgbouncer");
  if (flag !== null && flag !== "true" && flag !== "false") {
    throw hookinboxError("HOOKINBOX_STORE_URL_INVALID", "pgbouncer must be true or false");
  }
  const pgbouncer = flag === "true";
  const otherUrl = (name: string): string | null => {
    const value = parsed.searchParams.get(name);
    if (value === null || value === "") return null;
    if (!/^postgres(ql)?:\/\//i.test(value)) {
      throw hookinboxError(
        "HOOKINBOX_STORE_URL_INVALID",
        `${name} must be a URL-encoded postgres:// URL (encodeURIComponent)`,
      );
    }
    return value;
  };
  const directUrl = otherUrl("directUrl");
  const listenUrl = otherUrl("listenUrl") ?? directUrl;
  for (const name of ["schema", "pool", "pgbouncer", "directUrl", "listenUrl"])
    parsed.searchParams.delete(name);
  const connectionString = parsed.toString();
  return {
    connectionString,
    schema,
    poolSize,
    pgbouncer,
    directUrl,
    listenUrl: listenUrl ?? (pgbouncer ? null : connectionString),
  };
}

// SQLSTATEs worth a quick retry: serialization failure, deadlock, admin/crash shutdown, cannot
// connect now, and the connection exception class.
const retryableStates = new Set([
  "40001",
  "40P01",
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);
const retryableCodes = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);

/**
 * Whether an error is transient: a conflict to retry or a connection that broke or could not open.
 *
 * @example
 * ```ts
 * if (isRetryable(error)) await sleep(50);
 * ```
 */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (retryableStates.has(code) || retryableCodes.has(code)))
    return true;
  const message = String((error as { message?: unknown } | null)?.message ?? "");
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    message,
  );
}

const delays = [25, 100, 400];

/**
 * Runs `work`, retrying transient PostgreSQL errors with a short backoff (25, 100, 400 ms); a
 * final failure becomes HOOKINBOX_STORE_UNAVAILABLE, so ingest answers 503 and providers retry.
 * Only for work that is safe to repeat (every store operation is: accepts deduplicate, and a
 * queue change whose reply was lost is caught by its lease guard).
 *
 * @example
 * ```ts
 * const rows = await withRetry(() => pool.query(sql, params));
 * ```
 */
export async function withRetry<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (isHookinboxError(error)) throw error;
      if (!isRetryable(error)) {
        if (typeof (error as { code?: unknown }).code === "string") {
          throw hookinboxError(
            "HOOKINBOX_STORE_UNAVAILABLE",
            `PostgreSQL error ${(error as { code: string }).code}`,
            error,
          );
        }
        throw error;
      }
      const delay = delays[attempt];
      if (delay === undefined)
        throw hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", "PostgreSQL is unreachable", error);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * A pool for the store. Its connections keep the database's default `search_path` (hookinbox's
 * SQL names its schema, see schema-names.ts), so a handler's `ctx.transaction` sees the user's
 * tables as the user's own connection would. Idle-connection errors (a restarted server) are
 * absorbed: the pool replaces the connection on next use.
 *
 * @example
 * ```ts
 * const pool = createPool(parsePostgresUrl(url), (e) => logger.warn(e));
 * ```
 */
export function createPool(
  url: PostgresUrl,
  onIdleError: (error: Error) => void,
  connectionString = url.connectionString,
  max = url.poolSize,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    ...(url.pgbouncer ? { Client: UnnamedStatementClient } : {}),
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    // Idle connections do not keep the process alive: a process that never calls close() (a cron
    // run of processAvailable, a serverless function) may exit once its work is done.
    allowExitOnIdle: true,
    application_name: "hookinbox",
    // No JIT: hookinbox's statements are short and index-driven, but where the planner's estimates
    // run high (tables never analyzed, nine day partitions in an UPDATE) their cost passes
    // jit_above_cost, and compiling took 100-250 ms per statement, 95% of a keyed completion's
    // time in a soak. An `options` in the URL replaces this one. Not behind PgBouncer, which
    // refuses startup options unless told to ignore them.
    ...(url.pgbouncer ? {} : { options: "-c jit=off" }),
    // Times are bigint ms: read int8 as a JS number (exact up to 2^53) on this pool only, so the
    // process-wide pg defaults other code relies on stay untouched. `tx.query` results in
    // handlers follow the same rule.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === 20
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on("error", onIdleError);
  return pool;
}

/**
 * A client that sends every statement unnamed: behind a transaction-mode pooler, consecutive
 * transactions of one client land on different server connections, where a named statement
 * prepared on another would be missing. hookinbox's SQL keeps its names (`hookinbox_complete_unkeyed_1`) for
 * direct connections; this drops them, and the user's `tx.query` is unnamed too.
 */
class UnnamedStatementClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this forwards all.
  override query(config: any, ...rest: any[]): any {
    if (
      config &&
      typeof config === "object" &&
      typeof config.submit !== "function" &&
      config.name
    ) {
      const { name: _unnamed, ...unnamed } = config;
      return (super.query as (...args: unknown[]) => unknown)(unnamed, ...rest);
    }
    return (super.query as (...args: unknown[]) => unknown)(config, ...rest);
  }
}

/**
 * Whether statements prepared on `client` stay there for its next transactions: a direct
 * connection, not one behind a transaction-mode pooler (`?pgbouncer=true`).
 *
 * @example
 * ```ts
 * if (keepsPrepared(client)) await client.query("PREPARE hookinbox_x(int) AS SELECT $1");
 * ```
 */
export function keepsPrepared(client: pg.ClientBase): boolean {
  return !(client instanceof UnnamedStatementClient);
}

/**
 * Runs `work` on one pooled connection, with ROLLBACK when it throws (harmless outside a
 * transaction). A connection that dies meanwhile is released as broken, never back into the
 * pool, and never crashes the process with an unhandled 'error' event.
 *
 * @example
 * ```ts
 * await withClient(pool, (client) => client.query("BEGIN; SELECT 1; COMMIT"));
 * ```
 */
export async function withClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await withRetry(() => pool.connect());
  // A checked-out client has no pool error listener: without this one, a connection that dies
  // mid-transaction (restart, network cut) is an unhandled 'error' event that kills the process.
  // The query under way rejects as well; this only marks the client broken.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  try {
    return await work(client);
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/**
 * Runs `work` on one pooled connection inside BEGIN … COMMIT (ROLLBACK when it throws), see
 * `withClient`.
 *
 * @example
 * ```ts
 * await withTransaction(pool, (client) => client.query("UPDATE …"));
 * ```
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  });
}
