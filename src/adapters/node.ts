import type { IncomingMessage, ServerResponse } from "node:http";
import { type HookinboxError, isHookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { pairsFromRawHeaders } from "../ingest/headers.ts";
import type { InboxResponse } from "../ingest/request.ts";
import { readRawBody } from "./read-body.ts";

/**
 * Writes an inbox response to a Node response. After a body error (too large, timeout) the
 * connection is closed, since the unread rest of the body cannot be skipped safely.
 *
 * @example
 * ```ts
 * writeResponse(res, { status: 200, headers: {}, body: "{}" });
 * ```
 */
export function writeResponse(res: ServerResponse, response: InboxResponse, close = false): void {
  if (response.stream && !close) {
    res.writeHead(response.status, response.headers);
    res.flushHeaders();
    const stop = response.stream.start({
      write: (chunk) => res.write(chunk),
      buffered: () => res.writableLength,
      end: () => res.end(),
    });
    res.once("close", stop);
    return;
  }
  const headers: Record<string, string | number> = {
    ...response.headers,
    "content-length": Buffer.byteLength(response.body),
  };
  if (close) headers.connection = "close";
  res.writeHead(response.status, headers);
  res.end(response.body);
}

/**
 * Answers a failure of the host adapter itself (never of the sender) with a logged 500
 * `HOOKINBOX_INTERNAL_ERROR`, or closes the connection when the answer was already started.
 * Never throws.
 *
 * @example
 * ```ts
 * respond().catch((error) => answerInternalError(inbox, req, res, error));
 * ```
 */
export function answerInternalError(
  inbox: Inbox,
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
): void {
  try {
    const response = inbox.internalError(error, {
      method: req.method ?? "GET",
      url: req.url ?? "/",
    });
    if (res.headersSent) res.destroy();
    else writeResponse(res, response, true);
  } catch {
    res.destroy();
  }
}

/**
 * A `node:http` request listener for an inbox: reads the raw body (limit and timeout from
 * `config.http`) and answers with `inbox.handle`.
 *
 * @example
 * ```ts
 * http.createServer(toNodeListener(inbox)).listen(8080);
 * ```
 */
export function toNodeListener(
  inbox: Inbox,
  options: { source?: (req: IncomingMessage) => string | undefined } = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { bodyLimit, readTimeoutMs, minBodyRate } = inbox.config.http;
  const empty = new Uint8Array(0);
  return (req, res) => {
    const method = req.method ?? "GET";
    const bodyPromise =
      method === "GET" || method === "HEAD"
        ? Promise.resolve(empty)
        : readRawBody(req, bodyLimit, readTimeoutMs, minBodyRate);
    const respond = async (body: Uint8Array, bodyError?: HookinboxError) => {
      const request = {
        method,
        url: req.url ?? "/",
        headers: pairsFromRawHeaders(req.rawHeaders),
        body,
        remoteAddress: req.socket.remoteAddress ?? null,
        bodyError,
        canStream: true,
      };
      const source = options.source?.(req);
      const response =
        source === undefined
          ? await inbox.handle(request)
          : await inbox.handleWebhook(source, request);
      // After a body error the unread rest of the body cannot be skipped safely: close.
      writeResponse(res, response, bodyError !== undefined);
    };
    bodyPromise
      .then(
        (body) => respond(body),
        (error: unknown) => {
          if (isHookinboxError(error)) return respond(empty, error);
          res.destroy();
        },
      )
      .catch((error: unknown) => answerInternalError(inbox, req, res, error));
  };
}
