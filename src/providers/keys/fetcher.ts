/**
 * Fetching a provider's public keys (certificates, JWKS) over HTTPS: one injectable function
 * (tests pass their own, so nothing leaves the machine), a host allowlist checked before any call,
 * a hard timeout, no redirects, a size cap, and one mapping of failures to codes:
 * - URL outside the allowlist → HOOKINBOX_KEY_URL_NOT_ALLOWED (400), and nothing is fetched;
 * - timeout, network error, 5xx, 429 → HOOKINBOX_KEY_UNAVAILABLE (503: the sender retries);
 * - any other non-2xx (404, 403…) → HOOKINBOX_KEY_UNKNOWN (401: no such key).
 */

import { hookinboxError } from "../../errors.ts";

/** One key request: always HTTPS to an allowlisted host. */
export interface KeyFetchRequest {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The fetcher should give up after this long; `fetchKeyText` enforces it too. */
  readonly timeoutMs: number;
}

/** What a key endpoint answered. */
export interface KeyFetchResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * Performs one key request. The default is {@link httpKeyFetcher}; tests inject their own.
 *
 * @example
 * ```ts
 * const offline: KeyFetcher = async (request) => ({ status: 200, body: pemFor(request.url) });
 * ```
 */
export type KeyFetcher = (request: KeyFetchRequest) => Promise<KeyFetchResponse>;

/**
 * Where a key may be fetched from: HTTPS on the default port, a host matching `host` (the whole
 * lower-case hostname) and a path matching `path`. No userinfo, no other port.
 *
 * @example
 * ```ts
 * const sns: KeyUrlRule = { host: /^sns\.[a-z0-9-]+\.amazonaws\.com$/, path: /\.pem$/ };
 * ```
 */
export interface KeyUrlRule {
  readonly host: RegExp;
  readonly path?: RegExp;
}

/** Key documents are small (a certificate, a key set); anything larger is not one. */
const maxKeyBytes = 256 * 1024;

/**
 * Parses `value` and returns it when it is an HTTPS URL on an allowed host, else throws
 * HOOKINBOX_KEY_URL_NOT_ALLOWED. The message names the host only (never the whole URL).
 *
 * @example
 * ```ts
 * checkKeyUrl("https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-x.pem", [snsRule]);
 * checkKeyUrl("https://evil.example/cert.pem", [snsRule]); // throws
 * ```
 */
export function checkKeyUrl(value: string, rules: readonly KeyUrlRule[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw hookinboxError("HOOKINBOX_KEY_URL_NOT_ALLOWED", "the key URL is not a URL");
  }
  const allowed =
    url.protocol === "https:" &&
    url.port === "" &&
    url.username === "" &&
    url.password === "" &&
    rules.some((rule) => rule.host.test(url.hostname) && (rule.path?.test(url.pathname) ?? true));
  if (!allowed) {
    throw hookinboxError(
      "HOOKINBOX_KEY_URL_NOT_ALLOWED",
      `refusing to fetch a key from ${url.protocol === "https:" ? url.hostname : url.protocol}`,
    );
  }
  return url;
}

/**
 * The default fetcher: Node's `fetch`, no redirects (a redirect could leave the allowlist), an
 * abort after `timeoutMs`, and a body cap.
 *
 * @example
 * ```ts
 * const { status, body } = await httpKeyFetcher({ url, method: "GET", timeoutMs: 5000 });
 * ```
 */
export const httpKeyFetcher: KeyFetcher = async (request) => {
  const response = await fetch(request.url, {
    method: request.method,
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.body === undefined ? {} : { body: request.body }),
    redirect: "error",
    signal: AbortSignal.timeout(request.timeoutMs),
  });
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxKeyBytes) {
    await response.body?.cancel();
    return { status: 502, body: "" };
  }
  return { status: response.status, body: await response.text() };
};

function timeout(ms: number): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/**
 * Checks the URL against the allowlist (throwing before any call when it is outside), fetches
 * with a hard timeout, and maps failures to codes as the module header says. Returns the body.
 *
 * @example
 * ```ts
 * const pem = await fetchKeyText(fetcher, { url, method: "GET", timeoutMs: 5000 }, [snsRule]);
 * ```
 */
export async function fetchKeyText(
  fetcher: KeyFetcher,
  request: KeyFetchRequest,
  rules: readonly KeyUrlRule[],
): Promise<string> {
  const url = checkKeyUrl(request.url, rules);
  const limit = timeout(request.timeoutMs);
  let response: KeyFetchResponse;
  try {
    // Fetch exactly the URL that was checked (normalised), never the spelling that was sent.
    response = await Promise.race([fetcher({ ...request, url: url.href }), limit.promise]);
  } catch (error) {
    throw hookinboxError(
      "HOOKINBOX_KEY_UNAVAILABLE",
      `fetching a key from ${url.hostname} failed or took over ${request.timeoutMs} ms`,
      error,
    );
  } finally {
    limit.cancel();
  }
  if (response.status >= 500 || response.status === 429) {
    throw hookinboxError(
      "HOOKINBOX_KEY_UNAVAILABLE",
      `${url.hostname} answered ${response.status} for a key`,
    );
  }
  if (response.status < 200 || response.status > 299) {
    throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", `${url.hostname} has no such key`);
  }
  if (response.body.length > maxKeyBytes) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", `${url.hostname} sent an oversized key`);
  }
  return response.body;
}
