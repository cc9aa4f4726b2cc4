#!/usr/bin/env node
// Builds the package into dist/: ESM with declarations (tsc), then CommonJS from the same
// sources (esbuild, one file per module so both trees mirror src/ and share no state), and the
// SQL migrations beside the modules that read them.
//
//   dist/esm/**.js + .d.ts + .js.map   "type": "module" (from the package)
//   dist/cjs/**.js + .d.ts + .js.map   "type": "commonjs" (dist/cjs/package.json)
//   dist/dashboard/                    the dashboard's static files (web/, Vite), served at /
//
// Source maps point at src/, which the package ships once (rather than a copy inside every map).
//
// One module per file (no bundling) keeps `new URL("./migrations/", import.meta.url)` and the
// SQLite writer thread's entry valid in both trees, and keeps one instance of each class per
// format (so `hookinbox/express` and `hookinbox` share `HookinboxError`).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildDashboard } from "./build-dashboard.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");
const dist = join(root, "dist");
const esm = join(dist, "esm");
const cjs = join(dist, "cjs");

/** Every file under `dir`, recursively, as absolute paths. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Relative `./x.ts` specifiers become `./x.js` (same length, so source maps stay exact). */
function rewriteTsSpecifiers(text) {
  return text.replace(/(["'])(\.{1,2}\/[^"']+)\.ts\1/g, "$1$2.js$1");
}

rmSync(dist, { recursive: true, force: true });

// 1. ESM + declarations.
execFileSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
  {
    cwd: root,
    stdio: "inherit",
  },
);
// tsc rewrites `.ts` specifiers in JS but not in declarations.
for (const file of walk(esm).filter((f) => f.endsWith(".d.ts"))) {
  writeFileSync(file, rewriteTsSpecifiers(readFileSync(file, "utf8")));
}

// 2. CommonJS, module by module.
const sources = walk(src).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
await build({
  entryPoints: sources,
  outbase: src,
  outdir: cjs,
  bundle: false,
  format: "cjs",
  platform: "node",
  target: "node20",
  sourcemap: true,
  sourcesContent: false,
  logLevel: "warning",
  define: { "import.meta.url": "__hookinboxModuleUrl" },
  write: true,
});
const moduleUrl = 'var __hookinboxModuleUrl = require("node:url").pathToFileURL(__filename).href;';
for (const file of walk(cjs).filter((f) => f.endsWith(".js"))) {
  let text = rewriteTsSpecifiers(readFileSync(file, "utf8"));
  // After "use strict" (so it stays a directive), on the same line (so source maps stay exact).
  if (text.includes("__hookinboxModuleUrl"))
    text = text.replace('"use strict";', `"use strict";${moduleUrl}`);
  writeFileSync(file, text);
}
writeFileSync(join(cjs, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
// The same declarations describe the CommonJS tree (read as CommonJS there).
for (const file of walk(esm).filter((f) => f.endsWith(".d.ts"))) {
  const target = join(cjs, relative(esm, file));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(file, target);
}

// 3. SQL migrations, beside the modules that read them, in both trees.
for (const file of walk(src).filter((f) => f.endsWith(".sql"))) {
  for (const tree of [esm, cjs]) {
    const target = join(tree, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
}

// 4. The dashboard: dist/esm/admin and dist/cjs/admin both find it at ../../dashboard.
await buildDashboard(join(dist, "dashboard"));
