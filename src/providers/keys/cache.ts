/**
 * Caches of the providers' public keys. Two shapes:
 * - {@link KeyCache}: one key per id (a certificate URL, a Plaid key id), loaded on a miss;
 * - {@link KeySetCache}: a whole key set (a JWKS) looked up by key id, refetched once when a
 *   key id is unknown (the provider rotated), at most once per `minRefreshMs`.
 * Both hold at most `maxEntries` (ids may come from requests, so memory is bounded), expire
 * entries after `ttlMs`, and share one fetch among concurrent misses of the same id.
 * The clock is passed in (`nowMs`), like everywhere else in hookinbox.
 */

import { hookinboxError, isHookinboxError } from "../../errors.ts";

/** Sizes and lifetimes of a key cache. */
export interface KeyCacheOptions {
  /** How long a fetched key is used before it is fetched again. */
  readonly ttlMs: number;
  /** At most this many ids are kept; the least recently used goes first. */
  readonly maxEntries: number;
  /**
   * How long an id the provider says does not exist (HOOKINBOX_KEY_UNKNOWN) is remembered, so
   * requests naming made-up ids cannot turn into one fetch each. Failures to fetch (503) are
   * never remembered: the next request tries again.
   */
  readonly negativeTtlMs?: number;
}

interface Entry<V> {
  readonly value: V | null;
  readonly expiresAt: number;
}

/**
 * A bounded, expiring map from key id to key, loading misses with one shared fetch per id.
 *
 * @example
 * ```ts
 * const certs = new KeyCache<KeyObject>({ ttlMs: 86_400_000, maxEntries: 64 });
 * const key = await certs.get(certUrl, Date.now(), () => fetchCertificate(certUrl));
 * ```
 */
export class KeyCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #loading = new Map<string, Promise<V>>();
  readonly #options: KeyCacheOptions;

  constructor(options: KeyCacheOptions) {
    this.#options = options;
  }

  /** How many ids are held (fresh or not). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The key for `id`: from the cache when fresh, else from `load` (shared with concurrent callers
   * of the same id). Throws HOOKINBOX_KEY_UNKNOWN for an id remembered as not existing.
   */
  async get(id: string, nowMs: number, load: () => Promise<V>): Promise<V> {
    const entry = this.#entries.get(id);
    if (entry && entry.expiresAt > nowMs) {
      // Re-insert: Map order is the LRU order.
      this.#entries.delete(id);
      this.#entries.set(id, entry);
      if (entry.value === null) throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", "no such key");
      return entry.value;
    }
    const inFlight = this.#loading.get(id);
    if (inFlight) return inFlight;
    const loading = this.#load(id, nowMs, load);
    this.#loading.set(id, loading);
    try {
      return await loading;
    } finally {
      this.#loading.delete(id);
    }
  }

  async #load(id: string, nowMs: number, load: () => Promise<V>): Promise<V> {
    try {
      const value = await load();
      this.#store(id, { value, expiresAt: nowMs + this.#options.ttlMs });
      return value;
    } catch (error) {
      const negativeTtl = this.#options.negativeTtlMs ?? 0;
      if (negativeTtl > 0 && isHookinboxError(error, "HOOKINBOX_KEY_UNKNOWN")) {
        this.#store(id, { value: null, expiresAt: nowMs + negativeTtl });
      }
      throw error;
    }
  }

  #store(id: string, entry: Entry<V>): void {
    this.#entries.delete(id);
    while (this.#entries.size >= this.#options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(id, entry);
  }
}

/** Options of a key set: the fetch, its lifetime, and how often an unknown id may refetch it. */
export interface KeySetOptions<V> {
  /** Fetches the whole set, by key id. */
  readonly fetch: () => Promise<ReadonlyMap<string, V>>;
  /** How long a fetched set is used before it is fetched again. */
  readonly ttlMs: number;
  /** An unknown key id refetches the set at most once per this interval. */
  readonly minRefreshMs: number;
}

/**
 * A provider's key set (Google's JWKS), looked up by key id. The set is fetched on first use and
 * after `ttlMs`; an unknown key id refetches it once (such refetches happen at most once per
 * `minRefreshMs`, so made-up key ids cannot turn into a fetch each), and is
 * HOOKINBOX_KEY_UNKNOWN when still absent. When a refetch after expiry fails, the previous set is
 * kept for keys it has (providers publish new keys well before they sign with them), so a short
 * outage of the key endpoint does not stop ingest; without a usable key the failure is thrown
 * (HOOKINBOX_KEY_UNAVAILABLE, 503).
 *
 * @example
 * ```ts
 * const google = new KeySetCache({ fetch: fetchJwks, ttlMs: 3_600_000, minRefreshMs: 30_000 });
 * const key = await google.key(header.kid, Date.now());
 * ```
 */
export class KeySetCache<V> {
  #set: ReadonlyMap<string, V> | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  /** When an unknown key id last caused a refetch (they are rate-limited, expiry is not). */
  #unknownRefreshAt = Number.NEGATIVE_INFINITY;
  #loading: Promise<ReadonlyMap<string, V>> | undefined;
  readonly #options: KeySetOptions<V>;

  constructor(options: KeySetOptions<V>) {
    this.#options = options;
  }

  /** The key with id `kid`, fetching or refetching the set as the class header says. */
  async key(kid: string, nowMs: number): Promise<V> {
    const set = this.#set;
    const fresh = set !== undefined && nowMs - this.#fetchedAt < this.#options.ttlMs;
    const known = set?.get(kid);
    if (fresh && known !== undefined) return known;
    if (fresh) {
      if (nowMs - this.#unknownRefreshAt < this.#options.minRefreshMs) {
        throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", "the provider's key set has no such key id");
      }
      this.#unknownRefreshAt = nowMs;
    }
    let refreshed: ReadonlyMap<string, V>;
    try {
      refreshed = await this.#refresh(nowMs);
    } catch (error) {
      if (known !== undefined) return known;
      throw error;
    }
    const key = refreshed.get(kid);
    if (key === undefined) {
      throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", "the provider's key set has no such key id");
    }
    return key;
  }

  #refresh(nowMs: number): Promise<ReadonlyMap<string, V>> {
    if (this.#loading) return this.#loading;
    const loading = this.#options.fetch().then(
      (set) => {
        this.#set = set;
        this.#fetchedAt = nowMs;
        this.#loading = undefined;
        return set;
      },
      (error: unknown) => {
        this.#loading = undefined;
        throw error;
      },
    );
    this.#loading = loading;
    return loading;
  }
}
