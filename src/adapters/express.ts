import type { IncomingMessage, ServerResponse } from "node:http";
import { type HookinboxError, isHookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { pairsFromRawHeaders } from "../ingest/headers.ts";
import { answerInternalError, writeResponse } from "./node.ts";
import { readRawBody } from "./read-body.ts";

const rawBodyKey = Symbol.for("hookinbox.rawBody");

type ExpressRequest = IncomingMessage & {
  params?: Record<string, string>;
  originalUrl?: string;
  body?: unknown;
  [rawBodyKey]?: Buffer;
};

/**
 * A `verify` hook for body parsers that keeps the raw bytes, so hookinbox can verify signatures
 * even when the app parses JSON globally.
 *
 * @example
 * ```ts
 * app.use(express.json({ verify: captureRawBody }));
 * app.post("/webhooks/:source", expressHandler(inbox));
 * ```
 */
export function captureRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  (req as ExpressRequest)[rawBodyKey] = buf;
}

/**
 * An Express (4 or 5) handler. The source comes from `req.params.source` (mount it on
 * `/webhooks/:source`) or from the `source` option. Raw bytes come from the stream, from
 * `express.raw()`, or from `captureRawBody`; if a parser consumed the body without keeping its
 * bytes, the handler answers 500 `HOOKINBOX_BODY_ALREADY_CONSUMED` and says how to fix it.
 *
 * @example
 * ```ts
 * app.post("/webhooks/:source", expressHandler(inbox));
 * ```
 */
export function expressHandler(
  inbox: Inbox,
  options: { source?: string } = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { bodyLimit, readTimeoutMs, minBodyRate } = inbox.config.http;
  return (incoming, res) => {
    const req = incoming as ExpressRequest;
    const captured = req[rawBodyKey] ?? (Buffer.isBuffer(req.body) ? req.body : undefined);
    const body = captured
      ? Promise.resolve(captured)
      : readRawBody(req, bodyLimit, readTimeoutMs, minBodyRate);
    const respond = async (bytes: Uint8Array, bodyError?: HookinboxError) => {
      if (bodyError?.code === "HOOKINBOX_BODY_ALREADY_CONSUMED")
        console.error(`hookinbox: ${bodyError.message}`);
      const source = options.source ?? req.params?.source;
      const request = {
        method: req.method ?? "POST",
        url: req.originalUrl ?? req.url ?? "/",
        headers: pairsFromRawHeaders(req.rawHeaders),
        body: bytes,
        remoteAddress: req.socket.remoteAddress ?? null,
        bodyError,
        canStream: true,
      };
      const response = source
        ? await inbox.handleWebhook(source, request)
        : await inbox.handle(request);
      writeResponse(
        res,
        response,
        bodyError !== undefined && bodyError.code !== "HOOKINBOX_BODY_ALREADY_CONSUMED",
      );
    };
    body
      .then(
        (bytes) => respond(bytes),
        (error: unknown) => {
          if (isHookinboxError(error)) return respond(new Uint8Array(0), error);
          res.destroy();
        },
      )
      .catch((error: unknown) => answerInternalError(inbox, req, res, error));
  };
}
