import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { resolveConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { startGateway } from "../gateway/start-gateway.ts";
import { createLogger } from "../log.ts";
import { type CliContext, loadRawConfig } from "./context.ts";

/**
 * `hookinbox start [--config F] [--port N] [--host H]`: runs the gateway until SIGINT/SIGTERM.
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
    },
    strict: true,
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw hookinboxError("HOOKINBOX_USAGE", "--port takes a number from 0 to 65535");
  }
  const raw = await loadRawConfig(ctx, values.config);
  const resolved = resolveConfig(raw.config, ctx.env);
  const generatedToken =
    resolved.admin.token === null ? randomBytes(24).toString("base64url") : null;
  const logger = createLogger({ level: resolved.log.level });
  const gateway = await startGateway(raw.config, {
    env: ctx.env,
    logger,
    host: values.host,
    port,
    ...(generatedToken ? { adminToken: generatedToken } : {}),
  });
  const lines = [
    `hookinbox listening on ${gateway.url} (store: ${gateway.inbox.store.kind}${raw.path ? `, config: ${raw.path}` : ", no config file: embedded default"})`,
    `  sources: ${[...resolved.sources.keys()].map((s) => `${gateway.url}/webhooks/${s}`).join(", ") || "(none)"}`,
  ];
  if (generatedToken) {
    lines.push(
      `  admin token (generated for this run; set HOOKINBOX_ADMIN_TOKEN to choose one): ${generatedToken}`,
    );
    lines.push(
      `  try: curl -H "Authorization: Bearer ${generatedToken}" ${gateway.url}/api/events`,
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
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, "shutting down");
      gateway.close().then(resolve, resolve);
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  logger.flush();
  return 0;
}
