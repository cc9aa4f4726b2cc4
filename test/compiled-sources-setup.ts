// Vitest global setup: compiles src/ and test/ once for the child processes this run starts
// (bin/compiled-sources.mjs), so each starts without a TypeScript loader. A failed build only
// costs speed: children then run the sources through tsx, as without it.
import type { TestProject } from "vitest/node";
import { compileSources } from "../bin/compiled-sources.mjs";

export default async function setup(project: TestProject): Promise<void> {
  // vitest runs a global setup once for the root project and again for each project that
  // extends it (vitest.config.ts has three): the root's run serves them all (a project's tests
  // see what the root provided).
  if (!project.isRootProject()) return;
  const started = performance.now();
  try {
    const modules = await compileSources();
    console.log(
      `compiled ${modules} modules for child processes in ${Math.round(performance.now() - started)} ms`,
    );
  } catch (error) {
    console.warn(
      `child processes will load sources through tsx: compiling them failed (${(error as Error).message.split("\n")[0]})`,
    );
  }
}
