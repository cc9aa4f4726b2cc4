import { compilePattern } from "../handlers/routes.ts";

// The runbooks themselves, apart from the `runbooks.list` operation (runbooks.ts): the operation
// context (operation.ts) carries a Runbooks, and runbooks.ts defines an operation with it.

/** What the on-call person needs beside a failure of one event type. */
export interface Runbook {
  /** The configured key that matched, e.g. `"stripe:invoice.paid"` or `"stripe:invoice.*"`. */
  readonly pattern: string;
  readonly owner: string | null;
  /** null: the runbook does not say (bulk retry then needs no override, but shows the doubt). */
  readonly safeToReprocess: boolean | null;
  readonly notes: string | null;
  readonly link: string | null;
}

/** Runbooks as written in the config: `{ "stripe:invoice.paid": { owner, safeToReprocess, notes, link } }`. */
export type RunbookConfig = Readonly<
  Record<
    string,
    { owner?: string; safeToReprocess?: boolean; notes?: string; link?: string } | undefined
  >
>;

/** Finds the runbook of an event's source and type. */
export interface Runbooks {
  /** Every runbook, in configured order. */
  readonly all: readonly Runbook[];
  /** The exact `source:type` runbook, else the first pattern that matches, else null. */
  for(source: string, type: string | null): Runbook | null;
}

/**
 * Compiles the `runbooks` config. Keys are handler patterns (`"stripe:invoice.paid"`,
 * `"stripe:invoice.*"`, `"*"`): an exact key wins, then the first matching pattern in
 * configured order.
 *
 * @example
 * ```ts
 * const runbooks = compileRunbooks({ "stripe:invoice.paid": { owner: "billing", safeToReprocess: true } });
 * runbooks.for("stripe", "invoice.paid")?.owner; // "billing"
 * ```
 */
export function compileRunbooks(config: RunbookConfig | undefined): Runbooks {
  const all: Runbook[] = Object.entries(config ?? {}).map(([pattern, entry]) => ({
    pattern,
    owner: entry?.owner ?? null,
    safeToReprocess: entry?.safeToReprocess ?? null,
    notes: entry?.notes ?? null,
    link: entry?.link ?? null,
  }));
  const exact = new Map(all.map((r) => [r.pattern, r]));
  const matchers = all.map((runbook) => ({ runbook, matches: compilePattern(runbook.pattern) }));
  return {
    all,
    for(source, type) {
      if (type !== null) {
        const hit = exact.get(`${source}:${type}`);
        if (hit) return hit;
      }
      return matchers.find((m) => m.matches(source, type))?.runbook ?? null;
    },
  };
}
