import { activeSecrets, type ResolvedSource } from "../config/index.ts";
import { type HookinboxError, hookinboxError, isHookinboxError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import { readHeaders } from "./headers.ts";
import { identify } from "./identify.ts";
import { errorResponse, type InboxRequest, type InboxResponse, jsonResponse } from "./request.ts";

/** What ingest needs: the sources, the store, a logger, a clock and the body limit. */
export interface IngestContext {
  readonly sources: ReadonlyMap<string, ResolvedSource>;
  readonly store: Store;
  readonly logger: Logger;
  readonly now: () => number;
  readonly bodyLimit: number;
  /** The delivery targets of an event (handler patterns that match it). */
  readonly route: (source: string, type: string | null) => string[];
  /** Called after a commit that created deliveries, to wake local workers. */
  readonly onDeliveries: () => void;
}

function failure(error: HookinboxError): InboxResponse {
  return errorResponse(error.status, error.code, error.message);
}

/**
 * The whole ingest path for one request to a named source: verify on the raw bytes, identify,
 * store once (receipt + event in one durable commit), then answer. Never throws: every outcome is
 * a response with a stable code, and a 2xx is only returned after the commit.
 *
 * @example
 * ```ts
 * const response = await acceptWebhook(context, "stripe", { method: "POST", url, headers, body });
 * ```
 */
export async function acceptWebhook(
  context: IngestContext,
  sourceName: string,
  request: InboxRequest,
): Promise<InboxResponse> {
  const started = performance.now();
  const receivedAt = context.now();
  const source = context.sources.get(sourceName);
  const log = (fields: Record<string, unknown>, level: "info" | "warn" | "error" = "info") =>
    context.logger[level](
      { source: sourceName, ...fields, ms: Math.round((performance.now() - started) * 100) / 100 },
      "webhook",
    );
  if (!source) {
    log({ outcome: "rejected", status: 404, code: "HOOKINBOX_SOURCE_NOT_FOUND" });
    return failure(hookinboxError("HOOKINBOX_SOURCE_NOT_FOUND", sourceName));
  }
  const headers = readHeaders(request.headers);
  const remoteAddress = request.remoteAddress ?? null;
  const reject = (error: HookinboxError): InboxResponse => {
    log({ outcome: "rejected", status: error.status, code: error.code });
    context.store
      .recordRejection({
        source: sourceName,
        receivedAt,
        remoteAddress,
        status: error.status,
        code: error.code,
        size: request.body.byteLength,
        headerNames: headers.pairs.map(([name]) => name),
      })
      .catch(() => {
        // Best effort: a rejection that cannot be recorded is still logged above.
      });
    return failure(error);
  };

  if (request.method.toUpperCase() !== "POST") {
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

  let identity: ReturnType<typeof identify>;
  let secretIndex: number;
  try {
    const secrets = activeSecrets(source.secrets, receivedAt);
    if (secrets.length === 0) throw hookinboxError("HOOKINBOX_SOURCE_NO_ACTIVE_SECRET");
    const verified = source.scheme.verifier.verify(
      { method: request.method, url: request.url, headers, body: request.body },
      secrets,
      receivedAt,
    );
    secretIndex = verified.secretIndex;
    identity = identify(source.identity, headers, request.body);
  } catch (error) {
    if (isHookinboxError(error)) return reject(error);
    log({ outcome: "error", status: 500, err: { message: (error as Error).message } }, "error");
    return failure(hookinboxError("HOOKINBOX_INTERNAL_ERROR"));
  }

  try {
    const result = await context.store.accept({
      source: sourceName,
      identity,
      body: request.body,
      headers: headers.pairs,
      receivedAt,
      remoteAddress,
      secretIndex,
      targets: context.route(sourceName, identity.type),
    });
    if (result.deliveries > 0) context.onDeliveries();
    log({
      outcome: result.duplicate ? "duplicate" : "stored",
      deliveries: result.deliveries,
      status: 200,
      eventId: result.eventId,
      dedupKey: identity.dedupKey,
      type: identity.type,
    });
    return jsonResponse(200, { ok: true, eventId: result.eventId, duplicate: result.duplicate });
  } catch (error) {
    const storeError = isHookinboxError(error)
      ? error
      : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", undefined, error);
    log(
      {
        outcome: "unavailable",
        status: storeError.status,
        code: storeError.code,
        dedupKey: identity.dedupKey,
      },
      "warn",
    );
    return failure(
      storeError.status === 503 ? storeError : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE"),
    );
  }
}
