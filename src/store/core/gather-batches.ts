/** How a gatherer groups calls: at most `maxBatch` items per batch, `maxInFlight` batches at once. */
export interface GatherOptions {
  readonly maxBatch: number;
  readonly maxInFlight: number;
}

interface Waiting<I, R> {
  readonly item: I;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One result per item of a batch, in item order: a value, or the error of that item alone.
 */
export type BatchOutcome<R> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly error: unknown };

/**
 * Groups concurrent calls into batches without a timer: the calls of one event-loop turn go
 * together (flushed on `setImmediate`), and while `maxInFlight` batches are running, new calls
 * wait and go in the next batch when one returns. An idle caller waits one turn at most; under
 * load every batch is as large as the load makes it. `run` gets the items of a batch and returns
 * one outcome per item in the same order; when it throws, every item of that batch rejects with
 * the error. `mayJoin` keeps an item out of a batch that already holds a conflicting one (it
 * goes in a later batch).
 *
 * @example
 * ```ts
 * const add = gatherBatches<number, number>(async (xs) => xs.map((x) => ({ ok: true, value: x + 1 })), { maxBatch: 64, maxInFlight: 2 });
 * await Promise.all([add(1), add(2)]); // [2, 3], one call of run
 * ```
 */
export function gatherBatches<I, R>(
  run: (items: readonly I[]) => Promise<readonly BatchOutcome<R>[]>,
  options: GatherOptions,
  mayJoin: (item: I, batch: readonly I[]) => boolean = () => true,
): (item: I) => Promise<R> {
  const waiting: Waiting<I, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const takeBatch = (): Waiting<I, R>[] => {
    const batch: Waiting<I, R>[] = [];
    const items: I[] = [];
    for (let i = 0; i < waiting.length && batch.length < options.maxBatch; ) {
      const next = waiting[i] as Waiting<I, R>;
      if (mayJoin(next.item, items)) {
        batch.push(next);
        items.push(next.item);
        waiting.splice(i, 1);
      } else i++;
    }
    return batch;
  };

  const flush = () => {
    scheduled = false;
    while (inFlight < options.maxInFlight && waiting.length > 0) {
      const batch = takeBatch();
      inFlight++;
      run(batch.map((w) => w.item))
        .then(
          (outcomes) => {
            for (const [i, w] of batch.entries()) {
              const outcome = outcomes[i];
              if (!outcome) w.reject(new Error("batch returned no outcome for an item"));
              else if (outcome.ok) w.resolve(outcome.value);
              else w.reject(outcome.error);
            }
          },
          (error: unknown) => {
            for (const w of batch) w.reject(error);
          },
        )
        .finally(() => {
          inFlight--;
          flush();
        });
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!scheduled && inFlight < options.maxInFlight) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

/**
 * A promise's result as a batch outcome: its value, or its error for that item alone.
 *
 * @example
 * ```ts
 * await outcomeOf(Promise.reject(new Error("x"))); // { ok: false, error: Error("x") }
 * ```
 */
export function outcomeOf<R>(work: Promise<R>): Promise<BatchOutcome<R>> {
  return work.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/**
 * The `run` of a gatherer whose items can also be done one at a time: a single item goes to
 * `alone`, several to `batch`, and when `batch` throws, each item of it is done `alone`, so one
 * bad item fails alone and the others still succeed.
 *
 * @example
 * ```ts
 * const store = gatherBatches(batchOrEachAlone(storeMany, storeOne), { maxBatch: 64, maxInFlight: 4 });
 * ```
 */
export function batchOrEachAlone<I, R>(
  batch: (items: readonly I[]) => Promise<readonly BatchOutcome<R>[]>,
  alone: (item: I) => Promise<R>,
): (items: readonly I[]) => Promise<readonly BatchOutcome<R>[]> {
  return async (items) => {
    if (items.length === 1) return [await outcomeOf(alone(items[0] as I))];
    try {
      return await batch(items);
    } catch {
      return Promise.all(items.map((item) => outcomeOf(alone(item))));
    }
  };
}
