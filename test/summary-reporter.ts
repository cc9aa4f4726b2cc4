import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest test files the closing lines name. */
const slowestShown = 25;

/**
 * Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, that CI reads in any
 * language, after vitest's own summary; before it, the slowest test files with their durations,
 * so the CI log tells where its minutes go.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      if (module.state() === "failed" && module.children.size === 0) failed++;
    }
    const slowest = testModules
      .map((module) => ({ file: module.relativeModuleId, ms: module.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, slowestShown);
    process.stdout.write(`\nslowest test files:\n`);
    for (const { file, ms } of slowest) {
      process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`);
    }
    process.stdout.write(
      `\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
    );
  }
}
