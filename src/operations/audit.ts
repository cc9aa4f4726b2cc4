import { z } from "zod";
import { consistencyProofJson, inclusionProofJson, parseTreeSize } from "../audit/operations.ts";
import { treeHeadJson } from "../audit/tree-head.ts";
import type { TreeHeads } from "../audit/tree-heads.ts";
import { hookinboxError } from "../errors.ts";
import { text } from "./fields.ts";
import { defineOperation, type OperationContext } from "./operation.ts";

const sizeField = z
  .string({ error: "must be a tree size" })
  .regex(/^\d{1,15}$/, { error: "must be a tree size (a non-negative integer)" })
  .describe("tree size, at most the log's current size");

function headsOf(ctx: OperationContext): TreeHeads {
  if (!ctx.audit) throw hookinboxError("HOOKINBOX_AUDIT_DISABLED");
  return ctx.audit;
}

/**
 * The size a proof is for: the given one, else the newest signed head's where the surface
 * signs heads (the API), else the log's current size (the CLI, which never signs to read).
 */
async function sizeOrLatest(ctx: OperationContext, value: string | undefined, name: string) {
  const current = (await ctx.store.auditTree()).size;
  if (value !== undefined) return { size: parseTreeSize(value, name, current), head: null };
  if (ctx.audit === undefined) return { size: current, head: null };
  const head = await headsOf(ctx).latest();
  return { size: head.size, head: treeHeadJson(head) };
}

/**
 * The public key tree heads are signed with.
 *
 * @example
 * ```ts
 * const { publicKey } = await auditKey.run(ctx, {});
 * ```
 */
export const auditKey = defineOperation({
  name: "audit.key",
  summary: "the Ed25519 public key tree heads are signed with",
  readOnly: true,
  input: z.strictObject({}),
  run: async (ctx) => ({ algorithm: "Ed25519" as const, publicKey: headsOf(ctx).publicKey() }),
});

/**
 * The newest signed tree head (one is signed first when none is stored).
 *
 * @example
 * ```ts
 * const head = await latestHead.run(ctx, {});
 * ```
 */
export const latestHead = defineOperation({
  name: "audit.head",
  summary: "the newest signed tree head",
  readOnly: true,
  input: z.strictObject({}),
  run: async (ctx) => treeHeadJson(await headsOf(ctx).latest()),
});

/**
 * Signs a tree head of the log now (save it to check the log against later).
 *
 * @example
 * ```ts
 * const head = await signHead.run(ctx, {});
 * ```
 */
export const signHead = defineOperation({
  name: "audit.sign",
  summary: "sign a tree head of the audit log now",
  readOnly: false,
  input: z.strictObject({}),
  run: async (ctx) => treeHeadJson(await headsOf(ctx).signNow()),
});

/**
 * An event's inclusion proof at a tree size.
 *
 * @example
 * ```ts
 * const proof = await proveEvent.run(ctx, { eventId: "evt_…" });
 * ```
 */
export const proveEvent = defineOperation({
  name: "audit.proof",
  summary: "an event's inclusion proof",
  readOnly: true,
  input: z.strictObject({ eventId: text("event id"), size: sizeField.optional() }),
  run: async (ctx, { eventId, size: given }) => {
    const { size, head } = await sizeOrLatest(ctx, given, "size");
    return { ...(await inclusionProofJson(ctx.store, eventId, size)), head };
  },
});

/**
 * The proof that the log of `from` leaves is a prefix of the log of `to` leaves.
 *
 * @example
 * ```ts
 * const { proof } = await proveConsistency.run(ctx, { from: "6", to: "8" });
 * ```
 */
export const proveConsistency = defineOperation({
  name: "audit.consistency",
  summary: "proof that an older log is a prefix of a newer one",
  readOnly: true,
  input: z.strictObject({ from: sizeField, to: sizeField.optional() }),
  run: async (ctx, input) => {
    const current = (await ctx.store.auditTree()).size;
    const from = parseTreeSize(input.from, "from", current);
    const { size: to, head } = await sizeOrLatest(ctx, input.to, "to");
    return { ...(await consistencyProofJson(ctx.store, from, to)), head };
  },
});
