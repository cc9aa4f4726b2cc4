#!/usr/bin/env node
// The `hookinbox` command. Installed from npm it runs the built JavaScript in dist/ (tsx is
// loaded later, and only to read a hookinbox.config.ts). In a checkout of the repository, where
// src/ is present and the package is not under node_modules, it runs the TypeScript sources
// through tsx, so `npm ci && npx hookinbox start` works with no build step and edits show at once.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const sources = new URL("../src/cli/main.ts", import.meta.url);
const checkout =
  existsSync(fileURLToPath(sources)) && !fileURLToPath(import.meta.url).includes("node_modules");

let main;
if (checkout) {
  // The repository's tsconfig maps the package's own name to its sources, so a config in
  // examples/ that imports "hookinbox" runs without a build of dist/.
  process.env.TSX_TSCONFIG_PATH ??= fileURLToPath(new URL("../tsconfig.json", import.meta.url));
  const [{ register }, { register: registerCjs }] = await Promise.all([
    import("tsx/esm/api"),
    import("tsx/cjs/api"),
  ]);
  // Both loaders: a config file outside an ESM package (no "type": "module") loads as CommonJS.
  register();
  registerCjs();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import("../dist/esm/cli/main.js"));
}
process.exitCode = await main(process.argv.slice(2));
