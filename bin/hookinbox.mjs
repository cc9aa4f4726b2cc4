#!/usr/bin/env node
// The `hookinbox` command. Installed from npm it runs the built JavaScript in dist/ (tsx is
// loaded later, and only to read a hookinbox.config.ts). In a checkout of the repository, where
// src/ is present and the package is not under node_modules, it runs the TypeScript sources
// through tsx, so `npm ci && npx hookinbox start` works with no build step and edits show at once.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// In a folder that was deleted, process.cwd() throws (and loaders call it while they load): say
// so in one line, as src/cli/main.ts does for HOOKINBOX_CWD_MISSING, before loading anything.
try {
  process.cwd();
} catch {
  process.stderr.write(
    "hookinbox: HOOKINBOX_CWD_MISSING: The current folder no longer exists (deleted or moved): cd to an existing folder and run again\n",
  );
  process.exit(1);
}

const sources = new URL("../src/cli/main.ts", import.meta.url);
const checkout =
  existsSync(fileURLToPath(sources)) && !fileURLToPath(import.meta.url).includes("node_modules");

let main;
if (checkout) {
  // The repository's tsconfig maps the package's own name to its sources, so a config in
  // examples/ that imports "hookinbox" runs without a build of dist/.
  process.env.TSX_TSCONFIG_PATH ??= fileURLToPath(new URL("../tsconfig.json", import.meta.url));
  // While a test run's precompiled copy of src/ is fresh (bin/compiled-sources.mjs), the command
  // runs from it, with no loader while it loads: about a second sooner. A config that imports
  // src/ by path then gets the same compiled modules (one copy of each class in the process),
  // and a hookinbox.config.ts still loads through tsx, registered when it is read.
  const { compiledUrl } = await import("./compiled-sources.mjs");
  const compiled = compiledUrl(fileURLToPath(sources));
  if (compiled) {
    ({ main } = await import(compiled));
    const { register } = await import("node:module");
    register("./compiled-sources-hooks.mjs", import.meta.url);
  } else {
    const [{ register }, { register: registerCjs }] = await Promise.all([
      import("tsx/esm/api"),
      import("tsx/cjs/api"),
    ]);
    // Both loaders: a config file outside an ESM package (no "type": "module") loads as CommonJS.
    register();
    registerCjs();
    ({ main } = await import(sources.href));
  }
} else {
  ({ main } = await import("../dist/esm/cli/main.js"));
}
const code = await main(process.argv.slice(2));
// A failed command ends now (its one line is written; stderr is synchronous on pipes and files),
// whatever handle a half-started store or server left open.
if (code !== 0) process.exit(code);
