import { parseArgs } from "node:util";
import { resolveConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { type CliContext, loadRawConfig } from "./context.ts";
import { sendSampleCommand, sendSampleOptions } from "./send-sample.ts";
import { signTestEvent } from "./sign-test-event.ts";

/**
 * `hookinbox send <source> [--url http://127.0.0.1:8080] [--type demo.ping]`: signs a test
 * event with the source's first secret and posts it, printing the status and response.
 * With `--to URL`, the first argument is a provider instead and any receiver is the target
 * (see {@link sendSampleCommand}).
 *
 * @example
 * ```ts
 * await sendCommand(ctx, ["demo", "--url", "http://127.0.0.1:8080"]);
 * ```
 */
export async function sendCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: sendSampleOptions,
  });
  const sourceName = positionals[0];
  if (!sourceName)
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "`hookinbox send <source>` needs a source name (or `hookinbox send <provider> --to URL`)",
    );
  if (values.to !== undefined) return sendSampleCommand(ctx, sourceName, values);
  const raw = await loadRawConfig(ctx, values.config);
  const config = resolveConfig(raw.config, ctx.env);
  const source = config.sources.get(sourceName);
  if (!source) throw hookinboxError("HOOKINBOX_SOURCE_NOT_FOUND", sourceName);
  const base = values.url ?? `http://${config.http.host}:${config.http.port}`;
  const test = signTestEvent(
    source,
    Date.now(),
    values.type ?? (source.provider === "github" ? "ping" : "demo.ping"),
  );
  const response = await fetch(`${base}/webhooks/${encodeURIComponent(sourceName)}`, {
    method: "POST",
    headers: test.headers,
    body: test.body,
  });
  ctx.stdout.write(`${response.status} ${await response.text()}\n`);
  return response.ok ? 0 : 1;
}
