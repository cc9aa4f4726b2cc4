import { z } from "zod";
import type { Transform } from "../forward/transform.ts";
import { duration } from "./source-fields.ts";
import { parseDuration } from "./units.ts";

/**
 * `transform` on a route or a destination (docs/forwarding.md#transformations): a function
 * `(event) => ({ body, headers }) | null`, or, in a JSON config, the path of a module whose
 * default export is one (relative to the config file; the loader replaces it with the function).
 */
export const transformField = z.custom<Transform | string>(
  (v) => typeof v === "function" || (typeof v === "string" && v.length > 0),
  { message: "expected a function (event) => ({ body, headers }) | null, or a module path" },
);

/** The time budget of one transform call (default 1s, at most 1m). */
export const transformTimeoutField = duration.refine(
  (v) => {
    const ms = parseDuration(v) ?? 0;
    return ms > 0 && ms <= 60_000;
  },
  { message: "expected a duration over zero and at most 1m" },
);
