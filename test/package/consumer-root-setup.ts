// Vitest global setup: one folder per test run for the consumer projects of test/package/
// (consumer-root.ts installs the packed tarball and the frameworks there once, for every file
// that needs them), removed when the run ends.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's consumer folder (installed by the first test file that asks for it). */
    consumerRootDir: string;
  }
}

export default function setup(project: TestProject): (() => void) | undefined {
  // vitest runs a global setup once for the root project and again for each project that
  // extends it (vitest.config.ts has three): the root's run serves them all (a project's tests
  // see what the root provided).
  if (!project.isRootProject()) return;
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-consumers-"));
  project.provide("consumerRootDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
