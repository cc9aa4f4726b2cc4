import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { type ErrorCode, hookinboxError } from "../errors.ts";

/**
 * A complete HTTP/1.1 error answer written straight to a socket, for requests Node's HTTP
 * parser answers before any route runs (so before hookinbox knows whether the path is `/api`):
 * the JSON error shape of every other answer, `Cache-Control: no-store`,
 * `X-Content-Type-Options: nosniff` and `Connection: close`.
 *
 * @example
 * ```ts
 * socket.end(rawErrorAnswer("HOOKINBOX_METHOD_NOT_ALLOWED"));
 * ```
 */
export function rawErrorAnswer(code: ErrorCode): string {
  const error = hookinboxError(code);
  const body = JSON.stringify({ error: { code: error.code, message: error.message } });
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "x-content-type-options: nosniff",
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * A `clientError` listener for the gateway's server, in place of Node's default (a bare
 * `400 Bad Request` without headers): headers over the limit answer 431
 * HOOKINBOX_HEADERS_TOO_LARGE, a request not received in time 408 HOOKINBOX_REQUEST_TIMEOUT,
 * anything else the parser refuses 400 HOOKINBOX_REQUEST_MALFORMED, each with the headers every
 * `/api` answer carries. A reset connection, or one whose answer already started, is destroyed.
 *
 * @example
 * ```ts
 * server.on("clientError", answerClientError);
 * ```
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  socket.on("error", () => undefined);
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
    ?.headersSent;
  if (error.code === "ECONNRESET" || !socket.writable || started) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "HOOKINBOX_HEADERS_TOO_LARGE"
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "HOOKINBOX_REQUEST_TIMEOUT"
        : "HOOKINBOX_REQUEST_MALFORMED";
  socket.end(rawErrorAnswer(code));
}
