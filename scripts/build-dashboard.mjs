#!/usr/bin/env node
// Builds the dashboard (web/: Preact + uPlot) with Vite into static files the gateway serves:
//
//   node scripts/build-dashboard.mjs            → web/dist/       (a checkout; the gateway finds it)
//   node scripts/build-dashboard.mjs <outDir>   → <outDir>        (scripts/build.mjs: dist/dashboard)
//
// Relative asset URLs (base "./") and relative API calls let a host mount the dashboard under a
// prefix. Hashed file names under assets/ are served as immutable.
import { fileURLToPath } from "node:url";
import { build } from "vite";

const root = fileURLToPath(new URL("../web/", import.meta.url));

/** Builds web/ into `outDir` (default web/dist). */
export async function buildDashboard(
  outDir = fileURLToPath(new URL("../web/dist/", import.meta.url)),
) {
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
