import type { z } from "zod";
import type { TreeHeads } from "../audit/tree-heads.ts";
import { hookinboxError } from "../errors.ts";
import type { ConfiguredDestination } from "../forward/destination-admin.ts";
import type { RouteEvent } from "../forward/route-table.ts";
import type { TargetPreview } from "../forward/transform-preview.ts";
import type { PreparableEvent } from "../forward/transform-request.ts";
import type { Store } from "../store/types.ts";
import type { Runbooks } from "./runbook-lookup.ts";

/** Re-delivery needs the handlers' routes, which only an inbox built from the config has. */
export interface ReplayRouting {
  /** Handler patterns, in configured order. */
  readonly handlers: readonly string[];
  /** Destination names, in configured order. */
  readonly destinations: readonly string[];
  /** The targets of one event, as ingest routes it. */
  readonly route: RouteEvent;
}

/**
 * What an operation runs against: the admin API builds it from the running inbox, the CLI from
 * the config file and the store it names.
 */
export interface OperationContext {
  readonly store: Store;
  readonly runbooks: Runbooks;
  /** Configured source names, where the surface knows them (dashboard search). */
  readonly sources?: readonly string[];
  /** Configured destinations, names and URLs only. */
  readonly destinations: readonly ConfiguredDestination[];
  now(): number;
  /** Present where the config's handlers are loaded (replays). */
  readonly routing?: ReplayRouting;
  /**
   * What a destination would be sent for a stored event now, through the current transforms
   * (nothing sent or stored); present where the config's destinations are loaded. Null for a
   * target that is not a configured destination.
   */
  readonly previewTarget?: (
    target: string,
    event: PreparableEvent,
  ) => Promise<TargetPreview | null>;
  /** Signed tree heads; null when the audit log is off, undefined where the surface has none. */
  readonly audit?: TreeHeads | null;
  /** Wakes an in-process worker after work became due (the CLI's store has none to wake). */
  readonly wake?: () => void;
  /** Progress of bulk work (the CLI draws a bar; the API has none). */
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * One admin operation: its input schema (the one place its validation is written, also the
 * source of the OpenAPI document) and the function that runs it.
 */
export interface Operation<S extends z.ZodObject = z.ZodObject, R = unknown> {
  /** Stable name, e.g. `events.list` (the OpenAPI operationId). */
  readonly name: string;
  /** One line for `--help` and the OpenAPI summary. */
  readonly summary: string;
  /** Reads only: never migrates, never changes the store. */
  readonly readOnly: boolean;
  readonly input: S;
  /**
   * A rule across fields that a schema cannot say with its own code (a bulk action's scope); it
   * runs after the schema, before anything opens the store, and throws a HookinboxError.
   */
  readonly check?: (input: z.output<S>) => void;
  run(ctx: OperationContext, input: z.output<S>): Promise<R>;
}

/**
 * Declares an operation (typed input from its schema).
 *
 * @example
 * ```ts
 * export const listRunbooks = defineOperation({
 *   name: "runbooks.list", summary: "configured runbooks", readOnly: true,
 *   input: z.strictObject({}), run: async (ctx) => ({ items: ctx.runbooks.all }),
 * });
 * ```
 */
export function defineOperation<S extends z.ZodObject, R>(
  operation: Operation<S, R>,
): Operation<S, R> {
  return operation;
}

/** What a top-level object accepts, for the unknown-key message (`; accepted: a, b`). */
function accepted(schema: z.ZodObject | null, nameOf: (field: string) => string): string {
  if (!schema) return "";
  const keys = Object.keys(schema.shape);
  return keys.length === 0 ? "; it takes none" : `; accepted: ${keys.map(nameOf).join(", ")}`;
}

/**
 * Validates raw input against an operation's (strict) schema. A failure is one error with `code`
 * (HOOKINBOX_QUERY_INVALID for the API, HOOKINBOX_USAGE for the CLI) naming each field as the
 * surface calls it (`limit` in a query, `--limit` on the command line); an unknown key is named
 * too (`unknown key "sorce"`).
 *
 * @example
 * ```ts
 * parseInput(listEvents, { limit: "0" }, "HOOKINBOX_QUERY_INVALID");
 * // throws "limit must be an integer from 1 to 500"
 * ```
 */
export function parseInput<S extends z.ZodObject>(
  operation: Operation<S, unknown>,
  raw: unknown,
  code: "HOOKINBOX_QUERY_INVALID" | "HOOKINBOX_USAGE",
  nameOf: (field: string) => string = (field) => field,
): z.output<S> {
  const parsed = operation.input.safeParse(raw);
  if (parsed.success) {
    operation.check?.(parsed.data);
    return parsed.data;
  }
  const messages = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join(".");
    // Strict schemas: a misspelt key is refused by name, never ignored (an ignored filter key
    // would widen a bulk action to everything).
    const message =
      issue.code === "unrecognized_keys"
        ? `unknown ${issue.keys.length === 1 ? "key" : "keys"} ${issue.keys.map((k) => `"${nameOf(k)}"`).join(", ")}${accepted(issue.path.length === 0 ? operation.input : null, nameOf)}`
        : issue.message;
    return field === "" ? message : `${nameOf(field)} ${message}`;
  });
  throw hookinboxError(code, [...new Set(messages)].join("; "));
}

/**
 * Runs an operation on raw input: validate once, then run.
 *
 * @example
 * ```ts
 * const page = await runOperation(listEvents, ctx, { status: "dead" }, "HOOKINBOX_USAGE");
 * ```
 */
export async function runOperation<S extends z.ZodObject, R>(
  operation: Operation<S, R>,
  ctx: OperationContext,
  raw: unknown,
  code: "HOOKINBOX_QUERY_INVALID" | "HOOKINBOX_USAGE",
  nameOf?: (field: string) => string,
): Promise<R> {
  return operation.run(ctx, parseInput(operation, raw, code, nameOf));
}
