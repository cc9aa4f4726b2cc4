/**
 * Sends one signed sample request and measures it, the way a provider would: a POST with the
 * exact bytes, a timeout, and the answer's status, body and time. Never throws: a network error
 * or timeout is a result with `status: 0` and the error's one-line reason.
 */

import type { SampleRequest } from "./samples/types.ts";

/** What one send produced. */
export interface DeliveryResult {
  /** HTTP status, or 0 when no answer arrived (refused, reset, timed out). */
  readonly status: number;
  /** The answer's body as text, at most 4 KiB. */
  readonly body: string;
  /** Time from the request's start to the answer's last byte, in ms. */
  readonly ms: number;
  /** Why no answer arrived, when `status` is 0. */
  readonly error?: string;
}

const maxBody = 4096;

/**
 * POSTs `request` and resolves to its status, body and time; gives up after `timeoutMs`.
 *
 * @example
 * ```ts
 * const result = await deliver(stripeSample.build(input), { timeoutMs: 30_000 });
 * if (result.status >= 200 && result.status < 300) { … }
 * ```
 */
export async function deliver(
  request: SampleRequest,
  options: { timeoutMs: number },
): Promise<DeliveryResult> {
  const started = performance.now();
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text.length > maxBody ? text.slice(0, maxBody) : text,
      ms: performance.now() - started,
    };
  } catch (error) {
    const reason =
      error instanceof Error && error.name === "TimeoutError"
        ? `no answer within ${options.timeoutMs} ms`
        : error instanceof Error
          ? ((error.cause as Error | undefined)?.message ?? error.message)
          : String(error);
    return { status: 0, body: "", ms: performance.now() - started, error: reason };
  }
}

/**
 * Runs `count` sends through `send`, at most `parallel` at a time, waiting `delayMs` between
 * the sends of each lane; resolves to the results in the order the sends started.
 *
 * @example
 * ```ts
 * const results = await repeat(20, 20, 0, () => deliver(request, { timeoutMs: 30_000 }));
 * ```
 */
export async function repeat<T>(
  count: number,
  parallel: number,
  delayMs: number,
  send: (index: number) => Promise<T>,
  onResult?: (index: number, result: T) => void,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const result = await send(index);
      results[index] = result;
      onResult?.(index, result);
      if (delayMs > 0 && next < count) await new Promise((r) => setTimeout(r, delayMs));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, count)) }, lane));
  return results;
}

/**
 * The `p`-th percentile (0..100) of `values` by nearest rank; 0 for an empty list.
 *
 * @example
 * ```ts
 * percentile([5, 1, 9, 3], 99); // 9
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? 0;
}

/**
 * True for a 2xx status.
 *
 * @example
 * ```ts
 * isSuccess(204); // true
 * ```
 */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}
