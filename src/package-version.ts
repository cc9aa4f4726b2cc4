import { readFileSync } from "node:fs";

let cached: string | undefined;

/**
 * The version in hookinbox's own package.json (the nearest one named hookinbox above this file),
 * or "unknown"; read once.
 *
 * @example
 * ```ts
 * packageVersion(); // "0.1.0"
 * ```
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  cached = "unknown";
  for (const up of ["../package.json", "../../package.json", "../../../package.json"]) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "hookinbox" && manifest.version) {
        cached = manifest.version;
        break;
      }
    } catch {
      // not there: look one folder up (src/ from a checkout, dist/esm/ when built)
    }
  }
  return cached;
}
