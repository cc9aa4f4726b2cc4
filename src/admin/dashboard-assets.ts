import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hookinboxError } from "../errors.ts";
import { errorResponse, type InboxResponse } from "../ingest/request.ts";

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

const pageHeaders = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

// Nothing outside this origin: no CDN, no external fonts, no framing.
const contentSecurityPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * Where the built dashboard is: `dist/dashboard/` in the package (beside `dist/esm` and
 * `dist/cjs`), `web/dist/` in a checkout (`npm run build:dashboard`). Null when neither exists.
 *
 * @example
 * ```ts
 * dashboardDir(); // "/app/node_modules/hookinbox/dist/dashboard"
 * ```
 */
export function dashboardDir(): string | null {
  for (const relative of ["../../dashboard/", "../../web/dist/"]) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  return null;
}

interface Asset {
  readonly type: string;
  readonly body: string;
}

let loaded: { dir: string; files: Map<string, Asset> } | null = null;

/** Reads the built files once (index.html and assets/*): the paths served are only these. */
function assets(): Map<string, Asset> | null {
  const dir = dashboardDir();
  if (dir === null) return null;
  if (loaded?.dir === dir) return loaded.files;
  const files = new Map<string, Asset>();
  const add = (path: string, file: string) => {
    const type = contentTypes[extname(file)];
    if (type) files.set(path, { type, body: readFileSync(file, "utf8") });
  };
  add("/", join(dir, "index.html"));
  const assetDir = join(dir, "assets");
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) add(`/assets/${name}`, join(assetDir, name));
  }
  loaded = { dir, files };
  return files;
}

/**
 * Whether a path belongs to the dashboard: `/` (the page) and `/assets/…` (its hashed files).
 * Webhook routes, `/healthz`, `/readyz` and `/api/…` never do.
 *
 * @example
 * ```ts
 * isDashboardPath("/assets/index-3f2a1c.js"); // true
 * ```
 */
export function isDashboardPath(pathname: string): boolean {
  return pathname === "/" || pathname === "/index.html" || pathname.startsWith("/assets/");
}

/**
 * Answers a dashboard path: the page (`Cache-Control: no-cache`, a strict CSP) or a hashed
 * asset (`immutable`, a year), with its content type; 404 for any other file, and 503
 * HOOKINBOX_DASHBOARD_NOT_BUILT when the assets are missing. The page holds no data: every
 * figure comes from `/api/…`, which needs the session.
 *
 * @example
 * ```ts
 * const response = serveDashboard("/");
 * response.headers["content-type"]; // "text/html; charset=utf-8"
 * ```
 */
export function serveDashboard(pathname: string): InboxResponse {
  const files = assets();
  if (files === null) {
    const error = hookinboxError("HOOKINBOX_DASHBOARD_NOT_BUILT");
    return errorResponse(error.status, error.code, error.message);
  }
  const asset = files.get(pathname === "/index.html" ? "/" : pathname);
  if (!asset) {
    const error = hookinboxError("HOOKINBOX_ROUTE_NOT_FOUND");
    return errorResponse(error.status, error.code, error.message);
  }
  const page = !pathname.startsWith("/assets/");
  return {
    status: 200,
    headers: {
      "content-type": asset.type,
      "cache-control": page ? "no-cache" : "public, max-age=31536000, immutable",
      ...pageHeaders,
      ...(page ? { "content-security-policy": contentSecurityPolicy } : {}),
    },
    body: asset.body,
  };
}
