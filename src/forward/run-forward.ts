import { alertRecord, destinationDisabledOccurrence } from "../alerts/occurrences.ts";
import type { DestinationDisabledAlert } from "../alerts/types.ts";
import type { ResolvedAlerts } from "../config/resolve.ts";
import { type ErrorCode, hookinboxError, isHookinboxError } from "../errors.ts";
import { retryDelay } from "../handlers/routes.ts";
import type { Logger } from "../log.ts";
import type { RunOutcome } from "../queue/run-delivery.ts";
import type { ClaimedDelivery, CompleteInput } from "../store/queue-types.ts";
import type { Store } from "../store/types.ts";
import { busMessage } from "./bus/message.ts";
import type { BusPublisher } from "./bus/types.ts";
import { type CallResult, callResult } from "./circuit-policy.ts";
import { forwardHeaders } from "./forwarded-headers.ts";
import { storedHops } from "./hops.ts";
import type { DestinationClient, PostResult } from "./http-client.ts";
import type { ResolvedDestination } from "./resolve-destinations.ts";
import { retryAfterMs } from "./retry-after.ts";
import { signStandardWebhook, stableDeliveryId } from "./sign.ts";
import {
  bodyDigest,
  filteredResponse,
  prepareRequest,
  type RouteTransformLookup,
} from "./transform-request.ts";

/** What forwarding one claimed delivery needs. */
export interface ForwardContext {
  readonly store: Store;
  readonly workerId: string;
  readonly now: () => number;
  readonly random: () => number;
  readonly logger: Logger;
  readonly alerts: ResolvedAlerts | undefined;
  /** The route transforms of the current config (transforms run on each attempt). */
  readonly routeTransform?: RouteTransformLookup;
}

/** What an attempt's result means for the delivery. */
type Verdict =
  | { readonly kind: "done" }
  | { readonly kind: "gone"; readonly code: ErrorCode; readonly message: string }
  | {
      readonly kind: "retry";
      readonly code: ErrorCode;
      readonly message: string;
      /** Delay the destination asked for (Retry-After), else null for the backoff. */
      readonly afterMs: number | null;
      readonly permanent: boolean;
    };

/**
 * Reads an attempt's result: 2xx done; 410 Gone disables the destination; 429 and 503 wait for
 * `Retry-After` (seconds or HTTP date) when given; 3xx (never followed), other statuses,
 * timeouts, resets and DNS failures retry with the backoff; a refused address and a 508 Loop
 * Detected are permanent.
 *
 * @example
 * ```ts
 * verdictOf({ status: 503, headers: { "retry-after": "2" }, … }, Date.now()); // retry after 2000 ms
 * ```
 */
export function verdictOf(result: PostResult, nowMs: number): Verdict {
  const status = result.status;
  if (status === null) {
    if (result.refused)
      return {
        kind: "retry",
        code: "HOOKINBOX_FORWARD_ADDRESS_REFUSED",
        message: result.error ?? "refused address",
        afterMs: null,
        permanent: true,
      };
    return {
      kind: "retry",
      code:
        result.errorClass === "timeout" ? "HOOKINBOX_FORWARD_TIMEOUT" : "HOOKINBOX_FORWARD_NETWORK",
      message: `${result.errorClass}: ${result.error ?? "no response"}`,
      afterMs: null,
      permanent: false,
    };
  }
  if (status >= 200 && status < 300) return { kind: "done" };
  if (status === 410) return { kind: "gone", code: "HOOKINBOX_FORWARD_GONE", message: "410 Gone" };
  // 508 Loop Detected: the destination leads back into a hookinbox that has seen this event
  // too often; another try gets the same answer.
  if (status === 508)
    return {
      kind: "retry",
      code: "HOOKINBOX_LOOP_DETECTED",
      message: "508 from the destination: it forwards back into hookinbox",
      afterMs: null,
      permanent: true,
    };
  if (status >= 300 && status < 400)
    return {
      kind: "retry",
      code: "HOOKINBOX_FORWARD_REDIRECT",
      message: `${status} redirect to ${result.headers?.location ?? "(no location)"} not followed`,
      afterMs: null,
      permanent: false,
    };
  const afterMs =
    status === 429 || status === 503 ? retryAfterMs(result.headers?.["retry-after"], nowMs) : null;
  return {
    kind: "retry",
    code: "HOOKINBOX_FORWARD_STATUS",
    message: `status ${status}`,
    afterMs,
    permanent: false,
  };
}

/**
 * Reads a queue destination's publish result: confirmed is done; a broker that could not be
 * reached (connect, handshake, or no answer while connecting) retries as
 * HOOKINBOX_BUS_UNREACHABLE; a nack, error reply, closed channel or missing confirm retries as
 * HOOKINBOX_BUS_PUBLISH_FAILED. Nothing a broker says is permanent.
 *
 * @example
 * ```ts
 * busVerdict({ status: null, errorClass: "connect", error: "ECONNREFUSED", … }); // retry, HOOKINBOX_BUS_UNREACHABLE
 * ```
 */
export function busVerdict(result: PostResult): Verdict {
  if (result.errorClass === null) return { kind: "done" };
  return {
    kind: "retry",
    code:
      result.errorClass === "connect"
        ? "HOOKINBOX_BUS_UNREACHABLE"
        : "HOOKINBOX_BUS_PUBLISH_FAILED",
    message: `${result.errorClass}: ${result.error ?? "no confirm"}`,
    afterMs: null,
    permanent: false,
  };
}

/** What a publish result is to the breaker: confirmed is healthy, then as an HTTP call with no response. */
function busCall(result: PostResult): CallResult | null {
  return result.errorClass === null && !result.aborted ? "healthy" : callResult(result);
}

/** How a destination is reached: its HTTP client, or its broker's publisher. */
export type DestinationTransport = DestinationClient | BusPublisher;

/**
 * Forwards one claimed delivery to its destination and records the attempt: the request (raw
 * body byte for byte and the allowlisted headers, or what the route's and destination's
 * transforms made of them; Standard Webhooks signature over that body with the stable
 * `webhook-id`, `hookinbox-*` headers; its size and SHA-256), then what came back (status, selected headers, the first
 * 4 KB of the body, latency, error class) on the attempt, then done, a retry (backoff or
 * Retry-After), a dead letter, or — on 410 — a disabled destination and an alert, with the
 * delivery waiting for it to be enabled again. Transforms that drop the event end the delivery
 * done (the attempt marked filtered, nothing sent); one that throws, hangs or returns a bad shape
 * fails the attempt with its HOOKINBOX_TRANSFORM_* code and retries. Returns the outcome and what the attempt was to
 * the circuit breaker (circuit-policy.ts's callResult: null when nothing was sent or it said
 * nothing about the destination); `beforeEnd` hears it once the answer is in and before the
 * delivery ends, so that a circuit this answer opens is open before the delivery's slot frees.
 * A retry after a "down" result is marked to be due at once when the destination's circuit closes.
 * A queue destination publishes instead of posting (bus/message.ts: the same ids and flags as
 * headers, the body as stored), unsigned, and is done on the broker's confirm (busVerdict).
 *
 * @example
 * ```ts
 * const outcome = await runForward(context, destination, client, claimed, signal);
 * const published = await runForward(context, busDestination, publisher, claimed, signal);
 * ```
 */
export async function runForward(
  context: ForwardContext,
  destination: ResolvedDestination,
  transport: DestinationTransport,
  delivery: ClaimedDelivery,
  signal: AbortSignal,
  beforeEnd?: (call: CallResult | null) => Promise<void>,
): Promise<{ outcome: RunOutcome; call: CallResult | null }> {
  const { store, now } = context;
  // Log fields passed with each line: a child logger per forward cost more than the lines it wrote.
  const log = context.logger;
  const fields = {
    deliveryId: delivery.id,
    eventId: delivery.eventId,
    target: delivery.target,
    source: delivery.source,
    type: delivery.type,
    attempt: delivery.attempt,
  };
  // The key and event as claimed: the store ends the delivery without looking them up.
  let base: Omit<CompleteInput, "now"> = {
    deliveryId: delivery.id,
    workerId: context.workerId,
    attempt: delivery.attempt,
    orderingKey: delivery.orderingKey,
    eventId: delivery.eventId,
  };
  const fail = async (
    code: ErrorCode,
    message: string,
    outcome: "error" | "permanent" | "exhausted",
    retryAt: number | null,
    circuitWait = false,
  ): Promise<RunOutcome> => {
    const error = hookinboxError(code, message);
    const result = await store.failDelivery({
      ...base,
      now: now(),
      error: { message: `${code}: ${error.message}`, stack: null },
      retryAt,
      outcome,
      blockKey: destination.onDeadLetter !== "continue",
      circuitWait,
    });
    return result.dead ? "dead" : "retry";
  };
  try {
    if (delivery.budgetAttempt > destination.retry.maxAttempts) {
      log.warn({ ...fields, outcome: "exhausted" }, "forward");
      return {
        outcome: await fail(
          "HOOKINBOX_FORWARD_NETWORK",
          `attempt budget of ${destination.retry.maxAttempts} spent (crashed or stalled tries)`,
          "exhausted",
          null,
        ),
        call: null,
      };
    }
    // The transforms of the current config, on every attempt: what is sent, or nothing.
    const prepared = await prepareRequest(destination, context.routeTransform, delivery);
    if (prepared.kind === "failed") {
      const last = delivery.budgetAttempt >= destination.retry.maxAttempts;
      const retryAt = last
        ? null
        : now() + retryDelay(destination.retry, delivery.budgetAttempt, context.random);
      const outcome = await fail(prepared.code, prepared.message, "error", retryAt);
      log[outcome === "dead" ? "error" : "warn"](
        { ...fields, outcome, code: prepared.code, retryAt },
        "forward",
      );
      return { outcome, call: null };
    }
    if (prepared.kind === "filtered") {
      await store.completeDelivery({
        ...base,
        now: now(),
        response: filteredResponse(prepared.ms),
      });
      log.info({ ...fields, outcome: "filtered" }, "forward");
      return { outcome: "done", call: null };
    }
    let result: PostResult;
    if ("publish" in transport) {
      const message = busMessage(delivery, destination.name, destination.bus!, prepared.body);
      result = await transport.publish(message, destination.timeoutMs, signal);
    } else {
      // One more hop than the event had when it arrived (a stored event's headers were checked
      // by ingest, so they hold a whole number or none).
      const signature = signStandardWebhook(
        destination.secrets,
        stableDeliveryId(delivery.eventId, destination.name),
        prepared.body,
        now(),
        (storedHops(delivery.headers) ?? 0) + 1,
      );
      if (!signature) {
        return {
          outcome: await fail(
            "HOOKINBOX_FORWARD_NETWORK",
            "the destination has no active secret (check the rotation window)",
            "error",
            now() + retryDelay(destination.retry, delivery.budgetAttempt, context.random),
          ),
          call: null,
        };
      }
      const headers = forwardHeaders(
        delivery,
        destination.headers,
        signature,
        destination.forwardHeaders,
        prepared.headers,
      );
      result = await transport.post(headers, prepared.body, destination.timeoutMs, signal);
    }
    if (result.aborted) throw hookinboxError("HOOKINBOX_LEASE_LOST", delivery.id);
    // What came back is stored by the statement that ends the attempt (one write of its row).
    base = {
      ...base,
      response: {
        status: result.status,
        headers: result.headers,
        body: result.body,
        latencyMs: result.latencyMs,
        errorClass:
          result.errorClass ??
          (result.status !== null && (result.status < 200 || result.status >= 300)
            ? "http-status"
            : null),
        request: bodyDigest(prepared.body),
      },
    };
    const verdict = destination.bus ? busVerdict(result) : verdictOf(result, now());
    const call = destination.bus ? busCall(result) : callResult(result);
    await beforeEnd?.(call);
    const ms = Math.round(result.latencyMs);
    if (verdict.kind === "done") {
      await store.completeDelivery({ ...base, now: now() });
      log.info({ ...fields, outcome: "done", status: result.status, ms }, "forward");
      return { outcome: "done", call };
    }
    if (verdict.kind === "gone") {
      const reason = `410 Gone from the destination (delivery ${delivery.id})`;
      const alert = {
        destination: destination.name,
        reason,
        deliveryId: delivery.id,
        eventId: delivery.eventId,
      };
      // The outbox rows commit with the disabling: a crash right after loses no alert.
      const record = alertRecord(context.alerts, [destinationDisabledOccurrence(alert)]);
      const [, outcome] = await Promise.all([
        store.setDestinationState(destination.name, "disabled", reason, now(), record),
        fail(verdict.code, verdict.message, "error", now()),
      ]);
      alertDisabled(context, log, alert, fields);
      return { outcome, call };
    }
    const last = delivery.budgetAttempt >= destination.retry.maxAttempts;
    const retryAt =
      verdict.permanent || last
        ? null
        : now() +
          (verdict.afterMs ??
            retryDelay(destination.retry, delivery.budgetAttempt, context.random));
    const outcome = await fail(
      verdict.code,
      verdict.message,
      verdict.permanent ? "permanent" : "error",
      retryAt,
      call === "down",
    );
    log[outcome === "dead" ? "error" : "warn"](
      { ...fields, outcome, status: result.status, errorClass: result.errorClass, ms, retryAt },
      "forward",
    );
    return { outcome, call };
  } catch (error) {
    if (isHookinboxError(error, "HOOKINBOX_LEASE_LOST")) {
      log.warn({ ...fields, outcome: "lease-lost" }, "forward");
      return { outcome: "lease-lost", call: null };
    }
    throw error;
  }
}

function alertDisabled(
  context: ForwardContext,
  log: Logger,
  alert: DestinationDisabledAlert,
  fields: Record<string, unknown>,
): void {
  log.error(
    { ...fields, ...alert, outcome: "destination-disabled" },
    "destination answered 410 Gone and is disabled; enable it with `hookinbox destinations enable`",
  );
  try {
    Promise.resolve(context.alerts?.onDestinationDisabled?.(alert)).catch((error: unknown) =>
      log.error({ ...fields, err: (error as Error).message }, "onDestinationDisabled alert failed"),
    );
  } catch (error) {
    log.error({ ...fields, err: (error as Error).message }, "onDestinationDisabled alert failed");
  }
}
