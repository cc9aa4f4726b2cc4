import type { IncomingMessage } from "node:http";
import type { MinBodyRate } from "../config/resolve-min-body-rate.ts";
import { hookinboxError } from "../errors.ts";
import { watchBodyRate } from "./body-rate.ts";

/**
 * Reads a Node request's raw body with a size limit (→ HOOKINBOX_BODY_TOO_LARGE, checked against
 * Content-Length before reading and against the bytes as they arrive) and a read timeout
 * (→ HOOKINBOX_BODY_TIMEOUT) and, with `minRate`, a minimum arrival rate after a grace period
 * (→ HOOKINBOX_BODY_TOO_SLOW: a trickle of bytes cannot hold the connection until the timeout).
 * Fails with HOOKINBOX_BODY_ALREADY_CONSUMED when a body parser
 * read the stream first.
 *
 * @example
 * ```ts
 * const body = await readRawBody(req, 1024 * 1024, 30_000);
 * const paced = await readRawBody(req, 1024 * 1024, 30_000, { bytesPerSecond: 240, graceMs: 5000, windowMs: 5000 });
 * ```
 */
export function readRawBody(
  req: IncomingMessage,
  limit: number,
  timeoutMs: number,
  minRate: MinBodyRate | null = null,
): Promise<Uint8Array> {
  const flagged = req as IncomingMessage & { _body?: unknown; body?: unknown };
  if (flagged._body === true || req.readableEnded) {
    return Promise.reject(
      hookinboxError(
        "HOOKINBOX_BODY_ALREADY_CONSUMED",
        "a body parser ran before hookinbox; mount hookinbox before it, or use express.json({ verify: captureRawBody })",
      ),
    );
  }
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(hookinboxError("HOOKINBOX_BODY_TOO_LARGE", `limit is ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | null, body?: Uint8Array) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rate?.stop();
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
      if (error) {
        // Stop reading what we will not use; the response is still written.
        req.pause();
        reject(error);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      rate?.received(chunk.length);
      if (size > limit)
        finish(hookinboxError("HOOKINBOX_BODY_TOO_LARGE", `limit is ${limit} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () =>
      finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = (error: Error) => finish(error);
    const onAborted = () => finish(new Error("request aborted"));
    const timer = setTimeout(
      () =>
        finish(hookinboxError("HOOKINBOX_BODY_TIMEOUT", `no complete body within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const rate = minRate
      ? watchBodyRate(minRate, (message) =>
          finish(hookinboxError("HOOKINBOX_BODY_TOO_SLOW", message)),
        )
      : null;
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
