import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { hookinboxError } from "../errors.ts";

type Entry = Record<string, unknown>;

/** Each `transform` key a config may hold: `[object holding it, its key path]`. */
function transformHolders(config: Entry): Array<[Entry, string]> {
  const holders: Array<[Entry, string]> = [];
  const scan = (part: Entry, prefix: string) => {
    const destinations = part.destinations;
    if (destinations && typeof destinations === "object")
      for (const [name, d] of Object.entries(destinations as Entry))
        if (d && typeof d === "object") holders.push([d as Entry, `${prefix}destinations.${name}`]);
    if (Array.isArray(part.routes))
      part.routes.forEach((r: unknown, i) => {
        if (r && typeof r === "object") holders.push([r as Entry, `${prefix}routes[${i}]`]);
      });
  };
  scan(config, "");
  const environments = config.environments;
  if (environments && typeof environments === "object")
    for (const [name, e] of Object.entries(environments as Entry))
      if (e && typeof e === "object") scan(e as Entry, `environments.${name}.`);
  return holders;
}

/** The default export of a transform module, which must be a function. */
async function importTransform(
  path: string,
  where: string,
  beforeImport: (path: string) => Promise<void>,
): Promise<unknown> {
  if (!existsSync(path))
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `${where}: module ${path} not found`);
  await beforeImport(path);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const { name = "Error", message = String(error) } = (error ?? {}) as {
      name?: string;
      message?: string;
    };
    throw hookinboxError(
      "HOOKINBOX_CONFIG_LOAD_FAILED",
      `${where}: ${path} threw ${name}: ${String(message).split("\n")[0]}; run with --debug for the stack`,
      error,
    );
  }
  const fn = module.default;
  if (typeof fn !== "function")
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `${where}: ${path} has no default export function; write \`export default (event) => ({ body, headers })\``,
    );
  return fn;
}

/**
 * Replaces each `transform` given as a module path (a JSON config's only way to name code) with
 * the module's default export, the path resolved against the config file's folder; the same
 * module named twice is imported once. Returns `config` unchanged when no transform is a path,
 * else a copy (the loaded config object itself is not changed). A missing file or a module
 * without a default export function is HOOKINBOX_CONFIG_INVALID naming the key; a module that
 * throws while loading is HOOKINBOX_CONFIG_LOAD_FAILED.
 *
 * @example
 * ```ts
 * const config = await loadTransformModules(JSON.parse(text), "/srv/hookinbox.config.json");
 * // { routes: [{ …, transform: [Function] }] } for "transform": "./transforms/billing.mjs"
 * ```
 */
export async function loadTransformModules(
  config: unknown,
  configPath: string,
  beforeImport: (path: string) => Promise<void> = async () => undefined,
): Promise<unknown> {
  if (!config || typeof config !== "object") return config;
  const copy = copyTransformHolders(config as Entry);
  const holders = transformHolders(copy).filter(([h]) => typeof h.transform === "string");
  if (holders.length === 0) return config;
  const loaded = new Map<string, Promise<unknown>>();
  for (const [holder, where] of holders) {
    const path = resolve(dirname(configPath), holder.transform as string);
    const key = `${where}.transform`;
    let fn = loaded.get(path);
    if (!fn) {
      fn = importTransform(path, key, beforeImport);
      loaded.set(path, fn);
    }
    holder.transform = await fn;
  }
  return copy;
}

/**
 * A copy of the config down to the objects holding transforms (destinations, routes,
 * environments), so that replacing a path does not change the object a module exported.
 */
function copyTransformHolders(config: Entry): Entry {
  const part = (p: Entry): Entry => {
    const out: Entry = { ...p };
    if (p.destinations && typeof p.destinations === "object")
      out.destinations = Object.fromEntries(
        Object.entries(p.destinations as Entry).map(([k, v]) => [
          k,
          v && typeof v === "object" ? { ...(v as Entry) } : v,
        ]),
      );
    if (Array.isArray(p.routes))
      out.routes = p.routes.map((r: unknown) => (r && typeof r === "object" ? { ...r } : r));
    return out;
  };
  const copy = part(config);
  if (config.environments && typeof config.environments === "object")
    copy.environments = Object.fromEntries(
      Object.entries(config.environments as Entry).map(([k, v]) => [
        k,
        v && typeof v === "object" ? part(v as Entry) : v,
      ]),
    );
  return copy;
}
