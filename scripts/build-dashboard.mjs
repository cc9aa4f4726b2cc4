#!/usr/bin/env node
// Builds the dashboard (web/: Preact + uPlot) with Vite into static files the gateway serves:
//
//   node scripts/build-dashboard.mjs            → web/dist/       (a checkout; the gateway finds it)
//   node scripts/build-dashboard.mjs <outDir>   → <outDir>        (scripts/build.mjs: dist/dashboard)
//
// Relative asset URLs (base "./") and relative API calls let a host mount the dashboard under a
// prefix. Hashed file names under assets/ are served as immutable.
//
// Vite is imported only when building, so scripts/prepare.mjs and the test setup can ask
// whether web/dist is up to date where Vite is not installed.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../web/", import.meta.url));
const defaultOutDir = fileURLToPath(new URL("../web/dist/", import.meta.url));

/** The newest modification time (ms) of any file under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Whether web/dist holds a build no older than web/src and web/index.html. */
export function dashboardUpToDate() {
  let builtAt;
  try {
    builtAt = statSync(join(defaultOutDir, "index.html")).mtimeMs;
  } catch {
    return false;
  }
  const sources = Math.max(newest(join(root, "src")), statSync(join(root, "index.html")).mtimeMs);
  return builtAt >= sources;
}

/** Builds web/ into `outDir` (default web/dist). */
export async function buildDashboard(outDir = defaultOutDir) {
  const { build } = await import("vite");
  await build({
    root,
    base: "./",
    configFile: false,
    logLevel: "warn",
    publicDir: false,
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir,
      emptyOutDir: true,
      assetsDir: "assets",
      // No inlined data: URLs for scripts or styles; one CSS file.
      assetsInlineLimit: 0,
      modulePreload: { polyfill: false },
      reportCompressedSize: false,
      target: "es2022",
    },
  });
  return outDir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const outDir = await buildDashboard(process.argv[2]);
  process.stdout.write(`dashboard built into ${outDir} in ${Date.now() - started} ms\n`);
}
