import { Agent } from "undici";
import { isHookinboxError } from "../errors.ts";
import type { AttemptResponse } from "../store/forward-types.ts";
import { traceClientPost } from "../tracing/client-span.ts";
import { guardedLookup, isRefusedAddress, literalAddress, type Resolver } from "./address-guard.ts";
import { recordedResponseHeaders } from "./forwarded-headers.ts";

/** How much of a response body is kept on the attempt. */
export const responseBodyLimit = 4096;
/** Bodies are drained up to this size so the connection can be reused; beyond, it is closed. */
const drainLimit = 1024 * 1024;

/** One POST's result: a response (any status), or an error with its class. */
export type PostResult = AttemptResponse & {
  /** A one-line reason for failures without a response (never the request body). */
  readonly error: string | null;
  /** Which error: used to pick the error code. */
  readonly refused: boolean;
  /** The caller's signal aborted (lease lost, shutdown), not the timeout. */
  readonly aborted: boolean;
};

/** A keep-alive connection pool to one destination, guarded against private addresses. */
export interface DestinationClient {
  post(
    headers: Record<string, string>,
    body: Uint8Array,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<PostResult>;
  close(): Promise<void>;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

function errorClass(error: unknown): { errorClass: string; refused: boolean } {
  if (isHookinboxError(error, "HOOKINBOX_FORWARD_ADDRESS_REFUSED"))
    return { errorClass: "address-refused", refused: true };
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause && isHookinboxError(cause, "HOOKINBOX_FORWARD_ADDRESS_REFUSED"))
    return { errorClass: "address-refused", refused: true };
  const code = String(
    (error as { code?: unknown } | null)?.code ?? (cause as { code?: unknown } | null)?.code ?? "",
  );
  if (/TIMEOUT/.test(code)) return { errorClass: "timeout", refused: false };
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return { errorClass: "dns", refused: false };
  if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENETUNREACH")
    return { errorClass: "connect", refused: false };
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET")
    return { errorClass: "reset", refused: false };
  return { errorClass: "network", refused: false };
}

/**
 * Opens a client for one destination URL: an undici keep-alive pool of up to `connections`
 * sockets, whose connect-time `lookup` refuses private, loopback, link-local, CGNAT, multicast
 * and metadata addresses unless `allowPrivateNetworks` (an IP-literal URL is checked here, since
 * sockets skip the lookup for literals). Redirects are never followed: a 3xx is a response like
 * any other. Each POST keeps the selected response headers and the first 4 KB of the body.
 *
 * @example
 * ```ts
 * const client = openDestinationClient(new URL("https://app.internal/hooks"), { connections: 10, allowPrivateNetworks: false });
 * const result = await client.post(headers, body, 15_000, signal);
 * ```
 */
export function openDestinationClient(
  url: URL,
  options: { connections: number; allowPrivateNetworks: boolean; resolver: Resolver },
): DestinationClient {
  const agent = new Agent({
    connections: options.connections,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    connect: { lookup: guardedLookup(options.resolver, options.allowPrivateNetworks) },
  });
  const literal = literalAddress(url);
  const refusedLiteral =
    literal !== null && !options.allowPrivateNetworks && isRefusedAddress(literal);
  const path = `${url.pathname}${url.search}`;
  return {
    post: (headers, body, timeoutMs, signal) =>
      traceClientPost(url, headers, (sent) => send(sent, body, timeoutMs, signal)),
    close: () => agent.close(),
  };

  async function send(
    sent: Record<string, string>,
    body: Uint8Array,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    if (refusedLiteral) {
      return {
        status: null,
        headers: null,
        body: null,
        latencyMs: 0,
        errorClass: "address-refused",
        error: `${url.hostname} is a refused address`,
        refused: true,
        aborted: false,
      };
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    try {
      const response = await agent.request({
        origin: url.origin,
        path,
        method: "POST",
        headers: sent,
        body,
        signal: both,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const kept: Uint8Array[] = [];
      let keptBytes = 0;
      let total = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        total += chunk.byteLength;
        if (keptBytes < responseBodyLimit) {
          const part = chunk.subarray(0, responseBodyLimit - keptBytes);
          kept.push(part);
          keptBytes += part.byteLength;
        }
        if (total > drainLimit) {
          response.body.destroy();
          break;
        }
      }
      const recorded: Record<string, string> = {};
      for (const name of recordedResponseHeaders) {
        const value = response.headers[name];
        if (value !== undefined) recorded[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      return {
        status: response.statusCode,
        headers: recorded,
        body: utf8.decode(Buffer.concat(kept)),
        latencyMs: elapsed(),
        errorClass: null,
        error: null,
        refused: false,
        aborted: false,
      };
    } catch (error) {
      const aborted = signal.aborted;
      const timedOut = !aborted && timeout.aborted;
      const cls = timedOut ? { errorClass: "timeout", refused: false } : errorClass(error);
      return {
        status: null,
        headers: null,
        body: null,
        latencyMs: elapsed(),
        errorClass: cls.errorClass,
        error: timedOut
          ? `no answer within ${timeoutMs} ms`
          : ((error as Error).message ?? String(error)),
        refused: cls.refused,
        aborted,
      };
    }
  }
}
