import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Child processes and SQLite files: forks isolate each test file in its own process.
    pool: "forks",
    reporters: ["default", "./test/summary-reporter.ts"],
    globalSetup: ["./test/postgres-global-setup.ts"],
  },
});
