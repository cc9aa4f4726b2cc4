/**
 * The one registry of hookinbox errors. Every error a user or a provider can see has a stable
 * `code` (tests assert on it), the HTTP status it maps to, and a short message template.
 * Messages never contain a request body, a secret or a signature.
 */

const registry = {
  // ingest: routing and transport
  HOOKINBOX_ROUTE_NOT_FOUND: { status: 404, message: "No such route" },
  HOOKINBOX_REQUEST_TARGET_INVALID: { status: 400, message: "Request target is not served" },
  HOOKINBOX_METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed" },
  HOOKINBOX_REQUEST_MALFORMED: { status: 400, message: "Request is not valid HTTP" },
  HOOKINBOX_HEADERS_TOO_LARGE: { status: 431, message: "Request headers are too large" },
  HOOKINBOX_REQUEST_TIMEOUT: { status: 408, message: "Request was not received in time" },
  HOOKINBOX_SOURCE_NOT_FOUND: { status: 404, message: "Unknown source" },
  HOOKINBOX_IP_NOT_ALLOWED: { status: 403, message: "This address may not deliver to this source" },
  HOOKINBOX_RATE_LIMITED: {
    status: 429,
    message: "Too many rejected requests from this address; retry later",
  },
  HOOKINBOX_BODY_TOO_LARGE: { status: 413, message: "Request body is over the size limit" },
  HOOKINBOX_BODY_TIMEOUT: { status: 408, message: "Request body was not received in time" },
  HOOKINBOX_BODY_TOO_SLOW: { status: 408, message: "Request body arrived below the minimum rate" },
  HOOKINBOX_LOOP_DETECTED: {
    status: 508,
    message:
      "This request has passed through hookinbox more than http.maxHops times: a destination forwards back into hookinbox",
  },
  HOOKINBOX_BODY_ALREADY_CONSUMED: {
    status: 500,
    message: "The request body was consumed before hookinbox could read its raw bytes",
  },
  HOOKINBOX_LAMBDA_EVENT_INVALID: {
    status: 500,
    message:
      "The Lambda event is not an HTTP request hookinbox reads; invoke it through a function URL or an HTTP API with payload format 2.0",
  },
  HOOKINBOX_LAMBDA_BODY_INVALID: {
    status: 400,
    message: "The Lambda event's body is marked base64 but is not valid base64; nothing was stored",
  },
  // ingest: signature verification (one code per way a signature can be wrong)
  HOOKINBOX_SIGNATURE_MISSING: { status: 400, message: "Signature header is missing" },
  HOOKINBOX_SIGNATURE_MALFORMED: { status: 400, message: "Signature header is malformed" },
  HOOKINBOX_SIGNATURE_HEADER_REPEATED: {
    status: 400,
    message: "A signature header appears more than once; send it once",
  },
  HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED: {
    status: 400,
    message: "Signature header has no signature of a supported version",
  },
  HOOKINBOX_SIGNATURE_MISMATCH: { status: 401, message: "No signature matches" },
  HOOKINBOX_SIGNATURE_REPLAYED: {
    status: 401,
    message: "This signature was already used for another event",
  },
  HOOKINBOX_TIMESTAMP_MISSING: { status: 400, message: "Signature timestamp is missing" },
  HOOKINBOX_TIMESTAMP_MALFORMED: { status: 400, message: "Signature timestamp is malformed" },
  HOOKINBOX_TIMESTAMP_TOO_OLD: { status: 400, message: "Signature timestamp is too old" },
  HOOKINBOX_TIMESTAMP_IN_FUTURE: {
    status: 400,
    message: "Signature timestamp is too far in the future",
  },
  HOOKINBOX_HANDSHAKE_REJECTED: {
    status: 403,
    message:
      "Endpoint handshake did not verify (wrong verify token, or not enabled for this source)",
  },
  HOOKINBOX_SOURCE_NO_ACTIVE_SECRET: {
    status: 503,
    message: "Source has no active secret; refusing to accept unverified events",
  },
  // ingest: public keys fetched from the provider (SNS, Pub/Sub, Plaid, PayPal)
  HOOKINBOX_KEY_URL_NOT_ALLOWED: {
    status: 400,
    message: "The signing key URL is not one of the provider's hosts; nothing was fetched",
  },
  HOOKINBOX_KEY_UNKNOWN: { status: 401, message: "No signing key with this id" },
  HOOKINBOX_KEY_UNAVAILABLE: {
    status: 503,
    message: "The provider's signing keys could not be fetched; retry later",
  },
  HOOKINBOX_TOKEN_CLAIM_MISMATCH: {
    status: 401,
    message: "The signed token is not for this endpoint (issuer, audience or body hash)",
  },
  HOOKINBOX_SENDER_NOT_ALLOWED: {
    status: 403,
    message: "Signed by the provider, but for a sender this source does not accept",
  },
  HOOKINBOX_SUBSCRIPTION_CONFIRM_FAILED: {
    status: 503,
    message: "The subscription could not be confirmed with the provider; retry later",
  },
  // ingest: identity
  HOOKINBOX_EVENT_ID_MISSING: { status: 400, message: "Event id not found in the request" },
  HOOKINBOX_BODY_INVALID_JSON: { status: 400, message: "Body is not valid JSON" },
  HOOKINBOX_IDENTITY_INVALID_UTF8: {
    status: 400,
    message:
      "The event id is not valid UTF-8, so it cannot be told apart from other ids; nothing was stored",
  },
  // store
  HOOKINBOX_STORE_UNAVAILABLE: { status: 503, message: "Store cannot commit; retry later" },
  HOOKINBOX_SCHEMA_BEHIND: {
    status: 503,
    message: "The store's schema is behind this hookinbox; run `hookinbox migrate`",
  },
  HOOKINBOX_STORE_CLOSED: { status: 503, message: "Store is closed; retry later" },
  HOOKINBOX_STORE_URL_INVALID: { status: 500, message: "Store URL is not supported" },
  HOOKINBOX_STORE_DATABASE_MISSING: {
    status: 503,
    message: "The PostgreSQL database does not exist",
  },
  HOOKINBOX_STORE_UNREACHABLE: { status: 503, message: "The PostgreSQL server cannot be reached" },
  HOOKINBOX_STORE_PATH_UNUSABLE: {
    status: 503,
    message: "The SQLite file cannot be opened or created",
  },
  HOOKINBOX_SQLITE_DRIVER_MISSING: {
    status: 500,
    message: "The SQLite driver (better-sqlite3) is not installed or does not load",
  },
  // admin API
  HOOKINBOX_ADMIN_UNAUTHORIZED: { status: 401, message: "Missing or wrong admin token" },
  HOOKINBOX_ADMIN_DISABLED: { status: 404, message: "Admin API is disabled" },
  HOOKINBOX_ADMIN_AUTH_LIMITED: {
    status: 429,
    message: "Too many wrong admin tokens from this address; wait Retry-After seconds",
  },
  HOOKINBOX_ADMIN_TOKEN_WEAK: {
    status: 500,
    message: "The admin token is weak; generate a strong one with: openssl rand -hex 32",
  },
  HOOKINBOX_ADMIN_READ_ONLY: {
    status: 403,
    message: "The read-only admin token may read and stream events but change nothing",
  },
  HOOKINBOX_STREAM_LIMITED: {
    status: 503,
    message: "Too many event streams are open on this gateway (admin.maxStreams); retry later",
  },
  HOOKINBOX_STREAM_UNSUPPORTED: {
    status: 501,
    message:
      "This host cannot stream events; connect to the gateway (hookinbox start) or a node:http, Express or fetch host",
  },
  HOOKINBOX_LISTEN_UNREACHABLE: {
    status: 500,
    message: "The gateway could not be reached; check --gateway and that it is running",
  },
  HOOKINBOX_SESSION_INVALID: {
    status: 401,
    message: "The dashboard session expired, was signed out or is not valid; sign in again",
  },
  HOOKINBOX_CSRF_FAILED: {
    status: 403,
    message:
      "A write with a session cookie needs the session's X-Hookinbox-CSRF header and a same-origin request",
  },
  HOOKINBOX_DASHBOARD_NOT_BUILT: {
    status: 503,
    message: "The dashboard's assets are not built; run npm run build:dashboard",
  },
  HOOKINBOX_METRICS_DISABLED: {
    status: 404,
    message: "Metrics are disabled (metrics.enabled is false)",
  },
  HOOKINBOX_EVENT_NOT_FOUND: { status: 404, message: "No such event" },
  HOOKINBOX_EVENT_EXPIRED: {
    status: 410,
    message: "The event was removed by retention.events; its audit proof remains",
  },
  HOOKINBOX_QUERY_INVALID: { status: 400, message: "Invalid query parameter" },
  HOOKINBOX_CURSOR_INVALID: { status: 400, message: "Invalid cursor" },
  HOOKINBOX_BULK_UNSCOPED: {
    status: 400,
    message: 'A bulk action without a filter needs "all": true (CLI: --all)',
  },
  HOOKINBOX_BULK_SCOPE_CONFLICT: {
    status: 400,
    message: '"all": true and a filter contradict each other; pass one of them',
  },
  // audit log
  HOOKINBOX_AUDIT_DISABLED: {
    status: 404,
    message: "The audit log is disabled (audit.enabled is false)",
  },
  HOOKINBOX_AUDIT_NOT_IN_LOG: {
    status: 404,
    message: "This event is not in the audit log at that tree size",
  },
  HOOKINBOX_AUDIT_LEAF_PENDING: {
    status: 409,
    message:
      "This event is accepted but not sequenced into the audit log yet; retry after the maximum merge delay (audit.maxMergeDelay)",
  },
  HOOKINBOX_AUDIT_KEY_INVALID: { status: 500, message: "The audit signing key is invalid" },
  HOOKINBOX_AUDIT_HEAD_INVALID: {
    status: 500,
    message: "The trusted tree head is malformed or its signature does not verify",
  },
  HOOKINBOX_AUDIT_VERIFY_FAILED: {
    status: 500,
    message: "The stored log does not match the trusted tree head",
  },
  // serverless hosts (hookinbox/next)
  HOOKINBOX_CRON_UNAUTHORIZED: {
    status: 401,
    message: "Missing or wrong cron secret; send Authorization: Bearer <CRON_SECRET>",
  },
  HOOKINBOX_CRON_SECRET_UNSET: {
    status: 503,
    message: "No cron secret is configured; set CRON_SECRET (or pass secret) for this route",
  },
  HOOKINBOX_AFTER_MISSING: {
    status: 500,
    message:
      'processAfterResponse needs Next.js\'s after: import { after } from "next/server" and pass { after }',
  },
  // processing
  HOOKINBOX_LEASE_LOST: {
    status: 409,
    message: "The worker no longer holds this delivery's lease; nothing was committed",
  },
  HOOKINBOX_DELIVERY_NOT_FOUND: { status: 404, message: "No such delivery" },
  HOOKINBOX_UNSAFE_TO_REPROCESS: {
    status: 409,
    message:
      "A runbook says this event type is not safe to reprocess; pass the override to retry anyway",
  },
  HOOKINBOX_DELIVERY_NOT_RETRYABLE: {
    status: 409,
    message: "Only pending, blocked or dead-lettered deliveries can be run now",
  },
  HOOKINBOX_EFFECT_NOT_FOUND: { status: 404, message: "No such effect" },
  HOOKINBOX_EFFECT_NOT_HELD: {
    status: 409,
    message: "Only an effect held for a human can be resolved by hand",
  },
  // Thrown by handlers and the effect ledger inside a handler: kind "handler", their message is
  // the handler's own, and they dead-letter the delivery at once.
  HOOKINBOX_EFFECT_HELD: {
    status: 409,
    message: "An earlier claim of this effect went stale; it is held for a human to resolve",
    kind: "handler",
  },
  HOOKINBOX_PERMANENT: {
    status: 500,
    message: "The handler failed permanently; the delivery is dead-lettered",
    kind: "handler",
  },
  HOOKINBOX_ILLEGAL_TRANSITION: {
    status: 500,
    message: "A state machine refused this transition; the delivery is dead-lettered",
    kind: "handler",
  },
  HOOKINBOX_EFFECT_BUSY: {
    status: 409,
    message: "This effect is claimed by another attempt that may still be running",
  },
  HOOKINBOX_TRANSACTION_REUSED: {
    status: 500,
    message: "ctx.transaction may run once per delivery attempt",
  },
  HOOKINBOX_HANDLER_TIMEOUT: {
    status: 500,
    message: "The handler ran past its timeout; its signal was aborted",
  },
  HOOKINBOX_SQL_VALUE_UNDEFINED: {
    status: 500,
    message: "A tx.sql value is undefined; pass null for SQL NULL",
  },
  HOOKINBOX_SQL_VALUE_UNSUPPORTED: {
    status: 500,
    message:
      "A tx.sql value is not a string, number, bigint, boolean, Date, Uint8Array or null; JSON.stringify an object",
  },
  HOOKINBOX_SQL_NOT_TEMPLATE: {
    status: 500,
    message: "tx.sql was called as a function; write it as a tag, tx.sql`…`, or use tx.query",
  },
  HOOKINBOX_UNKNOWN_TARGET: { status: 400, message: "Unknown target" },
  // Prisma inside ctx.transaction (hookinbox/prisma)
  HOOKINBOX_PRISMA_NO_TRANSACTION: {
    status: 500,
    message:
      "withPrisma needs the tx of a ctx.transaction that is still running: call it inside ctx.transaction's callback with that tx",
  },
  HOOKINBOX_PRISMA_NOT_JOINABLE: {
    status: 500,
    message:
      "This PrismaClient's adapter cannot join a delivery's transaction: build it with new PrismaPg(joinablePool(pg, config)), or joinableSqlite(PrismaBetterSqlite3, config) on SQLite",
  },
  HOOKINBOX_PRISMA_PG_MISMATCH: {
    status: 500,
    message:
      "The pool comes from another copy of pg than the one @prisma/adapter-pg loads, so PrismaPg would open its own: give joinablePool the pg that @prisma/adapter-pg resolves (npm dedupe pg)",
  },
  HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION: {
    status: 500,
    message:
      "A Prisma query came for a delivery transaction that has ended: await every Prisma call inside withPrisma's callback, on its db",
  },
  HOOKINBOX_PRISMA_DIALECT_MISMATCH: {
    status: 500,
    message:
      "The PrismaClient's database is not the store's: use a PostgreSQL PrismaClient with a PostgreSQL store, a SQLite one with a SQLite store",
  },
  HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED: {
    status: 500,
    message:
      'Prisma cannot join a SQLite store whose writer runs in a thread: use writer "inline", a PostgreSQL store, or tx.query',
  },
  HOOKINBOX_PROCESS_OPTIONS_INVALID: {
    status: 500,
    message:
      "processAvailable options are invalid: maxMs and graceMs are ms >= 0, concurrency an integer >= 1, eventIds an array of event ids",
  },
  // forwarding to destinations (attempt errors carry the code in their message)
  HOOKINBOX_DESTINATION_NOT_FOUND: { status: 404, message: "No such destination" },
  HOOKINBOX_DESTINATION_LOOP: {
    status: 400,
    message:
      "The destination's URL is this gateway's own webhook listener: every event forwarded there would come back as a new event",
  },
  HOOKINBOX_DESTINATION_DISABLED: {
    status: 409,
    message:
      "The destination was disabled by a 410 Gone; enable it (not resume) once the app is back",
  },
  // alert delivery (logged with the alert's id; the alert stays in the outbox and retries)
  HOOKINBOX_ALERT_FAILED: {
    status: 502,
    message:
      "The alert webhook did not answer 2xx (or alerts.onAlert threw); the alert retries from the outbox",
  },
  HOOKINBOX_ALERT_UNSIGNED: {
    status: 500,
    message: "alerts.webhook.secret is outside its notBefore/notAfter window; the alert waits",
  },
  HOOKINBOX_FORWARD_STATUS: {
    status: 502,
    message: "The destination answered with a status that is not 2xx",
  },
  HOOKINBOX_FORWARD_GONE: {
    status: 502,
    message: "The destination answered 410 Gone; it is disabled until an operator enables it",
  },
  HOOKINBOX_FORWARD_TIMEOUT: {
    status: 504,
    message: "The destination did not answer within its timeout",
  },
  HOOKINBOX_FORWARD_NETWORK: {
    status: 502,
    message: "The destination could not be reached (DNS, connect or reset)",
  },
  HOOKINBOX_BUS_UNREACHABLE: {
    status: 502,
    message: "The queue destination's broker could not be reached (connect, handshake or timeout)",
  },
  HOOKINBOX_BUS_PUBLISH_FAILED: {
    status: 502,
    message:
      "The queue destination's broker did not confirm the message (nack, error or closed channel)",
  },
  HOOKINBOX_FORWARD_REDIRECT: {
    status: 502,
    message: "The destination answered with a redirect, which is never followed",
  },
  HOOKINBOX_FORWARD_ADDRESS_REFUSED: {
    status: 502,
    message:
      "The destination resolves to a private, loopback, link-local or metadata address; set allowPrivateNetworks to allow it",
  },
  // transforms (routes' and destinations' `transform`; attempt errors carry the code)
  HOOKINBOX_TRANSFORM_FAILED: {
    status: 500,
    message: "The transform threw or rejected; the delivery retries with the current transform",
  },
  HOOKINBOX_TRANSFORM_TIMEOUT: {
    status: 504,
    message: "The transform did not settle within its time budget (transformTimeout)",
  },
  HOOKINBOX_TRANSFORM_INVALID: {
    status: 500,
    message: "The transform returned something other than null or { body, headers }",
  },
  // config and CLI
  HOOKINBOX_CONFIG_INVALID: { status: 500, message: "Config is invalid" },
  HOOKINBOX_CONFIG_NOT_FOUND: { status: 500, message: "Config file not found" },
  HOOKINBOX_CONFIG_LOAD_FAILED: {
    status: 500,
    message: "The config file could not be loaded (a syntax error, or it threw)",
  },
  HOOKINBOX_CONFIG_IMPORT_MISSING: {
    status: 500,
    message: "The config file imports a module that is not installed",
  },
  HOOKINBOX_PORT_IN_USE: { status: 500, message: "The port is already in use" },
  HOOKINBOX_CWD_MISSING: {
    status: 500,
    message: "The current folder no longer exists (deleted or moved)",
  },
  HOOKINBOX_CONFIG_TS_LOADER_MISSING: {
    status: 500,
    message: "A TypeScript config file needs the tsx package to load",
  },
  HOOKINBOX_ROUTE_UNKNOWN_NAME: {
    status: 500,
    message: "A route names a source, handler or destination that is not configured",
  },
  HOOKINBOX_SECRET_ENV_MISSING: { status: 500, message: "Secret environment variable is not set" },
  HOOKINBOX_USAGE: { status: 500, message: "Invalid command line" },
  HOOKINBOX_INTERNAL_ERROR: { status: 500, message: "Internal error" },
} as const satisfies Record<string, RegistryEntry>;

interface RegistryEntry {
  status: number;
  message: string;
  /** `handler`: raised by or inside a handler; the message is the handler's own detail. */
  kind?: "handler";
}

/** Every stable error code hookinbox can produce. */
export type ErrorCode = keyof typeof registry;

/** The codes of errors raised by handlers (or the effect ledger inside one). */
export type HandlerErrorCode = {
  [C in ErrorCode]: (typeof registry)[C] extends { kind: "handler" } ? C : never;
}[ErrorCode];

/**
 * An error with a stable `code` and the HTTP `status` it maps to.
 *
 * @example
 * ```ts
 * try { await inbox.handle(req) } catch (e) {
 *   if (e instanceof HookinboxError && e.code === "HOOKINBOX_SIGNATURE_MISMATCH") { … }
 * }
 * ```
 */
export class HookinboxError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown }) {
    const entry: RegistryEntry = registry[code];
    const message = !detail ? entry.message : entry.kind ? detail : `${entry.message}: ${detail}`;
    super(message, options);
    this.name = "HookinboxError";
    this.code = code;
    this.status = registry[code].status;
  }
}

/**
 * Creates a `HookinboxError` for a code, with an optional short detail (never a secret or body).
 *
 * @example
 * ```ts
 * throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected header stripe-signature");
 * ```
 */
export function hookinboxError(code: ErrorCode, detail?: string, cause?: unknown): HookinboxError {
  return new HookinboxError(code, detail, cause === undefined ? undefined : { cause });
}

/**
 * Tells whether a value is a `HookinboxError`, optionally with a given code.
 *
 * @example
 * ```ts
 * if (isHookinboxError(err, "HOOKINBOX_STORE_UNAVAILABLE")) retryLater();
 * ```
 */
export function isHookinboxError(value: unknown, code?: ErrorCode): value is HookinboxError {
  return value instanceof HookinboxError && (code === undefined || value.code === code);
}

/**
 * Whether a code is raised by handlers (`handler`) or by hookinbox itself (`hookinbox`).
 *
 * @example
 * ```ts
 * kindOf("HOOKINBOX_PERMANENT"); // "handler"
 * ```
 */
export function kindOf(code: ErrorCode): "handler" | "hookinbox" {
  const entry: RegistryEntry = registry[code];
  return entry.kind ?? "hookinbox";
}

/** The HTTP status an error code maps to. */
export function statusOf(code: ErrorCode): number {
  return registry[code].status;
}

/** Every registered code, for docs and tests. */
export const errorCodes = Object.keys(registry) as ErrorCode[];
