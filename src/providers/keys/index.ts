/**
 * Public keys fetched from providers at run time (SNS and PayPal certificates, Google's JWKS,
 * Plaid's keys): one fetcher (injectable), one host allowlist check before any call, and caches
 * with a lifetime, a size bound and one refetch on an unknown key id.
 */

import type { KeyObject } from "node:crypto";
import { hookinboxError } from "../../errors.ts";
import { KeyCache, KeySetCache } from "./cache.ts";
import {
  checkKeyUrl,
  fetchKeyText,
  httpKeyFetcher,
  type KeyFetcher,
  type KeyUrlRule,
} from "./fetcher.ts";
import { type CertifiedKey, parseCertificate, parseJwks } from "./public-keys.ts";

export { KeyCache, type KeyCacheOptions, KeySetCache, type KeySetOptions } from "./cache.ts";
export {
  checkKeyUrl,
  fetchKeyText,
  httpKeyFetcher,
  type KeyFetcher,
  type KeyFetchRequest,
  type KeyFetchResponse,
  type KeyUrlRule,
} from "./fetcher.ts";
export {
  type CertifiedKey,
  jwkKey,
  parseCertificate,
  parseJwks,
  rsaSignatureValid,
} from "./public-keys.ts";

/**
 * How a scheme fetches and caches its provider's keys. Every field has a default; tests pass a
 * `fetcher` so nothing leaves the machine.
 *
 * @example
 * ```ts
 * snsScheme({ topicArns, keys: { fetcher: offlineFetcher, timeoutMs: 2000 } });
 * ```
 */
export interface KeyFetchOptions {
  /** Performs the HTTPS request (default: Node's `fetch`, no redirects). */
  readonly fetcher?: KeyFetcher;
  /** Give up on a key endpoint after this long: the request is answered 503 (default 5 s). */
  readonly timeoutMs?: number;
  /** How long a fetched key is used (default 24 h for certificates, 1 h for key sets). */
  readonly ttlMs?: number;
  /** At most this many certificates or key ids are cached (default 64). */
  readonly maxEntries?: number;
  /** An unknown key id refetches a key set at most once per this interval (default 30 s). */
  readonly minRefreshMs?: number;
}

/** Default timeout of one key fetch: providers retry a 503, so failing fast is cheap. */
export const defaultKeyTimeoutMs = 5_000;

/**
 * Certificates by URL (SNS `SigningCertURL`, PayPal `PAYPAL-CERT-URL`): the URL is checked
 * against `rules` before the cache or the network is consulted, each URL is fetched once per
 * `ttlMs` (concurrent misses share the fetch), a URL the host says does not exist is remembered
 * for a minute, and a certificate outside its validity period is HOOKINBOX_KEY_UNKNOWN.
 *
 * @example
 * ```ts
 * const certificate = certificateSource([snsCertRule], { fetcher });
 * const key = await certificate(message.SigningCertURL, Date.now());
 * ```
 */
export function certificateSource(
  rules: readonly KeyUrlRule[],
  options: KeyFetchOptions = {},
): (url: string, nowMs: number) => Promise<KeyObject> {
  const fetcher = options.fetcher ?? httpKeyFetcher;
  const timeoutMs = options.timeoutMs ?? defaultKeyTimeoutMs;
  const cache = new KeyCache<CertifiedKey>({
    ttlMs: options.ttlMs ?? 86_400_000,
    maxEntries: options.maxEntries ?? 64,
    negativeTtlMs: 60_000,
  });
  return async (url, nowMs) => {
    // Cached by the checked, normalised URL: spellings of one URL share an entry.
    const href = checkKeyUrl(url, rules).href;
    const certificate = await cache.get(href, nowMs, async () =>
      parseCertificate(await fetchKeyText(fetcher, { url: href, method: "GET", timeoutMs }, rules)),
    );
    if (nowMs < certificate.notBefore || nowMs > certificate.notAfter) {
      throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", "the signing certificate is not valid now");
    }
    return certificate.key;
  };
}

/**
 * A JWKS at a fixed URL (Google's), looked up by key id with one refetch on an unknown id (see
 * {@link KeySetCache}).
 *
 * @example
 * ```ts
 * const google = jwksSource("https://www.googleapis.com/oauth2/v3/certs", [googleRule], {});
 * const key = await google(kid, Date.now());
 * ```
 */
export function jwksSource(
  url: string,
  rules: readonly KeyUrlRule[],
  options: KeyFetchOptions = {},
): (kid: string, nowMs: number) => Promise<KeyObject> {
  const fetcher = options.fetcher ?? httpKeyFetcher;
  const timeoutMs = options.timeoutMs ?? defaultKeyTimeoutMs;
  const set = new KeySetCache<KeyObject>({
    fetch: async () =>
      parseJwks(await fetchKeyText(fetcher, { url, method: "GET", timeoutMs }, rules)),
    ttlMs: options.ttlMs ?? 3_600_000,
    minRefreshMs: options.minRefreshMs ?? 30_000,
  });
  return (kid, nowMs) => set.key(kid, nowMs);
}
