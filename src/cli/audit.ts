import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { auditKeyFile, loadAuditKey } from "../audit/audit-key.ts";
import { type IdentityRules, type LogCoverage, verifyLog } from "../audit/log.ts";
import { sequenceAll } from "../audit/sequencer.ts";
import {
  parseTreeHeadJson,
  publicKeyFromHex,
  publicKeyHex,
  verifyTreeHead,
} from "../audit/tree-head.ts";
import { treeHeads } from "../audit/tree-heads.ts";
import { loadConfigFile, resolveStoreUrl } from "../config/index.ts";
import { resolveConfig } from "../config/resolve.ts";
import { resolveRetention } from "../config/resolve-retention.ts";
import { resolveSecret } from "../config/secrets.ts";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import { proveConsistency, proveEvent, signHead } from "../operations/audit.ts";
import type { StoredTreeHead } from "../store/audit-types.ts";
import type { Store } from "../store/types.ts";
import type { CommandHost } from "./command-host.ts";
import { type CliContext, loadRawConfig, openConfiguredStore } from "./context.ts";
import { jsonForTerminal } from "./terminal.ts";

/** The signing key as the gateway finds it: audit.key, HOOKINBOX_AUDIT_KEY, else the key file. */
async function signingKey(ctx: CliContext, configPath: string | undefined) {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const audit = (loaded?.config as { audit?: { key?: string | { env: string } } } | undefined)
    ?.audit;
  const configured =
    audit?.key !== undefined
      ? resolveSecret(audit.key, 0, "audit.key", ctx.env).value
      : ctx.env.HOOKINBOX_AUDIT_KEY || null;
  const file = auditKeyFile(resolveStoreUrl(loaded?.config, ctx.env), ctx.cwd);
  return loadAuditKey(configured, file).key;
}

/** `retention.events` and `.receipts` from the config file (null: off): how old a missing row may be. */
async function configuredRetentionMs(ctx: CliContext, configPath: string | undefined) {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const config = loaded?.config as
    | {
        retention?: Parameters<typeof resolveRetention>[0];
        http?: { rejectedRetention?: Parameters<typeof resolveRetention>[1] };
      }
    | undefined;
  const { eventsMs, receiptsMs } = resolveRetention(
    config?.retention,
    config?.http?.rejectedRetention,
  );
  return { eventsMs, receiptsMs };
}

/**
 * The sources' identity rules from the current config, for verify to re-derive each event's
 * derived columns; null (with the reason) when the config does not resolve here (a secret's
 * variable unset…): verify then checks leaves only.
 */
async function identityRules(
  ctx: CliContext,
  configPath: string | undefined,
): Promise<{ rules: IdentityRules | null; reason: string | null }> {
  const { config } = await loadRawConfig(ctx, configPath);
  try {
    const { sources } = resolveConfig(config, ctx.env);
    return { rules: (source) => sources.get(source)?.identity ?? null, reason: null };
  } catch (error) {
    const code = isHookinboxError(error) ? error.code : "HOOKINBOX_CONFIG_INVALID";
    return { rules: null, reason: `the config does not resolve here (${code})` };
  }
}

/** Leaf ranges as `3-5, 9` (inclusive). */
const rangeList = (ranges: ReadonlyArray<{ start: number; end: number }>) =>
  ranges.map((r) => (r.end - r.start === 1 ? `${r.start}` : `${r.start}-${r.end - 1}`)).join(", ");

/** The lines verify prints about what it covered only in part. */
function coverageLines(coverage: LogCoverage): string[] {
  const lines: string[] = [];
  for (const [source, count] of coverage.notConfigured) {
    lines.push(
      `cannot re-derive: source ${source} not configured (${count} events: their leaves are checked, their type, ordering key, occurred-at, version and dedup key are not)`,
    );
  }
  const { retention } = coverage;
  if (retention.leaves.length > 0) {
    lines.push(
      `deleted by retention (recorded in leaves ${retention.recordedIn.join(", ")}): leaves ${rangeList(retention.leaves)}`,
    );
  }
  if (retention.unrecorded.length > 0) {
    lines.push(
      `deleted before retention was recorded in the log (anchor only): leaves ${rangeList(retention.unrecorded)}`,
    );
  }
  if (coverage.digestOnly.length > 0) {
    lines.push(
      `covered only by their digests (payload purged by retention, not re-derived): leaves ${rangeList(coverage.digestOnly)}`,
    );
  }
  return lines;
}

/** The key heads must verify with: `--key HEX`, else the configured signing key's public half. */
async function trustedKey(ctx: CliContext, values: { key?: string; config?: string }) {
  return values.key !== undefined
    ? publicKeyFromHex(values.key)
    : publicKeyFromHex(publicKeyHex(await signingKey(ctx, values.config)));
}

/** The trusted head: `--head FILE`, else the newest stored head; its signature checked. */
async function trustedHead(
  ctx: CliContext,
  store: Store,
  values: { head?: string; key?: string; config?: string },
): Promise<{ head: StoredTreeHead; from: string }> {
  if (values.head === undefined) {
    const stored = await store.latestTreeHead();
    if (!stored) {
      throw hookinboxError(
        "HOOKINBOX_AUDIT_HEAD_INVALID",
        "no head is stored yet; pass --head FILE (a head saved with `hookinbox audit head`)",
      );
    }
    if (!verifyTreeHead(stored, await trustedKey(ctx, values))) {
      throw hookinboxError(
        "HOOKINBOX_AUDIT_HEAD_INVALID",
        `the newest stored head does not verify with ${values.key ?? "the configured key"}`,
      );
    }
    return {
      head: stored,
      from: "the newest head stored in the database (pass --head to trust a saved one)",
    };
  }
  let parsed: StoredTreeHead | null = null;
  try {
    parsed = parseTreeHeadJson(JSON.parse(await readFile(values.head, "utf8")));
  } catch {
    parsed = null;
  }
  if (!parsed)
    throw hookinboxError("HOOKINBOX_AUDIT_HEAD_INVALID", `${values.head} is not a tree head`);
  if (!verifyTreeHead(parsed, await trustedKey(ctx, values))) {
    throw hookinboxError(
      "HOOKINBOX_AUDIT_HEAD_INVALID",
      `${values.head}: the signature does not verify with ${values.key ?? "the configured key"}`,
    );
  }
  return { head: parsed, from: values.head };
}

/**
 * Appends the leaves accepted but not sequenced yet (PostgreSQL), so that verify sees every
 * accepted event in the tree; when the store refuses (a read-only role) it says how many are
 * pending, since verify then fails on the first as an event without a leaf.
 */
async function sequencePending(ctx: CliContext, store: Store): Promise<void> {
  try {
    await sequenceAll(store);
  } catch (error) {
    const pending = await store.auditPendingCount().catch(() => null);
    ctx.stderr.write(
      `could not sequence pending leaves (${(error as Error).message}); ${pending ?? "some"} accepted events are not in the tree yet, and verify fails on the first as having no leaf\n`,
    );
  }
}

/** Rechecks every stored event and leaf against a trusted head; exit 1 names the first bad one. */
async function verifyCommand(
  ctx: CliContext,
  values: { head?: string; key?: string; config?: string },
): Promise<number> {
  const store = await openConfiguredStore(ctx, values.config, { readOnly: true });
  try {
    await sequencePending(ctx, store);
    const { head, from } = await trustedHead(ctx, store, values);
    const { rules, reason } = await identityRules(ctx, values.config);
    if (reason) ctx.stderr.write(`cannot re-derive: ${reason}; checking leaves only\n`);
    const result = await verifyLog(store, head, {
      ...(rules ? { identities: rules } : {}),
      expiry: {
        trustedKey: await trustedKey(ctx, values),
        ...(await configuredRetentionMs(ctx, values.config)),
        now: Date.now(),
      },
      onProgress: (leaves) => ctx.stderr.write(`\rchecked ${leaves} leaves`),
    });
    ctx.stderr.write("\n");
    if (!result.ok && result.defect) {
      const { seq, eventId, reason } = result.defect;
      const where = [seq === null ? null : `leaf ${seq}`, eventId].filter(Boolean).join(" ");
      throw hookinboxError(
        "HOOKINBOX_AUDIT_VERIFY_FAILED",
        `${where ? `${where}: ` : ""}${reason}`,
      );
    }
    ctx.stdout.write(
      `ok: ${result.leaves} leaves match their events; the first ${head.size} hash to root ${head.root.toString("hex")} (trusted head: ${from})\n`,
    );
    for (const line of coverageLines(result.coverage)) ctx.stdout.write(`${line}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

const pretty = (value: unknown) => jsonForTerminal(value, 2);

/**
 * `hookinbox audit head|prove|consistency|verify`: sign a tree head now (JSON, to save and
 * compare later), print an event's inclusion proof or a consistency proof, or recheck every
 * stored event and leaf against a trusted head, streaming, and name the first bad one (exit 1).
 * None of them migrates the store.
 *
 * @example
 * ```ts
 * registerAudit(program, host); // hookinbox audit verify --head head.json
 * ```
 */
export function registerAudit(program: Command, host: CommandHost): void {
  const audit = host.group(program, "audit", "the tamper-evident audit log: heads, proofs, verify");
  host
    .leaf(audit, "head", "sign a tree head of the audit log now (JSON: save it)", false)
    .action((options) =>
      host.run(
        options,
        {
          operation: signHead,
          access: "read",
          execute: async (ops, input) => {
            const key = await signingKey(host.ctx, options.config);
            const heads = treeHeads({
              store: ops.store,
              key: () => key,
              now: Date.now,
              witness: { file: null, url: null },
            });
            return signHead.run({ ...ops, audit: heads }, input);
          },
          text: pretty,
        },
        {},
      ),
    );
  host
    .leaf(audit, "prove", "the event's inclusion proof", false)
    .argument("<eventId>", "the event")
    .option("--size <n>", "the tree size to prove it in (default: the current size)")
    .action((eventId: string, options) =>
      host.run(
        options,
        { operation: proveEvent, access: "read", names: { eventId: "<eventId>" }, text: pretty },
        { eventId, size: options.size },
      ),
    );
  host
    .leaf(
      audit,
      "consistency",
      "proof that the log of N leaves is a prefix of the later one",
      false,
    )
    .requiredOption("--from <n>", "the older tree size")
    .option("--to <n>", "the newer tree size (default: the current size)")
    .action((options) =>
      host.run(
        options,
        { operation: proveConsistency, access: "read", text: pretty },
        { from: options.from, to: options.to },
      ),
    );
  host
    .leaf(
      audit,
      "verify",
      "recheck every event and leaf against a trusted head (exit 1 names the first bad one)",
      false,
    )
    .option(
      "--head <file>",
      "a head saved with `hookinbox audit head` (default: the newest stored)",
    )
    .option("--key <hex>", "the public key to check --head with (default: the configured key)")
    .action(async (options) => host.exit(await verifyCommand(host.ctx, options)));
}
