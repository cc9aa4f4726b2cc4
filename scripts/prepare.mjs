#!/usr/bin/env node
// npm's `prepare` lifecycle script: `npm ci` and `npm install` run it in a checkout, an install
// from git runs it, and so does `npm pack`. It builds the dashboard into web/dist/, so the
// README's first line, `npm ci && npx hookinbox start`, serves the dashboard at /.
//
// - web/dist newer than web/src: nothing to do (a second `npm install` costs nothing).
// - Vite not installed (devDependencies omitted): one line saying so, and the install goes on;
//   the gateway then answers / with 503 HOOKINBOX_DASHBOARD_NOT_BUILT and says so when it starts.
// - A build that fails (a broken web/src) fails the install, as a broken build should.
//
// `npm ci --ignore-scripts` runs none of this: `hookinbox start` prints the one line then.
import { buildDashboard, dashboardUpToDate } from "./build-dashboard.mjs";

/** Whether `error` is Node failing to find the `vite` package. */
function viteMissing(error) {
  return error?.code === "ERR_MODULE_NOT_FOUND" && /['"]vite['"]/.test(String(error.message));
}

if (!dashboardUpToDate()) {
  const started = Date.now();
  try {
    const outDir = await buildDashboard();
    process.stdout.write(
      `hookinbox: dashboard built into ${outDir} in ${Date.now() - started} ms\n`,
    );
  } catch (error) {
    if (!viteMissing(error)) throw error;
    process.stderr.write(
      "hookinbox: HOOKINBOX_DASHBOARD_NOT_BUILT: Vite is not installed (devDependencies omitted), so the dashboard was not built; run npm install && npm run build:dashboard to serve it at /\n",
    );
  }
}
