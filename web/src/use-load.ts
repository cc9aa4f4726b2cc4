import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api.ts";

/**
 * Loads data (again when `deps` change, and every `pollMs` when given); `reload` on demand.
 *
 * @example
 * ```ts
 * const { data, error } = useLoad(() => api<Overview>("dashboard/overview"), [], 5000);
 * ```
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setError(null);
    } catch (failure) {
      setError(
        failure instanceof ApiError ? `${failure.code}: ${failure.message}` : String(failure),
      );
    }
  }, deps);
  useEffect(() => {
    void reload();
    if (!pollMs) return;
    const timer = setInterval(() => void reload(), pollMs);
    return () => clearInterval(timer);
  }, [reload, pollMs]);
  return { data, error, reload };
}

/**
 * The message of a failure, with its code.
 *
 * @example
 * ```ts
 * describe(new ApiError(409, "HOOKINBOX_DELIVERY_NOT_RETRYABLE", "…")); // "HOOKINBOX_DELIVERY_NOT_RETRYABLE: …"
 * ```
 */
export function describe(failure: unknown): string {
  return failure instanceof ApiError ? `${failure.code}: ${failure.message}` : String(failure);
}
