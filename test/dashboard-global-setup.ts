// Vitest global setup: builds the dashboard (web/ → web/dist/, about a second) when it is missing
// or older than its sources, so a checkout's gateway serves it in tests without a package build;
// and installs Debian's Chromium for the browser tests when it is missing (as root). When that
// cannot be done, the browser tests fail with the one-line reason (never a silent skip).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { ensureChromium } from "./helpers/chromium.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Why Chromium is unavailable ("" when it is installed). */
    chromiumError: string;
  }
}

const web = fileURLToPath(new URL("../web/", import.meta.url));

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtAt(): number {
  try {
    return statSync(join(web, "dist", "index.html")).mtimeMs;
  } catch {
    return 0;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  try {
    ensureChromium();
    project.provide("chromiumError", "");
  } catch (error) {
    project.provide("chromiumError", (error as Error).message);
  }
  const sources = Math.max(newest(join(web, "src")), statSync(join(web, "index.html")).mtimeMs);
  if (builtAt() >= sources) return;
  // @ts-expect-error: a plain .mjs script without declarations
  const { buildDashboard } = await import("../scripts/build-dashboard.mjs");
  await buildDashboard();
}
