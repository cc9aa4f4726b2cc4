// The README's first line in a fresh clone: `npm ci && npx hookinbox start`, then the dashboard at
// / in real Chromium (the page, not 503 HOOKINBOX_DASHBOARD_NOT_BUILT). npm ci runs the package's
// `prepare` (scripts/prepare.mjs), which builds web/dist.
//
// The clone is of a commit: HEAD of this checkout (in CI a clean clone of main), or the commit
// HOOKINBOX_CLONE_REF names. Uncommitted changes are not in the clone, so they are not tested
// here; the test prints which commit it tested and how many tracked files differ from it.
//
// In CI the checkout itself is that fresh clone, and .ci/run's first step is its `npm ci`
// (HOOKINBOX_CI_INSTALLED=1 says so). Then the clone shares that install instead of running a
// second one: its node_modules and web/dist are hard links to what `npm ci` left in the checkout,
// and the test first checks that the checkout holds exactly the commit (no tracked change) and
// that `prepare` built web/dist there.
//
// Also: without web/dist (as after `npm ci --ignore-scripts`), `hookinbox start` says so on one
// line and / answers 503 with the code; without Vite, `prepare` prints one line and succeeds.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchChromium } from "../helpers/chromium.ts";
import { type GatewayProcess, spawnCommand, stopGroup } from "../helpers/gateway-process.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

const ref = process.env.HOOKINBOX_CLONE_REF ?? "HEAD";
let tmp: ReturnType<typeof tempDir>;
let clone: string;
let browser: Browser;
const gateways: GatewayProcess[] = [];

const git = (args: string[], cwd = repoRoot) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** `npx hookinbox start --port 0` in the clone, as a user types it (its own process group). */
async function npxStart(): Promise<GatewayProcess> {
  const gateway = await spawnCommand(
    clone,
    ["start", "--port", "0"],
    { HOME: process.env.HOME ?? "/root" },
    { command: ["npx", "--no-install", "hookinbox"], group: true },
  );
  gateways.push(gateway);
  return gateway;
}

beforeAll(() => {
  const chromiumError = inject("chromiumError");
  if (chromiumError) throw new Error(chromiumError);
  tmp = tempDir("hookinbox-clone-");
  clone = join(tmp.dir, "hookinbox");
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const changed = git(["status", "--porcelain", "--untracked-files=no"])
    .split("\n")
    .filter(Boolean);
  console.log(
    `testing a clone of ${commit} (${ref})${changed.length ? `; ${changed.length} tracked files with uncommitted changes are not in it` : ""}`,
  );
  git(["clone", "--quiet", "--no-checkout", repoRoot, clone], tmp.dir);
  git(["checkout", "--quiet", "--detach", commit], clone);
  const started = Date.now();
  if (process.env.HOOKINBOX_CI_INSTALLED === "1" && ref === "HEAD") {
    // .ci/run's `npm ci` in a clean clone of this very commit: share it.
    if (changed.length)
      throw new Error(`HOOKINBOX_CI_INSTALLED=1 but ${changed.length} tracked files changed`);
    if (!existsSync(join(repoRoot, "web/dist/index.html")))
      throw new Error("HOOKINBOX_CI_INSTALLED=1 but npm ci's prepare built no web/dist");
    // Hard links: removing or renaming in the clone (as the tests below do) leaves them whole.
    execFileSync("cp", ["-al", join(repoRoot, "node_modules"), join(clone, "node_modules")]);
    execFileSync("cp", ["-al", join(repoRoot, "web/dist"), join(clone, "web/dist")]);
    console.log(`shared .ci/run's npm ci (hard links): ${Date.now() - started} ms`);
    return;
  }
  const ci = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: clone,
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  if (ci.status !== 0) throw new Error(`npm ci failed (${ci.status}):\n${ci.stderr}`);
  console.log(`npm ci --prefer-offline in the fresh clone: ${Date.now() - started} ms`);
}, 900_000);

afterAll(async () => {
  await Promise.all(gateways.map(stopGroup));
  await browser?.close();
  // The clone's node_modules is large: removing it can take minutes on a loaded machine.
  tmp?.cleanup();
}, 600_000);

describe("a fresh clone", () => {
  it("serves the dashboard after exactly npm ci && npx hookinbox start (Chromium)", async () => {
    expect(existsSync(join(clone, "web/dist/index.html"))).toBe(true);
    const gateway = await npxStart();
    const banner = gateway.output().stderr;
    expect(banner).toContain(`  dashboard: ${gateway.url}/\n`);
    expect(banner).not.toContain("HOOKINBOX_DASHBOARD_NOT_BUILT");

    browser = await launchChromium();
    const page = await browser.newPage();
    const response = await page.goto(gateway.url);
    expect(response?.status()).toBe(200);
    // The page rendered: its sign-in form, then (with the token start wrote) the overview.
    await page.getByLabel("Admin token").waitFor();
    const token = readFileSync(join(clone, ".hookinbox/admin-token"), "utf8").trim();
    await page.getByLabel("Admin token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("total-received").waitFor();
    expect(await page.getByTestId("total-received").textContent()).toBe("0");
    expect(await page.locator("body").textContent()).not.toContain("HOOKINBOX_DASHBOARD_NOT_BUILT");
    await stopGroup(gateway);
  });

  it("says in one line when the dashboard is not built (npm ci --ignore-scripts) and answers 503", async () => {
    rmSync(join(clone, "web/dist"), { recursive: true, force: true });
    const gateway = await npxStart();
    const lines = gateway
      .output()
      .stderr.split("\n")
      .filter((line) => line.includes("HOOKINBOX_DASHBOARD_NOT_BUILT"));
    expect(lines).toEqual([
      `  dashboard: HOOKINBOX_DASHBOARD_NOT_BUILT: ${gateway.url}/ answers 503 until you run npm run build:dashboard (npm ci builds it, unless run with --ignore-scripts)`,
    ]);
    const page = await fetch(`${gateway.url}/`);
    expect(page.status).toBe(503);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe(
      "HOOKINBOX_DASHBOARD_NOT_BUILT",
    );
    await stopGroup(gateway);
  });

  it("lets the install finish with one line when Vite is missing (devDependencies omitted)", () => {
    const vite = join(clone, "node_modules/vite");
    renameSync(vite, `${vite}.away`);
    try {
      const prepare = spawnSync(process.execPath, ["scripts/prepare.mjs"], {
        cwd: clone,
        encoding: "utf8",
      });
      expect({ status: prepare.status, stdout: prepare.stdout }).toEqual({ status: 0, stdout: "" });
      expect(prepare.stderr).toBe(
        "hookinbox: HOOKINBOX_DASHBOARD_NOT_BUILT: Vite is not installed (devDependencies omitted), so the dashboard was not built; run npm install && npm run build:dashboard to serve it at /\n",
      );
      expect(existsSync(join(clone, "web/dist"))).toBe(false);
    } finally {
      renameSync(`${vite}.away`, vite);
    }
  });
});
