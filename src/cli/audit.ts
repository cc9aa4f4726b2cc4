import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { auditKeyFile, loadAuditKey } from "../audit/audit-key.ts";
import { verifyLog } from "../audit/log.ts";
import { consistencyProofJson, inclusionProofJson, parseTreeSize } from "../audit/operations.ts";
import {
  parseTreeHeadJson,
  publicKeyFromHex,
  publicKeyHex,
  treeHeadJson,
  verifyTreeHead,
} from "../audit/tree-head.ts";
import { treeHeads } from "../audit/tree-heads.ts";
import { loadConfigFile, resolveStoreUrl } from "../config/index.ts";
import { resolveSecret } from "../config/secrets.ts";
import { hookinboxError } from "../errors.ts";
import type { StoredTreeHead } from "../store/audit-types.ts";
import type { Store } from "../store/types.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";

const usage =
  "hookinbox audit head | prove <eventId> [--size N] | consistency --from N [--to N] | verify [--head FILE] [--key HEX]";

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

/** The trusted head: `--head FILE` (its signature checked), else the newest stored head. */
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
  const trusted =
    values.key !== undefined
      ? publicKeyFromHex(values.key)
      : publicKeyFromHex(publicKeyHex(await signingKey(ctx, values.config)));
  if (!verifyTreeHead(parsed, trusted)) {
    throw hookinboxError(
      "HOOKINBOX_AUDIT_HEAD_INVALID",
      `${values.head}: the signature does not verify with ${values.key ?? "the configured key"}`,
    );
  }
  return { head: parsed, from: values.head };
}

/**
 * `hookinbox audit head|prove|consistency|verify`: sign a tree head now (JSON, to save and
 * compare later), print an event's inclusion proof or a consistency proof, or recheck every
 * stored event and leaf against a trusted head, streaming, and name the first bad one (exit 1).
 *
 * @example
 * ```ts
 * await auditCommand(ctx, ["verify", "--head", "head.json"]); // 0 when the log matches
 * ```
 */
export async function auditCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      size: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      head: { type: "string" },
      key: { type: "string" },
    },
  });
  if (!["head", "prove", "consistency", "verify"].includes(sub ?? "")) {
    throw hookinboxError("HOOKINBOX_USAGE", usage);
  }
  const store = await openConfiguredStore(ctx, values.config);
  const print = (value: unknown) => ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  try {
    const current = (await store.auditTree()).size;
    if (sub === "head") {
      const key = await signingKey(ctx, values.config);
      const heads = treeHeads({
        store,
        key: () => key,
        now: Date.now,
        witness: { file: null, url: null },
      });
      print(treeHeadJson(await heads.signNow()));
      return 0;
    }
    if (sub === "prove") {
      const eventId = positionals[0];
      if (!eventId) throw hookinboxError("HOOKINBOX_USAGE", usage);
      const size =
        values.size === undefined ? current : parseTreeSize(values.size, "--size", current);
      print(await inclusionProofJson(store, eventId, size));
      return 0;
    }
    if (sub === "consistency") {
      const from = parseTreeSize(values.from, "--from", current);
      const to = values.to === undefined ? current : parseTreeSize(values.to, "--to", current);
      print(await consistencyProofJson(store, from, to));
      return 0;
    }
    const { head, from } = await trustedHead(ctx, store, values);
    const result = await verifyLog(store, head, {
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
    return 0;
  } finally {
    await store.close();
  }
}
