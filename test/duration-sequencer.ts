import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Where the committed file durations live (a copy of a CI run's test-results/file-durations.json). */
const durationsFile = new URL("./file-durations.json", import.meta.url);

/**
 * Orders each project's files longest first by the committed durations of an earlier CI run, so
 * that a long file never starts last and leaves one worker alone at the end. A clean clone has no
 * vitest cache, and vitest's own order would then be by file size. Files with no recorded
 * duration (new ones) go first. Groups (`sequence.groupOrder`) and projects keep vitest's order.
 */
export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = new Map<string, number>();
    if (existsSync(durationsFile)) {
      const rows = JSON.parse(readFileSync(durationsFile, "utf8")) as Array<{
        file: string;
        ms: number;
      }>;
      for (const { file, ms } of rows) recorded.set(file, ms);
    }
    const root = this.ctx.config.root;
    const duration = (spec: TestSpecification) =>
      recorded.get(relative(root, spec.moduleId)) ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const longer = duration(b) - duration(a);
      return Number.isNaN(longer) ? 0 : longer;
    });
  }
}
