import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { hookinboxError } from "../errors.ts";

/** Config file names looked up, in order, when no path is given. */
export const configFileNames = [
  "hookinbox.config.ts",
  "hookinbox.config.mjs",
  "hookinbox.config.js",
  "hookinbox.config.json",
];

/**
 * Finds the config file in `cwd` (or uses `path`) and returns its default export; `null` when no
 * path was given and no file exists (the embedded default then applies). `.ts` files need the
 * tsx loader, which the `hookinbox` command registers.
 *
 * @example
 * ```ts
 * const raw = await loadConfigFile({ cwd: process.cwd() });
 * ```
 */
export async function loadConfigFile(options: {
  cwd: string;
  path?: string;
}): Promise<{ path: string; config: unknown } | null> {
  let path: string | undefined;
  if (options.path) {
    path = resolve(options.cwd, options.path);
    if (!existsSync(path)) throw hookinboxError("HOOKINBOX_CONFIG_NOT_FOUND", path);
  } else {
    path = configFileNames.map((name) => resolve(options.cwd, name)).find((p) => existsSync(p));
    if (!path) return null;
  }
  if (path.endsWith(".json")) {
    try {
      return { path, config: JSON.parse(await readFile(path, "utf8")) };
    } catch (error) {
      throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `${path} is not valid JSON`, error);
    }
  }
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  if (module.default === undefined) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `${path} has no default export; write \`export default defineConfig({ … })\``,
    );
  }
  return { path, config: module.default };
}
