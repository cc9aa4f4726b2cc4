// Vitest global setup: builds the dashboard (web/ → web/dist/, about a second) when it is missing
// or older than its sources, so a checkout's gateway serves it in tests without a package build;
// and installs Debian's Chromium for the browser tests when it is missing (as root). When that
// cannot be done, the browser tests fail with the one-line reason (never a silent skip).
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain .mjs script without declarations
import { buildDashboard, dashboardUpToDate } from "../scripts/build-dashboard.mjs";
import { ensureChromium } from "./helpers/chromium.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Why Chromium is unavailable ("" when it is installed). */
    chromiumError: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  // vitest runs a global setup once for the root project and again for each project that
  // extends it (vitest.config.ts has three): the root's run serves them all (a project's tests
  // see what the root provided).
  if (!project.isRootProject()) return;
  try {
    ensureChromium();
    project.provide("chromiumError", "");
  } catch (error) {
    project.provide("chromiumError", (error as Error).message);
  }
  if (!dashboardUpToDate()) await buildDashboard();
}
