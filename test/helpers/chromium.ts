import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (the `chromium` package); playwright-core drives it, never downloads one. */
export const chromiumPath = "/usr/bin/chromium";

/**
 * Makes sure Debian's Chromium is installed: `apt-get install -y chromium` when missing and
 * running as root; otherwise one line saying what to do. Never skips.
 */
export function ensureChromium(): string {
  if (existsSync(chromiumPath)) return chromiumPath;
  const fail = (why: string) =>
    new Error(
      `Chromium is missing at ${chromiumPath} (${why}): run \`apt-get update && apt-get install -y chromium\` as root, then run the tests again`,
    );
  if (process.getuid?.() !== 0) throw fail("not root, so the test setup cannot install it");
  try {
    execFileSync("apt-get", ["update"], { stdio: "ignore", timeout: 300_000 });
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], {
      stdio: "ignore",
      timeout: 600_000,
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } catch (error) {
    throw fail(`apt-get failed: ${(error as Error).message.split("\n")[0]}`);
  }
  if (!existsSync(chromiumPath)) throw fail("apt-get did not install it");
  return chromiumPath;
}

/** One headless Chromium for a test file (sandbox off: tests run as root in CI). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}
