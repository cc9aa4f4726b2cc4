import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

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
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Child processes and SQLite files: forks isolate each test file in its own process.
    pool: "forks",
    reporters: ["default", "./test/summary-reporter.ts"],
    globalSetup: ["./test/postgres-global-setup.ts", "./test/dashboard-global-setup.ts"],
  },
});
