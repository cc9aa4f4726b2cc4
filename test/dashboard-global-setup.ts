// Vitest global setup: builds the dashboard (web/ → web/dist/, about a second) when it is missing
// or older than its sources, so a checkout's gateway serves it in tests without a package build.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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

export default async function setup(): Promise<void> {
  const sources = Math.max(newest(join(web, "src")), statSync(join(web, "index.html")).mtimeMs);
  if (builtAt() >= sources) return;
  // @ts-expect-error: a plain .mjs script without declarations
  const { buildDashboard } = await import("../scripts/build-dashboard.mjs");
  await buildDashboard();
}
