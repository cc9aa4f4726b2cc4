import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type HookinboxError, hookinboxError, isHookinboxError } from "../errors.ts";
import { jsonErrorOffset, lineAndColumn } from "./json-error-position.ts";
import { loadTransformModules } from "./transform-modules.ts";

/** Config file names looked up, in order, when no path is given. */
export const configFileNames = [
  "hookinbox.config.ts",
  "hookinbox.config.mjs",
  "hookinbox.config.js",
  "hookinbox.config.json",
];

let typeScriptLoader: Promise<void> | undefined;

function typeScriptHint(path: string): string {
  return `${path}: run "npm install --save-dev tsx", or write the config as hookinbox.config.mjs`;
}

/**
 * Registers tsx's loaders (ESM and CommonJS, as a config outside a `"type": "module"` package
 * loads as CommonJS) the first time a TypeScript config is loaded. tsx is an optional peer
 * dependency: without it, Node.js versions that strip types themselves still load the file, and
 * others fail with HOOKINBOX_CONFIG_TS_LOADER_MISSING.
 */
function registerTypeScriptLoader(): Promise<void> {
  typeScriptLoader ??= (async () => {
    try {
      const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
      esm.register();
      cjs.register();
    } catch {
      // Not installed: Node.js may still strip types itself (22.18+); import() says if not.
    }
  })();
  return typeScriptLoader;
}

/** Registers tsx before a TypeScript transform module is imported. */
async function loaderFor(path: string): Promise<void> {
  if (/\.[cm]?ts$/.test(path)) await registerTypeScriptLoader();
}

/**
 * Finds the config file in `cwd` (or uses `path`) and returns its default export; `null` when no
 * path was given and no file exists (the embedded default then applies). A `.ts` file is loaded
 * with tsx, registered here on first use when it is installed. A `transform` given as a module
 * path is replaced by that module's default export (see transform-modules.ts).
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
    const text = await readFile(path, "utf8");
    try {
      const config: unknown = JSON.parse(text);
      return { path, config: await loadTransformModules(config, path, loaderFor) };
    } catch (error) {
      if (isHookinboxError(error)) throw error;
      const offset = jsonErrorOffset(text) ?? 0;
      const { line, column } = lineAndColumn(text, offset);
      throw hookinboxError(
        "HOOKINBOX_CONFIG_INVALID",
        // Not the parser's message: it quotes the text around the mistake, secrets included.
        `${path}:${line}:${column} is not valid JSON; fix it there`,
        error,
      );
    }
  }
  if (/\.[cm]?ts$/.test(path)) await registerTypeScriptLoader();
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw hookinboxError("HOOKINBOX_CONFIG_TS_LOADER_MISSING", typeScriptHint(path), error);
    }
    throw explainLoadError(path, error);
  }
  if (module.default === undefined) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `${path} has no default export; write \`export default defineConfig({ … })\``,
    );
  }
  const config = unwrapCommonJsDefault(module.default);
  return { path, config: await loadTransformModules(config, path, loaderFor) };
}

/**
 * A `.ts` config in a package without `"type": "module"` is compiled to CommonJS (by tsx):
 * `import()` then gives `{ default: module.exports }`, whose own `default` is the config.
 */
function unwrapCommonJsDefault(exported: unknown): unknown {
  const inner = exported as { __esModule?: unknown; default?: unknown } | null;
  return typeof inner === "object" && inner?.__esModule === true && inner.default !== undefined
    ? inner.default
    : exported;
}

/** The first line of `node --check`'s answer for a JavaScript file: `path:line`, or null. */
function syntaxErrorLine(path: string): number | null {
  if (!/\.[cm]?js$/.test(path)) return null;
  const checked = spawnSync(process.execPath, ["--check", path], { encoding: "utf8" });
  const match = /^.*:(\d+)\s*$/m.exec(checked.stderr ?? "");
  return match ? Number(match[1]) : null;
}

/**
 * One line for a config file that failed to load: a missing import names the module, a syntax
 * error its line (from the loader, or `node --check` for JavaScript), anything the file threw its
 * message. The stack stays on `cause` (printed with `--debug`).
 */
function explainLoadError(path: string, error: unknown): HookinboxError {
  const {
    code,
    message = String(error),
    name = "Error",
  } = (error ?? {}) as {
    code?: unknown;
    message?: string;
    name?: string;
  };
  if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1] ?? "a module";
    return hookinboxError(
      "HOOKINBOX_CONFIG_IMPORT_MISSING",
      `${path} imports ${missing}, which is not there; npm install it, or fix the import`,
      error,
    );
  }
  // esbuild (TypeScript configs) names the place itself: "/x/hookinbox.config.ts:2:0: ERROR: …".
  const located = /^(\S+):(\d+):(\d+): ERROR: (.*)$/m.exec(message);
  if (located) {
    return hookinboxError(
      "HOOKINBOX_CONFIG_LOAD_FAILED",
      `${located[1]}:${located[2]}:${Number(located[3]) + 1}: ${located[4]}; fix it there`,
      error,
    );
  }
  if (name === "SyntaxError") {
    const line = syntaxErrorLine(path);
    return hookinboxError(
      "HOOKINBOX_CONFIG_LOAD_FAILED",
      `${path}${line === null ? "" : `:${line}`}: SyntaxError: ${message}; fix it there`,
      error,
    );
  }
  return hookinboxError(
    "HOOKINBOX_CONFIG_LOAD_FAILED",
    `${path} threw ${name}: ${message.split("\n")[0]}; run with --debug for the stack`,
    error,
  );
}
