// The dashboard's only way to the server: same-origin fetches to the admin API with the session
// cookie (sent by the browser, HttpOnly, never read here) and, on writes, the CSRF token.

/**
 * An admin API failure: the HTTP status and the HOOKINBOX_* code.
 *
 * @example
 * ```ts
 * if (error instanceof ApiError && error.code === "HOOKINBOX_UNSAFE_TO_REPROCESS") askForOverride();
 * ```
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let signedOut: () => void = () => undefined;

/**
 * Remembers the CSRF token of the session (from sign-in or `GET /api/session`).
 *
 * @example
 * ```ts
 * setCsrfToken((await api<{ csrfToken: string }>("session")).csrfToken);
 * ```
 */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/**
 * Called when the server says the session is gone (401).
 *
 * @example
 * ```ts
 * onSignedOut(() => setState("out"));
 * ```
 */
export function onSignedOut(listener: () => void): void {
  signedOut = listener;
}

/**
 * Calls `api/<path>` (relative, so the dashboard works under a mount prefix too); writes carry
 * the CSRF header.
 *
 * @example
 * ```ts
 * await api(`events/${id}/replay`, { method: "POST", body: {} });
 * ```
 */
export async function api<T>(
  path: string,
  options: { method?: string; body?: unknown } = {},
): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-hookinbox-csrf"] = csrfToken;
  const response = await fetch(`api/${path}`, {
    method,
    headers,
    credentials: "same-origin",
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (response.status === 204) return undefined as T;
  const data = (await response.json().catch(() => ({}))) as {
    error?: { code: string; message: string };
  };
  if (!response.ok) {
    const error = data.error ?? { code: "HTTP_ERROR", message: response.statusText };
    if (response.status === 401 && path !== "session") signedOut();
    throw new ApiError(response.status, error.code, error.message);
  }
  return data as T;
}

/**
 * A query string from the defined, non-empty values.
 *
 * @example
 * ```ts
 * query({ status: "dead", cursor: undefined }); // "?status=dead"
 * ```
 */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}
