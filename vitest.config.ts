import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import DurationSequencer from "./test/duration-sequencer.ts";

/**
 * Test files that measure against the wall clock (floods and slow-body attacks, breaker windows,
 * time budgets and deadlines, throughput shares between processes): they run one at a time,
 * after every other file, so that no timing-bound assertion races a neighbour for the two cores.
 */
const exclusiveFiles = [
  "test/ingest/slow-body-attack.test.ts",
  "test/ingest/slow-bodies.test.ts",
  "test/ingest/silent-sockets.test.ts",
  "test/ingest/hostile-requests.test.ts",
  "test/processing/process-available.test.ts",
  "test/processing/process-available-processes.test.ts",
  "test/processing/handler-timeout.test.ts",
  "test/forward/breaker-goals.test.ts",
  "test/scale/audit-cluster.test.ts",
  "test/scale/audit-sequencer.test.ts",
  "test/scale/connection-cut.test.ts",
];

/**
 * Test files that load the machine but assert no time (builds and installs of the packed
 * package, browsers, SIGKILL fuzzing, several processes on one schema, 200,000-row retention):
 * after the shared files, two at a time, so that one's install or build overlaps the other's
 * waits for leases and restarts, and neither slows the shared files' waits for a condition.
 */
const pairedFiles = [
  "test/package/**/*.test.ts",
  "test/dashboard/**/*.browser.test.ts",
  "test/ingest/crash-sigkill.test.ts",
  "test/processing/crash-fuzz.test.ts",
  "test/forward/crash.test.ts",
  "test/scale/worker-sigkill.test.ts",
  "test/scale/handler-lease-sigkill.test.ts",
  "test/scale/three-gateways.test.ts",
  "test/scale/listen-notify.test.ts",
  "test/scale/retention-scale.test.ts",
];

/**
 * Files that mostly wait (child processes, loopback HTTP, PostgreSQL round trips) run two at a
 * time on a two-core machine (vitest's default there is one at a time). Three at a time ran them
 * 2.2 files deep, but their waits for a condition (10 s then) ran out once the machine was loaded.
 */
const sharedWorkers = 2;

export default defineConfig({
  // Examples import "hookinbox" as users do; in this checkout that name means the sources (as in
  // tsconfig.json's paths), so tests need no build of dist/.
  resolve: {
    alias: [
      {
        find: /^hookinbox$/,
        replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Child processes and SQLite files: forks run tests in child processes, not worker threads
    // (the paired and exclusive files each in a process of their own).
    pool: "forks",
    // Longest files first, by an earlier CI run's durations (a clean clone has no vitest cache).
    sequence: { sequencer: DurationSequencer },
    reporters: ["default", "./test/summary-reporter.ts"],
    // Runs the helpers' cleanups after each test (the helpers' own module-level hooks would
    // not run for a worker's second test file, see below).
    setupFiles: ["./test/cleanup-setup.ts"],
    globalSetup: [
      "./test/compiled-sources-setup.ts",
      "./test/postgres-global-setup.ts",
      "./test/dashboard-global-setup.ts",
      "./test/package/consumer-root-setup.ts",
    ],
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...pairedFiles, ...exclusiveFiles],
          maxWorkers: sharedWorkers,
          // A worker runs its files one after another on one module graph: each of the two
          // workers imports the sources and their dependencies once, not once per file. In the
          // shared files that cut vitest's import time from 126 s to 23 s and the group's wall
          // time from 535 s to 371 s on an idle machine. Test files stay independent: module-level
          // state of src/ is per store or per inbox, and helpers register their cleanups through
          // the setup file.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "paired",
          include: pairedFiles,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "exclusive",
          include: exclusiveFiles,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
