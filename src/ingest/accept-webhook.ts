import type { Tracer } from "@opentelemetry/api";
import { activeSecrets, type ResolvedSource } from "../config/index.ts";
import {
  type ErrorCode,
  type HookinboxError,
  hookinboxError,
  isHookinboxError,
} from "../errors.ts";
import { hopsHeader, readHops } from "../forward/hops.ts";
import type { Logger } from "../log.ts";
import type { SignedRequest } from "../providers/types.ts";
import type { AcceptResult, EventIdentity, Store } from "../store/types.ts";
import { type ReceiveTrace, traceReceive } from "../tracing/receive-span.ts";
import { withAcceptedEvents } from "./accepted-events.ts";
import {
  type RequestHeaders,
  readHeaders,
  rejectedHeaderNames,
  watchHeaderReads,
} from "./headers.ts";
import { identify } from "./identify.ts";
import type { IngestMetrics } from "./ingest-metrics.ts";
import { type AddressList, clientAddress } from "./ip-allow.ts";
import type { Readiness } from "./readiness.ts";
import type { RejectLimiter } from "./reject-limiter.ts";
import { errorResponse, type InboxRequest, type InboxResponse, jsonResponse } from "./request.ts";

/** What ingest needs: the sources, the store, a logger, a clock and the body limit. */
export interface IngestContext {
  readonly sources: ReadonlyMap<string, ResolvedSource>;
  readonly store: Store;
  readonly logger: Logger;
  readonly now: () => number;
  readonly bodyLimit: number;
  /** The delivery targets of an event (handler patterns that match it). */
  /** The targets of one event (handlers and destinations); the raw body serves `where` routes. */
  readonly route: (source: string, type: string | null, body: Uint8Array) => string[];
  /** Called after a commit that created deliveries, to wake local workers. */
  readonly onDeliveries: () => void;
  /** Proxies whose X-Forwarded-For is believed (null: trust the socket peer only). */
  readonly trustedProxies: AddressList | null;
  readonly rejectLimiter: RejectLimiter;
  /** Verified requests that passed through hookinbox more often (`hookinbox-hops`) get 508. */
  readonly maxHops: number;
  /** Counts outcomes for `/metrics` (absent when metrics are off). */
  readonly metrics?: IngestMetrics;
  /** Learns whether accepts commit, so `/readyz` answers what ingest would. */
  readonly readiness?: Readiness;
  /** Traces each request as `webhook.receive` (absent when `tracing.enabled` is off). */
  readonly tracer?: Tracer;
}

/** The metrics label of requests to sources that do not exist (never the name sent). */
export const unknownSourceLabel = "(unknown)";

/** Codes that a provider's `rejectionStatus` applies to: every verification failure. */
const verificationCodes = new Set<ErrorCode>([
  "HOOKINBOX_SIGNATURE_MISSING",
  "HOOKINBOX_SIGNATURE_MALFORMED",
  "HOOKINBOX_SIGNATURE_HEADER_REPEATED",
  "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
  "HOOKINBOX_SIGNATURE_MISMATCH",
  "HOOKINBOX_TIMESTAMP_MISSING",
  "HOOKINBOX_TIMESTAMP_MALFORMED",
  "HOOKINBOX_TIMESTAMP_TOO_OLD",
  "HOOKINBOX_TIMESTAMP_IN_FUTURE",
  "HOOKINBOX_KEY_URL_NOT_ALLOWED",
  "HOOKINBOX_KEY_UNKNOWN",
  "HOOKINBOX_TOKEN_CLAIM_MISMATCH",
  "HOOKINBOX_SENDER_NOT_ALLOWED",
]);

function failure(error: HookinboxError, status = error.status): InboxResponse {
  return errorResponse(status, error.code, error.message);
}

/**
 * The whole ingest path for one request to a named source: rate limit and IP allowlist, verify on
 * the raw bytes, answer a provider handshake, split a batch, identify, refuse a forwarding loop
 * (`hookinbox-hops` over `maxHops`: 508), store once (receipt +
 * event + deliveries in one durable commit per event), then answer. Never throws: every outcome
 * is a response with a stable code, and a 2xx is only returned after the commit.
 *
 * @example
 * ```ts
 * const response = await acceptWebhook(context, "stripe", { method: "POST", url, headers, body });
 * ```
 */
export function acceptWebhook(
  context: IngestContext,
  sourceName: string,
  request: InboxRequest,
): Promise<InboxResponse> {
  const { tracer } = context;
  if (!tracer) return acceptRequest(context, sourceName, request);
  const headers = readHeaders(request.headers);
  const receive = {
    method: request.method,
    url: request.url,
    bodySize: request.body.byteLength,
    traceparent: headers.get("traceparent"),
  };
  return traceReceive(tracer, sourceName, receive, (trace) =>
    acceptRequest(context, sourceName, request, { trace, headers }),
  );
}

/**
 * acceptWebhook's work, telling `traced.trace` each step and the outcome when traced (with the
 * headers the trace already read).
 */
async function acceptRequest(
  context: IngestContext,
  sourceName: string,
  request: InboxRequest,
  traced?: { readonly trace: ReceiveTrace; readonly headers: RequestHeaders },
): Promise<InboxResponse> {
  const trace = traced?.trace;
  const started = performance.now();
  const receivedAt = context.now();
  const source = context.sources.get(sourceName);
  const log = (fields: Record<string, unknown>, level: "info" | "warn" | "error" = "info") => {
    trace?.outcome(fields.outcome as string, fields.code as string | undefined);
    context.metrics?.outcome(
      source ? sourceName : unknownSourceLabel,
      fields.outcome as string,
      fields.code as string | undefined,
    );
    context.logger[level](
      {
        source: sourceName,
        ...fields,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...trace?.logFields,
      },
      "webhook",
    );
  };
  if (!source) {
    log({ outcome: "rejected", status: 404, code: "HOOKINBOX_SOURCE_NOT_FOUND" });
    return failure(hookinboxError("HOOKINBOX_SOURCE_NOT_FOUND", sourceName));
  }
  const headers = traced?.headers ?? readHeaders(request.headers);
  const remoteAddress = clientAddress(
    request.remoteAddress ?? null,
    headers.get("x-forwarded-for"),
    context.trustedProxies,
  );
  if (context.rejectLimiter.blocked(remoteAddress, receivedAt)) {
    log(
      { outcome: "rate-limited", status: 429, code: "HOOKINBOX_RATE_LIMITED", remoteAddress },
      "warn",
    );
    return {
      ...failure(hookinboxError("HOOKINBOX_RATE_LIMITED")),
      headers: { "content-type": "application/json; charset=utf-8", "retry-after": "60" },
    };
  }
  const reject = (error: HookinboxError, status = error.status): InboxResponse => {
    log({ outcome: "rejected", status, code: error.code, remoteAddress });
    // A 503 is hookinbox's own trouble (a key endpoint down), not the sender's fault.
    if (status < 500) context.rejectLimiter.record(remoteAddress, receivedAt);
    context.store
      .recordRejection({
        source: sourceName,
        receivedAt,
        remoteAddress,
        status,
        code: error.code,
        size: request.body.byteLength,
        headerNames: rejectedHeaderNames(headers.pairs),
      })
      .catch(() => {
        // Best effort: a rejection that cannot be recorded is still logged above.
      });
    return failure(error, status);
  };

  const method = request.method.toUpperCase();
  // Only schemes with an endpoint challenge (Meta, Dropbox, Okta…) accept a GET, and only
  // when it is that challenge (checked below).
  const challengeable = method === "GET" && source.scheme.challenge !== undefined;
  if (method !== "POST" && !challengeable) {
    return reject(
      hookinboxError("HOOKINBOX_METHOD_NOT_ALLOWED", "webhooks must be sent with POST"),
    );
  }
  if (request.bodyError) return reject(request.bodyError);
  if (request.body.byteLength > context.bodyLimit) {
    return reject(
      hookinboxError("HOOKINBOX_BODY_TOO_LARGE", `limit is ${context.bodyLimit} bytes`),
    );
  }
  if (source.allowIps && (remoteAddress === null || !source.allowIps.has(remoteAddress))) {
    return reject(hookinboxError("HOOKINBOX_IP_NOT_ALLOWED"));
  }

  const { scheme } = source;
  const signed: SignedRequest = {
    method: request.method,
    url: request.url,
    headers,
    body: request.body,
  };
  let identities: Array<{ identity: EventIdentity; body: Uint8Array }>;
  let secretIndex: number | null;
  /** The answer to a challenge that is also stored (Asana's handshake). */
  let challengeReply: InboxResponse | undefined;
  try {
    const secrets = activeSecrets(source.secrets, receivedAt);
    // Challenges come first: some carry no signature (Graph, Dropbox) or arrive before any
    // secret exists (Asana's handshake delivers the secret).
    const answer = scheme.challenge?.(signed, secrets, receivedAt);
    if (answer && !answer.store) {
      log({ outcome: "handshake", status: answer.response.status });
      return withAcceptedEvents(
        { ...answer.response, headers: { ...answer.response.headers } },
        [],
      );
    }
    if (answer) {
      // Stored as sent, with no secret behind it: the operator reads what it carries.
      challengeReply = { ...answer.response, headers: { ...answer.response.headers } };
      secretIndex = null;
      identities = [
        { identity: identify(source.identity, headers, request.body), body: request.body },
      ];
    } else {
      if (method !== "POST") {
        throw hookinboxError(
          "HOOKINBOX_METHOD_NOT_ALLOWED",
          "this GET is not the provider's challenge",
        );
      }
      if (secrets.length === 0 && scheme.usesSecrets !== false) {
        throw hookinboxError("HOOKINBOX_SOURCE_NO_ACTIVE_SECRET");
      }
      // Schemes with fetched keys verify asynchronously; the others stay off the microtask queue.
      const watched = watchHeaderReads(signed);
      let verified: Awaited<ReturnType<typeof scheme.verifier.verify>>;
      try {
        const pending = scheme.verifier.verify(watched.request, secrets, receivedAt);
        verified = pending instanceof Promise ? await pending : pending;
      } finally {
        // A header the verifier read came twice: refused whatever the verdict, so the outcome
        // never depends on which copy came first.
        const repeated = watched.repeated(headers.pairs);
        // biome-ignore lint/correctness/noUnsafeFinally: the refusal replaces any verdict.
        if (repeated) throw hookinboxError("HOOKINBOX_SIGNATURE_HEADER_REPEATED", repeated);
      }
      secretIndex = verified.secretIndex;
      trace?.phase("verified");
      const matched = secrets.find((s) => s.index === verified.secretIndex);
      const handshake = matched ? scheme.handshake?.(signed, verified, matched) : undefined;
      if (handshake) {
        log({ outcome: "handshake", status: handshake.status });
        return withAcceptedEvents(
          { status: handshake.status, headers: { ...handshake.headers }, body: handshake.body },
          [],
        );
      }
      const confirming = scheme.confirmSubscription?.(signed);
      if (confirming) {
        await confirming;
        log({ outcome: "subscription-confirmed" });
      }
      // A batch (HubSpot, Adyen) is one event per item, each identified from its own bytes.
      const items = scheme.split ? scheme.split(signed).map((item) => item.body) : [request.body];
      identities = items.map((body) => ({
        identity: identify(source.identity, headers, body),
        body,
      }));
    }
  } catch (error) {
    if (isHookinboxError(error)) {
      const status =
        scheme.rejectionStatus !== undefined && verificationCodes.has(error.code)
          ? scheme.rejectionStatus
          : error.status;
      return reject(error, status);
    }
    log({ outcome: "error", status: 500, err: { message: (error as Error).message } }, "error");
    return failure(hookinboxError("HOOKINBOX_INTERNAL_ERROR"));
  }

  // A forwarding loop: refused after verification (an unsigned request is refused as such,
  // and counts against its address), before anything is stored. The header is honoured whether
  // or not the provider's scheme signs it: all it can do is make hookinbox refuse.
  const hops = readHops(headers.get(hopsHeader));
  if (hops === null || hops > context.maxHops) {
    return reject(
      hookinboxError(
        "HOOKINBOX_LOOP_DETECTED",
        hops === null
          ? `${hopsHeader} is not a whole number`
          : `${hopsHeader} is ${hops}, http.maxHops is ${context.maxHops}; fix the destination that leads back here`,
      ),
    );
  }

  trace?.phase("identified");
  let results: AcceptResult[];
  try {
    results = await Promise.all(
      identities.map(({ identity, body }) =>
        context.store.accept({
          source: sourceName,
          identity,
          body,
          headers: headers.pairs,
          receivedAt,
          remoteAddress,
          secretIndex,
          targets: context.route(sourceName, identity.type, body),
          traceparent: trace?.traceparent ?? null,
        }),
      ),
    );
  } catch (error) {
    const storeError = isHookinboxError(error)
      ? error
      : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", undefined, error);
    context.readiness?.recordAccept({
      ok: false,
      error: storeError.status === 503 ? storeError : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE"),
    });
    log(
      {
        outcome: "unavailable",
        status: 503,
        code: storeError.code,
        dedupKeys: identities.map((i) => i.identity.dedupKey),
      },
      "warn",
    );
    return failure(
      storeError.status === 503 ? storeError : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE"),
    );
  }
  context.readiness?.recordAccept({ ok: true });
  trace?.stored(
    results.map((r, i) => ({
      eventId: r.eventId,
      type: identities[i]!.identity.type,
      duplicate: r.duplicate,
      deliveries: r.deliveries,
    })),
  );
  if (results.some((r) => r.deliveries > 0)) context.onDeliveries();
  results.forEach((result, i) => {
    const { identity } = identities[i]!;
    log({
      outcome: result.duplicate ? "duplicate" : "stored",
      deliveries: result.deliveries,
      status: scheme.acceptedResponse?.status ?? 200,
      eventId: result.eventId,
      dedupKey: identity.dedupKey,
      type: identity.type,
    });
  });
  return withAcceptedEvents(
    acceptedAnswer(scheme, results, challengeReply),
    results.map((r) => r.eventId),
  );
}

/** The 2xx for stored (or duplicate) events: the challenge's, the scheme's fixed one, or JSON. */
function acceptedAnswer(
  scheme: ResolvedSource["scheme"],
  results: readonly AcceptResult[],
  challengeReply: InboxResponse | undefined,
): InboxResponse {
  if (challengeReply) return challengeReply;
  if (scheme.acceptedResponse) {
    const { status, headers: responseHeaders, body } = scheme.acceptedResponse;
    return { status, headers: { ...responseHeaders }, body };
  }
  if (!scheme.split) {
    const [result] = results;
    return jsonResponse(200, { ok: true, eventId: result!.eventId, duplicate: result!.duplicate });
  }
  return jsonResponse(200, {
    ok: true,
    events: results.map((r) => ({ eventId: r.eventId, duplicate: r.duplicate })),
  });
}
