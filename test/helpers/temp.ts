import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh temp folder, removed by the returned cleanup. */
export function tempDir(prefix = "hookinbox-test-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Absolute path of the repository root. */
export const repoRoot = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
