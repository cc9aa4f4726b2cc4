import { hookinboxError, isHookinboxError } from "../errors.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { errorResponse, type InboxResponse, jsonResponse } from "../ingest/request.ts";
import type { EventDetail, Store } from "../store/types.ts";
import { isAuthorized } from "./auth.ts";

/** What the admin API needs. A null token disables it. */
export interface AdminContext {
  readonly store: Store;
  readonly token: string | null;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function bodyView(body: Uint8Array): { base64: string; text: string | null } {
  let text: string | null;
  try {
    text = utf8.decode(body);
  } catch {
    text = null;
  }
  return {
    base64: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64"),
    text,
  };
}

function eventJson(event: EventDetail) {
  const { body, ...rest } = event;
  return { ...rest, body: bodyView(body) };
}

function parseLimit(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (!/^\d+$/.test(value))
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", "limit must be an integer from 1 to 500");
  return Number(value);
}

/**
 * The admin read API under `/api`: `GET /api/events` (filters, cursor) and `GET /api/events/:id`.
 * Requires `Authorization: Bearer <admin token>`.
 *
 * @example
 * ```ts
 * const response = await handleAdmin({ store, token }, "GET", new URL(url, "http://x"), headers);
 * ```
 */
export async function handleAdmin(
  context: AdminContext,
  method: string,
  url: URL,
  headers: RequestHeaders,
): Promise<InboxResponse> {
  const fail = (error: unknown) => {
    if (isHookinboxError(error)) return errorResponse(error.status, error.code, error.message);
    const internal = hookinboxError("HOOKINBOX_INTERNAL_ERROR");
    return errorResponse(internal.status, internal.code, internal.message);
  };
  if (context.token === null) return fail(hookinboxError("HOOKINBOX_ADMIN_DISABLED"));
  if (!isAuthorized(headers.get("authorization"), context.token)) {
    return {
      ...fail(hookinboxError("HOOKINBOX_ADMIN_UNAUTHORIZED")),
      headers: { "content-type": "application/json; charset=utf-8", "www-authenticate": "Bearer" },
    };
  }
  if (method !== "GET")
    return fail(hookinboxError("HOOKINBOX_METHOD_NOT_ALLOWED", "the admin API is read-only"));
  try {
    if (url.pathname === "/api/events") {
      const q = url.searchParams;
      const page = await context.store.listEvents({
        source: q.get("source") ?? undefined,
        type: q.get("type") ?? undefined,
        status: q.get("status") ?? undefined,
        limit: parseLimit(q.get("limit")),
        cursor: q.get("cursor") ?? undefined,
      });
      return jsonResponse(200, page);
    }
    const match = /^\/api\/events\/([^/]+)$/.exec(url.pathname);
    if (match) {
      const event = await context.store.getEvent(decodeURIComponent(match[1]!));
      if (!event) return fail(hookinboxError("HOOKINBOX_EVENT_NOT_FOUND"));
      return jsonResponse(200, eventJson(event));
    }
    return fail(hookinboxError("HOOKINBOX_ROUTE_NOT_FOUND"));
  } catch (error) {
    return fail(error);
  }
}
