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
}

/** What hookinbox answers; hosts copy it to their own response type. */
export interface InboxResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
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
