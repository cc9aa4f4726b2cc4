import type { Handler } from "./types.ts";

/** A retry policy with every default applied. */
export interface RetryPolicy {
  /** Delays in ms after try 1, 2, …; the last one repeats. */
  readonly scheduleMs: readonly number[];
  readonly maxAttempts: number;
  readonly jitter: "full" | "none";
}

/** One configured handler, ready for routing and the worker. */
export interface ResolvedHandler {
  /** The pattern as configured; it names the delivery target. */
  readonly target: string;
  readonly handler: Handler;
  readonly leaseMs: number;
  /** An attempt running longer is aborted (`ctx.signal`) and counts as failed. */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly stale: "skip" | "deliver";
  readonly onDeadLetter: "block" | "continue";
  /** Whether an event of this source and type goes to this handler. */
  matches(source: string, type: string | null): boolean;
}

/**
 * A glob as an anchored RegExp: `*` matches any run of characters, line breaks included (the `s`
 * flag: a type holding "\n" or "\r" cannot slip past a `*`); every other character, regex
 * metacharacters among them, matches itself.
 */
function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`, "s");
}

/**
 * Compiles a handler pattern into a matcher: `"*"` (everything), `"stripe:*"` (every event of a
 * source, typed or not), `"stripe:invoice.*"` (`*` matches any characters, dots included),
 * `"*:ping"`. `*` matches line breaks too; every other character is literal. Events without a
 * type match only `*` type patterns.
 *
 * @example
 * ```ts
 * compilePattern("stripe:invoice.*")("stripe", "invoice.paid"); // true
 * ```
 */
export function compilePattern(pattern: string): (source: string, type: string | null) => boolean {
  if (pattern === "*") return () => true;
  const colon = pattern.indexOf(":");
  const sourceGlob = globToRegExp(pattern.slice(0, colon));
  const typePart = pattern.slice(colon + 1);
  const typeGlob = globToRegExp(typePart);
  return (source, type) =>
    sourceGlob.test(source) && (type === null ? typePart === "*" : typeGlob.test(type));
}

/**
 * The targets an event goes to: every handler whose pattern matches, in configured order.
 *
 * @example
 * ```ts
 * routeEvent(handlers, "stripe", "invoice.paid"); // ["stripe:invoice.*", "*"]
 * ```
 */
export function routeEvent(
  handlers: ReadonlyMap<string, ResolvedHandler>,
  source: string,
  type: string | null,
): string[] {
  const targets: string[] = [];
  for (const handler of handlers.values())
    if (handler.matches(source, type)) targets.push(handler.target);
  return targets;
}

/**
 * The delay before the next try after try `attempt` failed: the schedule's entry (the last
 * repeats), with full jitter (uniform in [0, delay]) unless disabled. Full jitter spreads the
 * retries of a burst of failures instead of sending them back together.
 *
 * @example
 * ```ts
 * retryDelay({ scheduleMs: [5000, 300000], maxAttempts: 3, jitter: "none" }, 1, Math.random); // 5000
 * ```
 */
export function retryDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const index = Math.min(Math.max(attempt, 1), policy.scheduleMs.length) - 1;
  const delay = policy.scheduleMs[index] ?? 0;
  return policy.jitter === "full" ? Math.floor(random() * (delay + 1)) : delay;
}
