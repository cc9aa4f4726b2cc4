import type { IncomingMessage } from "node:http";
import { hookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { pairsFromRawHeaders } from "../ingest/headers.ts";
import { errorResponse, type InboxResponse } from "../ingest/request.ts";

/** The small part of Fastify's API the plugin uses (no runtime or type dependency on fastify). */
interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    options: { parseAs: "buffer"; bodyLimit: number },
    parser: (req: unknown, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => void,
  ): void;
  post(
    path: string,
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>,
  ): void;
}
interface FastifyRequestLike {
  readonly raw: IncomingMessage;
  readonly params: unknown;
  readonly body: unknown;
  readonly url: string;
  readonly ip: string;
}
interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  headers(values: Record<string, string>): FastifyReplyLike;
  send(payload: string): FastifyReplyLike;
}

/**
 * A Fastify plugin that serves `POST /webhooks/:source` (under the prefix you register it with).
 * Inside its own encapsulated scope it replaces every content-type parser with a raw-buffer one,
 * so signatures are checked on the exact bytes even when the app parses JSON everywhere else.
 *
 * @example
 * ```ts
 * await app.register(fastifyPlugin(inbox));
 * ```
 */
export function fastifyPlugin(inbox: Inbox): (app: FastifyLike) => Promise<void> {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      "*",
      { parseAs: "buffer", bodyLimit: inbox.config.http.bodyLimit },
      (_req, body, done) => done(null, body),
    );
    const send = (reply: FastifyReplyLike, response: InboxResponse) =>
      reply.code(response.status).headers(response.headers).send(response.body);
    app.post("/webhooks/:source", async (request, reply) => {
      try {
        return send(reply, await answer(request));
      } catch (error) {
        return send(reply, inbox.internalError(error, { method: "POST" }));
      }
    });
    const answer = async (request: FastifyRequestLike): Promise<InboxResponse> => {
      const source = (request.params as { source?: string }).source ?? "";
      let body: Uint8Array;
      if (request.body === undefined || request.body === null) body = new Uint8Array(0);
      else if (Buffer.isBuffer(request.body)) body = request.body;
      else {
        const error = hookinboxError(
          "HOOKINBOX_BODY_ALREADY_CONSUMED",
          "a hook replaced the raw body; register hookinbox's plugin in its own scope",
        );
        return errorResponse(error.status, error.code, error.message);
      }
      return inbox.handleWebhook(source, {
        method: "POST",
        url: request.url,
        headers: pairsFromRawHeaders(request.raw.rawHeaders),
        body,
        remoteAddress: request.ip,
      });
    };
  };
}
