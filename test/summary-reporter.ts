import { mkdirSync, writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest test files the closing lines name. */
const slowestShown = 25;

/**
 * Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, that CI reads in any
 * language, after vitest's own summary; before it, the slowest test files with their durations
 * and each project's file time, so the CI log tells where its minutes go. Every file's duration
 * is also written to test-results/file-durations.json.
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
    const files = testModules
      .map((module) => ({
        file: module.relativeModuleId,
        project: module.project.name,
        ms: Math.round(module.diagnostic().duration),
      }))
      .sort((a, b) => b.ms - a.ms);
    mkdirSync("test-results", { recursive: true });
    writeFileSync("test-results/file-durations.json", `${JSON.stringify(files, null, 1)}\n`);
    process.stdout.write(`\nslowest test files:\n`);
    for (const { file, project, ms } of files.slice(0, slowestShown)) {
      process.stdout.write(
        `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${project.padEnd(9)}  ${file}\n`,
      );
    }
    const projects = new Map<string, { files: number; ms: number }>();
    for (const { project, ms } of files) {
      const total = projects.get(project) ?? { files: 0, ms: 0 };
      projects.set(project, { files: total.files + 1, ms: total.ms + ms });
    }
    for (const [project, total] of projects)
      process.stdout.write(
        `  ${project}: ${total.files} files, ${(total.ms / 1000).toFixed(0)} s of file time\n`,
      );
    process.stdout.write(
      `\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
    );
  }
}
