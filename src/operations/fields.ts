import { z } from "zod";
import { parseDuration } from "../config/units.ts";

/**
 * The input fields operations share, each with its constraint and its message written once: the
 * API, the CLI and the OpenAPI document all read them from here.
 */

const limitMessage = "must be an integer from 1 to 500";

/**
 * A page size, 1..500 (a query string or an option arrives as text).
 *
 * @example
 * ```ts
 * limitField.parse("50"); // 50
 * ```
 */
export const limitField = z.coerce
  .number({ error: limitMessage })
  .int(limitMessage)
  .min(1, limitMessage)
  .max(500, limitMessage)
  .describe("page size, 1 to 500");

/** The `nextCursor` of the previous page. */
export const cursorField = z.string({ error: "must be a cursor from a previous page" }).min(1, {
  error: "must be a cursor from a previous page",
});

/** Every delivery status, in lifecycle order. */
export const deliveryStatuses = ["pending", "blocked", "running", "done", "stale", "dead"] as const;
/** Every event status. */
export const eventStatuses = ["received", "ignored", "pending", "done", "dead"] as const;
/** Every effect status. */
export const effectStatuses = ["processing", "done", "held"] as const;

/**
 * One value of a fixed list, with a message that names the list.
 *
 * @example
 * ```ts
 * oneOf(deliveryStatuses).parse("dead"); // "dead"
 * ```
 */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(", ")}` });
}

/** A string the caller names (source, type, target, id). */
export function text(what: string) {
  return z
    .string({ error: "must be a string" })
    .min(1, { error: "must not be empty" })
    .describe(what);
}

/**
 * A point in time as ISO 8601 text (or ms since the epoch in a JSON body), as ms.
 *
 * @example
 * ```ts
 * timeField.parse("2026-11-01T00:00:00Z"); // 1793491200000
 * ```
 */
export const timeField = z
  .union(
    [
      z.number().int().nonnegative(),
      z
        .string()
        .refine((value) => !Number.isNaN(Date.parse(value)), {
          error: "must be an ISO 8601 time like 2026-11-01T00:00:00Z",
        })
        .meta({ format: "date-time" }),
    ],
    { error: "must be an ISO 8601 time like 2026-11-01T00:00:00Z" },
  )
  .transform((value) => (typeof value === "number" ? value : Date.parse(value)));

/**
 * A duration such as `30s`, `15m`, `1h` or `2d`, as ms.
 *
 * @example
 * ```ts
 * durationField.parse("15m"); // 900000
 * ```
 */
export const durationField = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)\s*$/i, {
    error: 'must be a duration like "30s", "15m", "1h" or "2d"',
  })
  .transform((value) => parseDuration(value) ?? 0);

/** Target names or handler patterns of a replay. */
export const targetsField = z
  .array(z.string(), { error: "must be an array of handler patterns" })
  .describe("handler patterns or destination names to deliver to");
