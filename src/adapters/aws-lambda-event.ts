// The Lambda shapes hookinbox reads, declared here (no dependency on an aws-lambda types package):
// the HTTP API payload format 2.0 event, which Lambda function URLs send too, its result, and the
// parts of the invocation context the handlers use.
import { type HookinboxError, hookinboxError } from "../errors.ts";

/**
 * An API Gateway HTTP API (payload format 2.0) or Lambda function URL event: what is read.
 *
 * @example
 * ```ts
 * const event: LambdaHttpEvent = {
 *   version: "2.0", rawPath: "/webhooks/stripe", rawQueryString: "", isBase64Encoded: false,
 *   requestContext: { http: { method: "POST", sourceIp: "54.187.174.169" } }, body: "{}",
 * };
 * ```
 */
export interface LambdaHttpEvent {
  readonly version: "2.0";
  /** The path as requested, stage prefix included (`/prod/webhooks/stripe` on a named stage). */
  readonly rawPath: string;
  /** The query string without `?`, as requested. */
  readonly rawQueryString: string;
  /** Header names lower-case; repeated headers joined with commas. */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** The `Cookie` header, split (payload 2.0 moves it out of `headers`). */
  readonly cookies?: readonly string[];
  /** An HTTP API route's path parameters (`/webhooks/{source}` gives `source`). */
  readonly pathParameters?: Readonly<Record<string, string | undefined>>;
  readonly requestContext: {
    readonly domainName?: string;
    readonly http: { readonly method: string; readonly sourceIp?: string };
  };
  /** The body: base64 when `isBase64Encoded`, else the text as received. */
  readonly body?: string;
  readonly isBase64Encoded: boolean;
}

/**
 * What a payload 2.0 handler returns to API Gateway or the function URL.
 *
 * @example
 * ```ts
 * const result: LambdaHttpResult = { statusCode: 200, headers: {}, body: "{}", isBase64Encoded: false };
 * ```
 */
export interface LambdaHttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
  /** `Set-Cookie` values, one per cookie (payload 2.0 keeps them out of `headers`). */
  cookies?: string[];
}

/**
 * The part of Lambda's invocation context hookinbox reads.
 *
 * @example
 * ```ts
 * const context: LambdaContext = { getRemainingTimeInMillis: () => 60_000 };
 * ```
 */
export interface LambdaContext {
  /** Milliseconds left before Lambda stops this invocation. */
  getRemainingTimeInMillis(): number;
  readonly awsRequestId?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isStringMap = (value: unknown): boolean =>
  value === undefined ||
  (isRecord(value) && Object.values(value).every((v) => v === undefined || typeof v === "string"));

/** What an event that is not payload 2.0 looks like, for the one-line refusal. */
function shapeOf(event: unknown): string {
  if (!isRecord(event)) return event === null ? "null" : typeof event;
  const context = isRecord(event.requestContext) ? event.requestContext : {};
  if ("elb" in context) return "an Application Load Balancer event";
  if ("httpMethod" in event || event.version === "1.0") return "a REST API (payload 1.0) event";
  return `an event with version ${JSON.stringify(event.version ?? null)}`;
}

/**
 * The event as a payload 2.0 HTTP event, or HOOKINBOX_LAMBDA_EVENT_INVALID naming what it looks
 * like (a REST API v1 or ALB event, or something else).
 *
 * @example
 * ```ts
 * const http = parseHttpEvent(event); // throws for { httpMethod: "POST", path: "/", … }
 * ```
 */
export function parseHttpEvent(event: unknown): LambdaHttpEvent {
  const e = isRecord(event) ? event : {};
  const context = isRecord(e.requestContext) ? e.requestContext : {};
  const http = isRecord(context.http) ? context.http : {};
  const valid =
    e.version === "2.0" &&
    typeof e.rawPath === "string" &&
    e.rawPath.startsWith("/") &&
    typeof e.rawQueryString === "string" &&
    typeof http.method === "string" &&
    (e.body === undefined || e.body === null || typeof e.body === "string") &&
    (e.isBase64Encoded === undefined || typeof e.isBase64Encoded === "boolean") &&
    isStringMap(e.headers) &&
    isStringMap(e.pathParameters) &&
    (e.cookies === undefined || (Array.isArray(e.cookies) && e.cookies.every(isString)));
  if (!valid) throw hookinboxError("HOOKINBOX_LAMBDA_EVENT_INVALID", `got ${shapeOf(event)}`);
  return {
    ...(e as unknown as LambdaHttpEvent),
    body: typeof e.body === "string" ? e.body : undefined,
    isBase64Encoded: e.isBase64Encoded === true,
  };
}

const isString = (value: unknown): value is string => typeof value === "string";

/** The body's bytes: decoded, too large (its size, not decoded), or not valid base64. */
export type EventBody =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "too-large"; readonly size: number }
  | { readonly kind: "invalid"; readonly error: HookinboxError };

/** The byte length `text` decodes to if it is base64 (padding counted off). */
function base64Size(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

/**
 * The event's body as the exact bytes the sender sent: base64 decoded strictly when
 * `isBase64Encoded` (anything but canonical, padded base64 is refused, never decoded loosely),
 * else the text's UTF-8 bytes. A body over `limit` is reported by its size before it is decoded.
 *
 * @example
 * ```ts
 * eventBody({ ...event, body: "eyJpZCI6MX0=", isBase64Encoded: true }, 1024);
 * // { kind: "bytes", bytes: <the 8 bytes of {"id":1}> }
 * ```
 */
export function eventBody(event: LambdaHttpEvent, limit: number): EventBody {
  const text = event.body ?? "";
  if (!event.isBase64Encoded) {
    const size = Buffer.byteLength(text, "utf8");
    if (size > limit) return { kind: "too-large", size };
    return { kind: "bytes", bytes: Buffer.from(text, "utf8") };
  }
  const size = base64Size(text);
  if (size > limit) return { kind: "too-large", size };
  const bytes = Buffer.from(text, "base64");
  // Node skips characters outside the alphabet and ignores missing padding: only a body that
  // encodes back to itself is what the sender sent.
  if (bytes.toString("base64") !== text) {
    return {
      kind: "invalid",
      error: hookinboxError("HOOKINBOX_LAMBDA_BODY_INVALID", `${text.length} characters`),
    };
  }
  return { kind: "bytes", bytes };
}

/** What a scheduled drain may spend: the options `processAvailable` gets. */
export interface DrainBudget {
  readonly maxMs: number;
  readonly graceMs: number;
  readonly concurrency?: number;
}

/** processAvailable's own defaults, which the cap below must know. */
const drainDefaults = { maxMs: 10_000, graceMs: 5_000 };

/** Kept between the drain's end and Lambda's: logging the summary and returning it. */
const drainMarginMs = 1_000;

/**
 * The budget of one scheduled invocation: `maxMs` (default 10 s) capped so that the call, its
 * grace and a second of margin end before Lambda stops the invocation (never below 0).
 *
 * @example
 * ```ts
 * drainBudget(60_000, { maxMs: 120_000, graceMs: 5_000 }); // { maxMs: 54_000, graceMs: 5_000 }
 * ```
 */
export function drainBudget(
  remainingMs: number | undefined,
  options: { maxMs?: number; graceMs?: number; concurrency?: number },
): DrainBudget {
  const graceMs = options.graceMs ?? drainDefaults.graceMs;
  const wanted = options.maxMs ?? drainDefaults.maxMs;
  const cap =
    remainingMs === undefined ? wanted : Math.max(0, remainingMs - graceMs - drainMarginMs);
  return {
    maxMs: Math.min(wanted, cap),
    graceMs,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  };
}
