/** How one gathered call ended: its value, or the error only that caller gets. */
export type CallOutcome<R> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly error: unknown };

/**
 * Gathers calls into batches, one batch in flight at a time and no timer: the first call starts
 * a batch on the next turn of the event loop (so calls made in the same turn join it); calls made
 * while a batch is in flight wait and go together as the next batch the moment it returns (at
 * most `maxBatch` each). `flush` returns one outcome per input, in order, and each caller's
 * promise settles with its own; when `flush` itself throws, every caller of that batch gets the
 * error.
 *
 * @example
 * ```ts
 * const complete = gatherCalls<CompleteInput, void>(async (inputs) => endAll(inputs), 200);
 * await Promise.all([complete(a), complete(b)]); // one batch of two
 * ```
 */
export function gatherCalls<I, R>(
  flush: (inputs: readonly I[]) => Promise<readonly CallOutcome<R>[]>,
  maxBatch: number,
): (input: I) => Promise<R> {
  type Waiting = { input: I; resolve: (value: R) => void; reject: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let running = false;
  const drain = async () => {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      try {
        const outcomes = await flush(batch.map((w) => w.input));
        batch.forEach((w, n) => {
          const outcome = outcomes[n];
          if (outcome?.ok) w.resolve(outcome.value);
          else w.reject(outcome ? outcome.error : new Error("batch returned no outcome"));
        });
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    running = false;
  };
  return (input) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (running) return;
      running = true;
      setImmediate(() => void drain());
    });
}
