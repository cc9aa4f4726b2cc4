import { z } from "zod";
import { formatIssues } from "../config/format-issues.ts";
import { loadConfigFile, resolveStoreUrl } from "../config/index.ts";
import { destinationName, destinationSchema, runbooksSchema } from "../config/schema.ts";
import { hookinboxError } from "../errors.ts";
import type { ConfiguredDestination } from "../forward/destination-admin.ts";
import { compileRunbooks, type Runbooks } from "../operations/runbook-lookup.ts";
import { openStore } from "../store/open-store.ts";
import type { Store } from "../store/types.ts";
import { demoConfig } from "./demo-source.ts";
import { assertSchemaCurrent } from "./schema-check.ts";
import { type TerminalOutput, terminalOutput } from "./terminal.ts";

/** Where the CLI runs (relative store paths resolve against the process cwd), its environment and its raw output streams. */
export interface CliStreams {
  readonly cwd: string;
  readonly env: Record<string, string | undefined>;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/**
 * What every command shares: where it runs, its environment and its output, which escapes
 * control characters (TerminalOutput is the only way a command writes).
 */
export interface CliContext {
  readonly cwd: string;
  readonly env: Record<string, string | undefined>;
  readonly stdout: TerminalOutput;
  readonly stderr: TerminalOutput;
}

/**
 * The context commands run in, its streams wrapped so that nothing written reaches the terminal
 * with raw control characters.
 *
 * @example
 * ```ts
 * const ctx = cliContext({ cwd, env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
export function cliContext(streams: CliStreams): CliContext {
  return {
    cwd: streams.cwd,
    env: streams.env,
    stdout: terminalOutput(streams.stdout),
    stderr: terminalOutput(streams.stderr),
  };
}

/**
 * The raw config for a command: the file given by `--config`, the one found in cwd, or the
 * embedded demo default.
 *
 * @example
 * ```ts
 * const { config, path } = await loadRawConfig(ctx, values.config);
 * ```
 */
export async function loadRawConfig(
  ctx: CliContext,
  path: string | undefined,
): Promise<{ config: unknown; path: string | null; demoSecret: string | null }> {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path });
  if (loaded) return { config: loaded.config, path: loaded.path, demoSecret: null };
  const demo = demoConfig(ctx.cwd);
  return { config: demo.config, path: null, demoSecret: demo.secret };
}

/**
 * Opens the configured store: migrated first (commands that write), or, with `readOnly`, only
 * after checking its schema is current (HOOKINBOX_SCHEMA_BEHIND otherwise; nothing is created
 * or migrated).
 *
 * @example
 * ```ts
 * const store = await openConfiguredStore(ctx, values.config);
 * const reader = await openConfiguredStore(ctx, values.config, { readOnly: true });
 * ```
 */
export async function openConfiguredStore(
  ctx: CliContext,
  configPath: string | undefined,
  options: { readonly readOnly?: boolean } = {},
): Promise<Store> {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const url = resolveStoreUrl(loaded?.config, ctx.env);
  if (options.readOnly) {
    await assertSchemaCurrent(url);
    return openStore(url);
  }
  const store = openStore(url);
  await store.migrate();
  return store;
}

/**
 * The names of the config's sources (no secrets needed), for dedup-key search across them.
 *
 * @example
 * ```ts
 * await loadSourceNames(ctx, values.config); // ["stripe", "github"]
 * ```
 */
export async function loadSourceNames(
  ctx: CliContext,
  configPath: string | undefined,
): Promise<string[]> {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const sources = (loaded?.config as { sources?: unknown } | undefined)?.sources;
  return sources && typeof sources === "object" ? Object.keys(sources) : [];
}

/**
 * One section of the config file, checked against its schema alone (so no secret of another
 * section must be set); an invalid section throws HOOKINBOX_CONFIG_INVALID naming its fields.
 */
async function loadConfigSection<S extends z.ZodType>(
  ctx: CliContext,
  configPath: string | undefined,
  section: string,
  schema: S,
): Promise<z.output<S>> {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const raw = (loaded?.config as Record<string, unknown> | undefined)?.[section];
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const lines = formatIssues(schema, raw, parsed.error.issues).map((l) => `${section}.${l}`);
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", lines.join("; "));
  }
  return parsed.data;
}

/**
 * The config's `runbooks` alone (no secrets needed), for commands that show them beside failures.
 *
 * @example
 * ```ts
 * const runbooks = await loadRunbooks(ctx, values.config);
 * runbooks.for("stripe", "invoice.paid")?.owner;
 * ```
 */
export async function loadRunbooks(
  ctx: CliContext,
  configPath: string | undefined,
): Promise<Runbooks> {
  return compileRunbooks(
    await loadConfigSection(ctx, configPath, "runbooks", runbooksSchema.optional()),
  );
}

/**
 * The config's destinations, names and URLs only (no secret is resolved, so none must be set).
 *
 * @example
 * ```ts
 * const configured = await loadDestinations(ctx, values.config);
 * ```
 */
export async function loadDestinations(
  ctx: CliContext,
  configPath: string | undefined,
): Promise<ConfiguredDestination[]> {
  const schema = z.record(destinationName, destinationSchema).optional();
  const destinations = await loadConfigSection(ctx, configPath, "destinations", schema);
  return Object.entries(destinations ?? {}).map(([name, d]) => ({
    name,
    type: d.type ?? "http",
    url: d.url,
  }));
}
