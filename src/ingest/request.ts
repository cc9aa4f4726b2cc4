import type { HookinboxError } from "../errors.ts";
import type { HeaderInput } from "./headers.ts";

/** A request as any host can give it: the raw body bytes, never a parsed object. */
export interface InboxRequest {
  readonly method: string;
  /** Path and query as received, e.g. `/webhooks/stripe`. */
  readonly url: string;
  readonly headers: HeaderInput;
  readonly body: Uint8Array;
  readonly remoteAddress?: string | null;
  /**
   * Set by host adapters when the body could not be read (too large, too slow): ingest then logs
   * and records the rejection for the source and answers with this error. `body` is empty.
   */
  readonly bodyError?: HookinboxError;
  /** Set by hosts that write `stream` answers (node:http, Express, fetch); others get a 501. */
  readonly canStream?: boolean;
}

/** What hookinbox answers; hosts copy it to their own response type. */
export interface InboxResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /**
   * A body written over time (Server-Sent Events): the node host sends the head, then calls
   * `start`; `body` is what hosts that cannot stream send instead.
   */
  readonly stream?: ResponseStream;
}

/** A streamed body: `start` begins writing and returns the function that stops it. */
export interface ResponseStream {
  start(sink: {
    /** Writes a chunk; false when the client's buffer is full. */
    write(chunk: string): boolean;
    /** Bytes written and not yet sent to the client. */
    buffered(): number;
    /** Ends the response (the client reconnects). */
    end(): void;
  }): () => void;
}

const jsonHeaders = { "content-type": "application/json; charset=utf-8" } as const;

/**
 * A JSON response.
 *
 * @example
 * ```ts
 * jsonResponse(200, { ok: true });
 * ```
 */
export function jsonResponse(status: number, payload: unknown): InboxResponse {
  return { status, headers: { ...jsonHeaders }, body: JSON.stringify(payload) };
}

/**
 * The error response shape every endpoint uses: `{ error: { code, message } }`.
 *
 * @example
 * ```ts
 * errorResponse(404, "HOOKINBOX_SOURCE_NOT_FOUND", "Unknown source");
 * ```
 */
export function errorResponse(status: number, code: string, message: string): InboxResponse {
  return jsonResponse(status, { error: { code, message } });
}
