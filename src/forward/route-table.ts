import { hookinboxError } from "../errors.ts";
import { compilePattern, type ResolvedHandler } from "../handlers/routes.ts";
import { readJsonPath } from "../ingest/json-path.ts";
import { type ResolvedTransform, resolveTransform } from "./transform.ts";

/** One route as configured (see `routes` in the config). */
export interface RouteInput {
  readonly from: string | readonly string[];
  readonly types?: readonly string[];
  readonly where?: Readonly<Record<string, string | number | boolean | null>>;
  readonly to: string | readonly string[];
  /** A function (a module path is loaded by the config file's loader first). */
  readonly transform?: unknown;
  readonly transformTimeout?: string | number;
}

/** Picks the targets of an event: `(source, type, raw body) → target names`. */
export type RouteEvent = (source: string, type: string | null, body: Uint8Array) => string[];

/**
 * The route table: routing, and the route transform of one event's delivery to one target: that
 * of the first route, in configured order, that sends this event to this target (its transform,
 * or null when that route has none), evaluated on the current config, so a retry or a replay
 * runs the transform configured now.
 */
export interface RouteTable extends RouteEvent {
  transformFor(
    target: string,
    source: string,
    type: string | null,
    body: Uint8Array,
  ): ResolvedTransform | null;
}

interface CompiledRoute {
  readonly sources: ReadonlySet<string>;
  readonly types: ReadonlyArray<(source: string, type: string | null) => boolean> | null;
  readonly where: ReadonlyArray<readonly [string, unknown]>;
  readonly to: readonly string[];
  readonly transform: ResolvedTransform | null;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });
const list = (value: string | readonly string[]) => (typeof value === "string" ? [value] : value);

/**
 * Compiles handlers and routes into one routing function. Handlers that no route names keep
 * routing by their own pattern; a handler that a route names is routed by routes alone (so a
 * route's `types` and `where` narrow it). A route sends an event of one of its `from` sources,
 * whose type matches one of `types` (globs; default any) and whose body holds every `where`
 * value (JSON equality on the parsed body), to every name in `to`. The body is parsed at most
 * once per event, and only when a route with `where` is consulted. Unknown sources, handlers
 * or destinations fail here, at boot, with HOOKINBOX_ROUTE_UNKNOWN_NAME; a route with a
 * `transform` that names a handler with HOOKINBOX_CONFIG_INVALID (transforms apply to
 * destinations only).
 *
 * @example
 * ```ts
 * const route = compileRoutes(handlers, new Set(["app"]), new Set(["stripe"]), [
 *   { from: "stripe", types: ["invoice.*"], where: { "$.livemode": true }, to: "app" },
 * ]);
 * route("stripe", "invoice.paid", body); // ["app"]
 * route.transformFor("app", "stripe", "invoice.paid", body); // the route's transform, or null
 * ```
 */
export function compileRoutes(
  handlers: ReadonlyMap<string, ResolvedHandler>,
  destinations: ReadonlySet<string>,
  sources: ReadonlySet<string>,
  routes: readonly RouteInput[],
): RouteTable {
  const problems: string[] = [];
  const refused: string[] = [];
  const routedByRoutes = new Set<string>();
  const compiled: CompiledRoute[] = routes.map((route, index) => {
    for (const source of list(route.from)) {
      if (!sources.has(source))
        problems.push(
          `routes[${index}].from: no source named "${source}" (sources: ${[...sources].join(", ") || "none"})`,
        );
    }
    const transform = resolveTransform(
      route.transform,
      route.transformTimeout,
      `routes[${index}].transform`,
    );
    for (const name of list(route.to)) {
      if (handlers.has(name) && transform)
        refused.push(
          `routes[${index}].transform: "${name}" is a handler; a transform applies to destinations only (a handler reshapes the event itself)`,
        );
      if (handlers.has(name)) routedByRoutes.add(name);
      else if (!destinations.has(name))
        problems.push(
          `routes[${index}].to: no handler or destination named "${name}" (destinations: ${[...destinations].join(", ") || "none"}; handlers: ${[...handlers.keys()].join(", ") || "none"})`,
        );
    }
    return {
      sources: new Set(list(route.from)),
      types: route.types ? route.types.map((type) => compilePattern(`*:${type}`)) : null,
      where: Object.entries(route.where ?? {}),
      to: [...new Set(list(route.to))],
      transform,
    };
  });
  if (problems.length > 0)
    throw hookinboxError("HOOKINBOX_ROUTE_UNKNOWN_NAME", `\n  - ${problems.join("\n  - ")}`);
  if (refused.length > 0)
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `\n  - ${refused.join("\n  - ")}`);
  const byPattern = [...handlers.values()].filter((h) => !routedByRoutes.has(h.target));
  const routeEvent: RouteEvent = (source, type, body) => {
    const targets: string[] = [];
    for (const handler of byPattern)
      if (handler.matches(source, type)) targets.push(handler.target);
    for (const route of matchingRoutes(compiled, source, type, body))
      for (const target of route.to) if (!targets.includes(target)) targets.push(target);
    return targets;
  };
  // Targets some route transforms: for the others, no route is matched again (or body parsed).
  const transformed = new Set(compiled.filter((r) => r.transform).flatMap((r) => r.to));
  return Object.assign(routeEvent, {
    transformFor: (target: string, source: string, type: string | null, body: Uint8Array) => {
      if (!transformed.has(target)) return null;
      for (const route of matchingRoutes(compiled, source, type, body))
        if (route.to.includes(target)) return route.transform;
      return null;
    },
  });
}

/** The routes an event matches, in configured order (the body parsed once, when `where` needs it). */
function* matchingRoutes(
  compiled: readonly CompiledRoute[],
  source: string,
  type: string | null,
  body: Uint8Array,
): Generator<CompiledRoute> {
  let parsed: { value: unknown } | undefined;
  for (const route of compiled) {
    if (!route.sources.has(source)) continue;
    if (route.types && !route.types.some((matches) => matches(source, type))) continue;
    if (route.where.length > 0) {
      if (!parsed) {
        try {
          parsed = { value: JSON.parse(utf8.decode(body)) };
        } catch {
          parsed = { value: undefined };
        }
      }
      const payload = parsed.value;
      if (!route.where.every(([path, value]) => readJsonPath(payload, path) === value)) continue;
    }
    yield route;
  }
}
