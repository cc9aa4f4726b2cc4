#!/usr/bin/env node
// Runs one TypeScript file with tsx's loader (used by benchmarks and test child processes).
// A file of src/ or test/ runs from the test run's precompiled copy while it is fresh
// (bin/compiled-sources.mjs): no loader then, so the process starts about a second sooner.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { compiledUrl } from "./compiled-sources.mjs";

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error("usage: run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
process.argv = [process.argv[0] ?? "node", resolve(file), ...rest];
const compiled = compiledUrl(resolve(file));
if (compiled) {
  await import(compiled);
} else {
  const [{ register }, { register: registerCjs }] = await Promise.all([
    import("tsx/esm/api"),
    import("tsx/cjs/api"),
  ]);
  // Both loaders: a config file outside an ESM package (no "type": "module") loads as CommonJS.
  register();
  registerCjs();
  await import(pathToFileURL(resolve(file)).href);
}
