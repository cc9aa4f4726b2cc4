#!/usr/bin/env node
// Runs one TypeScript file with tsx's loader (used by benchmarks and test child processes).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { register as registerCjs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

// Both loaders: a config file outside an ESM package (no "type": "module") loads as CommonJS.
register();
registerCjs();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error("usage: run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
process.argv = [process.argv[0] ?? "node", resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
