import { isHookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import type { ProcessAvailableResult } from "../queue/process-available.ts";
import {
  drainBudget,
  eventBody,
  type LambdaContext,
  type LambdaHttpEvent,
  type LambdaHttpResult,
  parseHttpEvent,
} from "./aws-lambda-event.ts";
import { toFetchHandler } from "./fetch.ts";

export type { ProcessAvailableResult } from "../queue/process-available.ts";
export type { LambdaContext, LambdaHttpEvent, LambdaHttpResult } from "./aws-lambda-event.ts";

/**
 * Options of `lambdaHandler`.
 *
 * @example
 * ```ts
 * lambdaHandler(openInbox, { param: "provider" }); // route `POST /hooks/{provider}`
 * ```
 */
export interface LambdaHandlerOptions {
  /** The source every request is for (one function per source). */
  readonly source?: string;
  /** The HTTP API path parameter naming the source (default `source`, as in `/webhooks/{source}`). */
  readonly param?: string;
}

/** A Lambda handler for HTTP API payload 2.0 and function URL events. */
export type LambdaHttpHandler = (
  event: unknown,
  context?: LambdaContext,
) => Promise<LambdaHttpResult>;

// The URL's host is never read (the inbox routes on path and query): a fixed one keeps whatever
// the event says out of URL parsing.
const origin = "https://lambda.invalid";

/** Body types API Gateway passes through as text; anything else goes back base64. */
const textual = /^(text\/|application\/(json|javascript|xml|problem\+json)|image\/svg\+xml)/i;

/** Rebuilds the web Request the event describes; the body is the sender's exact bytes. */
function toRequest(event: LambdaHttpEvent, bodyLimit: number): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers.set(name, value);
  }
  if (event.cookies && event.cookies.length > 0) headers.set("cookie", event.cookies.join("; "));
  const method = event.requestContext.http.method.toUpperCase();
  const query = event.rawQueryString === "" ? "" : `?${event.rawQueryString}`;
  const url = `${origin}${event.rawPath}${query}`;
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  const body = eventBody(event, bodyLimit);
  switch (body.kind) {
    case "bytes":
      headers.set("content-length", String(body.bytes.byteLength));
      // A Buffer over Node's pool (ArrayBufferLike): the DOM types want an ArrayBuffer's view.
      return new Request(url, { method, headers, body: body.bytes as Uint8Array<ArrayBuffer> });
    case "too-large":
      // Never decoded: the fetch adapter refuses the declared length as it does for any host.
      headers.set("content-length", String(body.size));
      return new Request(url, { method, headers });
    case "invalid": {
      // A body that cannot be read, like a connection cut mid-body: ingest records the rejection.
      const stream = new ReadableStream<Uint8Array>({ start: (c) => c.error(body.error) });
      headers.delete("content-length");
      return new Request(url, { method, headers, body: stream, duplex: "half" } as RequestInit);
    }
  }
}

/** The payload 2.0 result for a web Response: text as is, other bodies base64. */
async function toResult(response: Response): Promise<LambdaHttpResult> {
  const bytes = Buffer.from(await response.arrayBuffer());
  const type = response.headers.get("content-type") ?? "";
  const asText = bytes.byteLength === 0 || textual.test(type);
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (name !== "set-cookie") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  return {
    statusCode: response.status,
    headers,
    body: bytes.toString(asText ? "utf8" : "base64"),
    isBase64Encoded: !asText,
    ...(cookies.length > 0 ? { cookies } : {}),
  };
}

/** The answer to an event of another shape: 500, so a misconfigured trigger is loud. */
function invalidEvent(error: unknown): LambdaHttpResult {
  if (!isHookinboxError(error)) throw error;
  console.error(`hookinbox: ${error.code}: ${error.message}`);
  return {
    statusCode: error.status,
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ error: { code: error.code, message: error.message } }),
    isBase64Encoded: false,
  };
}

/**
 * A Lambda handler for webhooks through a Lambda function URL or an API Gateway HTTP API with
 * payload format 2.0. The event becomes a web Request with the body's exact bytes (base64
 * decoded strictly) and goes through `toFetchHandler`, so it answers as every other adapter:
 * signature checks on the raw bytes, the body limit, duplicates. The source is `options.source`,
 * else the path parameter `options.param` (default `source`), else the path
 * (`/webhooks/<source>`). Other events (REST API v1, ALB) answer 500
 * HOOKINBOX_LAMBDA_EVENT_INVALID. Pass a function that creates the inbox: it runs on the first
 * invocation and the inbox is kept for the next ones (use a PostgreSQL store on Lambda).
 *
 * @example
 * ```ts
 * import { createInbox } from "hookinbox";
 * import { lambdaHandler } from "hookinbox/aws-lambda";
 *
 * export const handler = lambdaHandler(() =>
 *   createInbox({
 *     store: process.env.DATABASE_URL,
 *     sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
 *   }),
 * );
 * ```
 */
export function lambdaHandler(
  inbox: Inbox | (() => Inbox),
  options: LambdaHandlerOptions = {},
): LambdaHttpHandler {
  const param = options.param ?? "source";
  let opened: Inbox | undefined;
  let handle: ReturnType<typeof toFetchHandler> | undefined;
  return async (event) => {
    let http: LambdaHttpEvent;
    try {
      http = parseHttpEvent(event);
    } catch (error) {
      return invalidEvent(error);
    }
    opened ??= typeof inbox === "function" ? inbox() : inbox;
    handle ??= toFetchHandler(opened);
    const source = options.source ?? http.pathParameters?.[param];
    const remoteAddress = http.requestContext.http.sourceIp;
    let request: Request;
    try {
      request = toRequest(http, opened.config.http.bodyLimit);
    } catch (error) {
      // A header value the web Headers refuse: a bug or a hand-made event, not the sender's.
      return toResult(toInternal(opened, error, http));
    }
    return toResult(
      await handle(request, {
        ...(source === undefined ? {} : { source }),
        ...(remoteAddress === undefined ? {} : { remoteAddress }),
      }),
    );
  };
}

function toInternal(inbox: Inbox, error: unknown, event: LambdaHttpEvent): Response {
  const answer = inbox.internalError(error, {
    method: event.requestContext.http.method,
    url: event.rawPath,
  });
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * Options of `lambdaScheduledHandler`.
 *
 * @example
 * ```ts
 * lambdaScheduledHandler(openInbox, { maxMs: 45_000, graceMs: 5_000, concurrency: 4 });
 * ```
 */
export interface LambdaScheduledOptions {
  /** Stop claiming after this long (default 10 000 ms), capped by the invocation's time left. */
  readonly maxMs?: number;
  /** How long running handlers may finish after `maxMs` (default 5 000 ms). */
  readonly graceMs?: number;
  /** Handlers run at once (default `worker.concurrency`). */
  readonly concurrency?: number;
}

/** A Lambda handler for a schedule: what one drain did. */
export type LambdaScheduledHandler = (
  event: unknown,
  context: LambdaContext,
) => Promise<ProcessAvailableResult>;

/**
 * A Lambda handler for an EventBridge schedule (e.g. `rate(1 minute)`) that runs the due
 * deliveries with `inbox.processAvailable`: `maxMs` is capped at the invocation's time left
 * minus `graceMs` and a second, so the drain and its grace end before Lambda stops it. Logs the
 * summary as one JSON line and returns it. The event itself is not read.
 *
 * @example
 * ```ts
 * import { createInbox } from "hookinbox";
 * import { lambdaScheduledHandler } from "hookinbox/aws-lambda";
 *
 * export const drain = lambdaScheduledHandler(
 *   () => createInbox({ store: process.env.DATABASE_URL, sources: {}, handlers: {} }),
 *   { maxMs: 50_000, graceMs: 5_000 },
 * );
 * ```
 */
export function lambdaScheduledHandler(
  inbox: Inbox | (() => Inbox),
  options: LambdaScheduledOptions = {},
): LambdaScheduledHandler {
  let opened: Inbox | undefined;
  return async (_event, context) => {
    opened ??= typeof inbox === "function" ? inbox() : inbox;
    const remainingMs =
      typeof context?.getRemainingTimeInMillis === "function"
        ? context.getRemainingTimeInMillis()
        : undefined;
    const budget = drainBudget(remainingMs, options);
    const summary = await opened.processAvailable(budget);
    console.log(
      JSON.stringify({
        msg: "hookinbox: scheduled drain",
        ...summary,
        maxMs: budget.maxMs,
        graceMs: budget.graceMs,
        ...(context?.awsRequestId ? { requestId: context.awsRequestId } : {}),
      }),
    );
    return summary;
  };
}
