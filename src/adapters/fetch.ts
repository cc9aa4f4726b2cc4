import { type HookinboxError, hookinboxError, isHookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { acceptedEventIds, withAcceptedEvents } from "../ingest/accepted-events.ts";
import type { InboxResponse, ResponseStream } from "../ingest/request.ts";

async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw hookinboxError(
      "HOOKINBOX_BODY_ALREADY_CONSUMED",
      "request.json() or .text() was called before hookinbox",
    );
  }
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    throw hookinboxError("HOOKINBOX_BODY_TOO_LARGE", `limit is ${limit} bytes`);
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw hookinboxError("HOOKINBOX_BODY_TOO_LARGE", `limit is ${limit} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** A streamed body (the event stream) as a Web stream; cancelling it stops the writer. */
function webStream(stream: ResponseStream): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const highWaterMark = 64 * 1024;
  let stop = (): void => undefined;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const room = () => controller.desiredSize ?? 0;
        stop = stream.start({
          write(chunk) {
            try {
              controller.enqueue(encoder.encode(chunk));
            } catch {
              return false; // cancelled: the stop that follows ends the writer
            }
            return room() > 0;
          },
          buffered: () => Math.max(0, highWaterMark - room()),
          end: () => {
            try {
              controller.close();
            } catch {
              // already closed or cancelled
            }
          },
        });
      },
      cancel: () => stop(),
    },
    new ByteLengthQueuingStrategy({ highWaterMark }),
  );
}

/** The Web `Response` for an answer, keeping its accepted-events mark (see accepted-events.ts). */
function toResponse(response: InboxResponse): Response {
  if (response.stream) return new Response(webStream(response.stream), response);
  // A 204 (sign-out) must have no body at all: Response refuses even an empty string with it.
  const body = response.body === "" ? null : response.body;
  const web = new Response(body, { status: response.status, headers: response.headers });
  const accepted = acceptedEventIds(response);
  return accepted === undefined ? web : withAcceptedEvents(web, accepted);
}

/**
 * A Web-standard handler (`Request → Response`) for Next.js route handlers, Hono, Bun, Deno.
 * Pass `source` when the framework routes by itself (e.g. a `[source]` route segment).
 *
 * @example
 * ```ts
 * // app/webhooks/[source]/route.ts
 * const handle = toFetchHandler(inbox);
 * export const POST = (req: Request, { params }) => handle(req, { source: params.source });
 * ```
 */
export function toFetchHandler(
  inbox: Inbox,
): (request: Request, options?: { source?: string; remoteAddress?: string }) => Promise<Response> {
  return async (request, options = {}) => {
    try {
      return await answer(request, options);
    } catch (error) {
      return toResponse(inbox.internalError(error, request));
    }
  };

  async function answer(
    request: Request,
    options: { source?: string; remoteAddress?: string },
  ): Promise<Response> {
    let body: Uint8Array = new Uint8Array(0);
    let bodyError: HookinboxError | undefined;
    if (request.method !== "GET" && request.method !== "HEAD") {
      try {
        body = await readLimited(request, inbox.config.http.bodyLimit);
      } catch (error) {
        bodyError = isHookinboxError(error)
          ? error
          : hookinboxError("HOOKINBOX_BODY_TIMEOUT", undefined, error);
      }
    }
    const url = new URL(request.url);
    const inboxRequest = {
      method: request.method,
      url: url.pathname + url.search,
      headers: [...request.headers] as Array<[string, string]>,
      body,
      remoteAddress: options.remoteAddress ?? null,
      bodyError,
      canStream: true,
    };
    const response =
      options.source === undefined
        ? await inbox.handle(inboxRequest)
        : await inbox.handleWebhook(options.source, inboxRequest);
    return toResponse(response);
  }
}
