import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { dashboardDir } from "../admin/dashboard-assets.ts";
import { resolveConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { startGateway } from "../gateway/start-gateway.ts";
import { startWorkerProcess } from "../gateway/start-worker-process.ts";
import { createLogger, type Logger } from "../log.ts";
import { adminTokenPath, writeAdminTokenFile } from "./admin-token-file.ts";
import { type CliContext, loadRawConfig } from "./context.ts";

/**
 * `hookinbox start [--config F] [--port N] [--host H] [--role all|ingest|worker]`: runs the
 * gateway (ingest, admin API and in-process workers), only ingest, or only a worker, until
 * SIGINT/SIGTERM.
 *
 * @example
 * ```ts
 * await startCommand(ctx, ["--port", "8080"]);
 * ```
 */
export async function startCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      port: { type: "string", short: "p" },
      host: { type: "string" },
      role: { type: "string" },
    },
    strict: true,
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw hookinboxError("HOOKINBOX_USAGE", "--port takes a number from 0 to 65535");
  }
  const role = values.role ?? "all";
  if (role !== "all" && role !== "ingest" && role !== "worker") {
    throw hookinboxError("HOOKINBOX_USAGE", "--role is all (default), ingest or worker");
  }
  const raw = await loadRawConfig(ctx, values.config);
  const resolved = resolveConfig(raw.config, ctx.env);
  const generatedToken =
    resolved.admin.token === null ? randomBytes(24).toString("base64url") : null;
  const logger = createLogger({ level: resolved.log.level });
  guardUnhandledRejections(logger);
  if (role === "worker") {
    const processOnly = await startWorkerProcess(raw.config, {
      env: ctx.env,
      logger,
      sqliteWriter: "thread",
    });
    ctx.stderr.write(
      `hookinbox worker ${processOnly.worker.id} running (store: ${processOnly.inbox.store.kind}, handlers: ${[...resolved.handlers.keys()].join(", ") || "none"})\n`,
    );
    await untilSignal(logger, () => processOnly.close());
    return 0;
  }
  const gateway = await startGateway(raw.config, {
    role,
    sqliteWriter: "thread",
    env: ctx.env,
    logger,
    host: values.host,
    port,
    ...(generatedToken ? { adminToken: generatedToken } : {}),
  });
  const lines = [
    `hookinbox listening on ${gateway.url} (role: ${role}, store: ${gateway.inbox.store.kind}${raw.path ? `, config: ${raw.path}` : ", no config file: embedded default"})`,
    `  sources: ${[...resolved.sources.keys()].map((s) => `${gateway.url}/webhooks/${s}`).join(", ") || "(none)"}`,
  ];
  lines.push(dashboardLine(gateway.url));
  if (gateway.metrics) lines.push(`  metrics: ${gateway.metrics.url}`);
  if (gateway.inbox.audit) {
    lines.push(
      `  audit log: tree heads signed with Ed25519 key ${gateway.inbox.audit.publicKey()}`,
    );
  }
  let removeTokenFile: () => void = () => undefined;
  if (generatedToken) {
    // Never printed: a terminal's scrollback and a supervisor's log are logs too.
    const tokenFile = adminTokenPath(resolved.store, ctx.cwd);
    removeTokenFile = writeAdminTokenFile(tokenFile, generatedToken);
    lines.push(
      `  admin token (generated for this run; set HOOKINBOX_ADMIN_TOKEN to choose one): in ${tokenFile} (mode 0600), read it with: cat ${tokenFile}`,
      `  try: curl -H "Authorization: Bearer $(cat ${tokenFile})" ${gateway.url}/api/events`,
    );
  }
  if (raw.demoSecret) {
    lines.push(
      `  demo source "demo" (Standard Webhooks), secret: ${raw.demoSecret}`,
      `  send a signed test event:  npx hookinbox send demo --url ${gateway.url}`,
      "  then list what arrived:    npx hookinbox events list",
    );
  }
  ctx.stderr.write(`${lines.join("\n")}\n`);
  await untilSignal(logger, () => gateway.close().finally(removeTokenFile));
  return 0;
}

/**
 * The banner's dashboard line: where it is, or (its assets missing, as after `npm ci
 * --ignore-scripts` in a checkout) the one line that says so and what to do.
 */
function dashboardLine(url: string): string {
  if (dashboardDir() !== null) return `  dashboard: ${url}/`;
  const error = hookinboxError("HOOKINBOX_DASHBOARD_NOT_BUILT");
  return `  dashboard: ${error.code}: ${url}/ answers 503 until you run npm run build:dashboard (npm ci builds it, unless run with --ignore-scripts)`;
}

/**
 * A rejection nobody handled (a bug in a request path or a handler's stray promise) is logged and
 * survived: one request must never take ingest and the worker down with it.
 */
function guardUnhandledRejections(logger: Logger): void {
  process.on("unhandledRejection", (reason) => {
    const err =
      reason instanceof Error
        ? { name: reason.name, message: reason.message, stack: reason.stack }
        : { message: String(reason) };
    logger.error(
      { err, code: "HOOKINBOX_INTERNAL_ERROR" },
      "unhandled rejection (process kept running)",
    );
  });
}

/** Waits for SIGINT or SIGTERM, then runs the graceful `close`. */
async function untilSignal(logger: Logger, close: () => Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, "shutting down");
      close().then(resolve, resolve);
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  logger.flush();
}
