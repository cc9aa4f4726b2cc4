import { consistencyProofJson, inclusionProofJson, parseTreeSize } from "../audit/operations.ts";
import { treeHeadJson } from "../audit/tree-head.ts";
import type { TreeHeads } from "../audit/tree-heads.ts";
import { hookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { jsonResponse } from "../ingest/request.ts";
import { type AdminRoute, pathParam } from "./params.ts";

function headsOf(inbox: Inbox): TreeHeads {
  if (!inbox.audit) throw hookinboxError("HOOKINBOX_AUDIT_DISABLED");
  return inbox.audit;
}

/** The tree size a proof is for: `?name=`, else the newest signed head's. */
async function sizeOrLatest(inbox: Inbox, value: string | null, name: string) {
  const heads = headsOf(inbox);
  const current = (await inbox.store.auditTree()).size;
  if (value !== null) return { size: parseTreeSize(value, name, current), head: null };
  const head = await heads.latest();
  return { size: head.size, head: treeHeadJson(head) };
}

/**
 * The audit log's admin routes: the signing key, the newest signed head (and a fresh one on
 * POST), the inclusion proof of an event and the consistency proof between two sizes.
 * HOOKINBOX_AUDIT_DISABLED when `audit.enabled` is false.
 *
 * @example
 * ```ts
 * const routes = [...otherRoutes, ...auditRoutes];
 * ```
 */
export const auditRoutes: Array<{ method: string; path: RegExp; run: AdminRoute }> = [
  {
    method: "GET",
    path: /^\/api\/audit\/key$/,
    run: async (_m, _u, _b, { inbox }) =>
      jsonResponse(200, { algorithm: "Ed25519", publicKey: headsOf(inbox).publicKey() }),
  },
  {
    method: "GET",
    path: /^\/api\/audit\/head$/,
    run: async (_m, _u, _b, { inbox }) =>
      jsonResponse(200, treeHeadJson(await headsOf(inbox).latest())),
  },
  {
    method: "POST",
    path: /^\/api\/audit\/head$/,
    run: async (_m, _u, _b, { inbox }) =>
      jsonResponse(201, treeHeadJson(await headsOf(inbox).signNow())),
  },
  {
    method: "GET",
    path: /^\/api\/audit\/proof\/([^/]+)$/,
    run: async (m, url, _b, { inbox }) => {
      const { size, head } = await sizeOrLatest(inbox, url.searchParams.get("size"), "size");
      const proof = await inclusionProofJson(inbox.store, pathParam(m[1]!), size);
      return jsonResponse(200, { ...proof, head });
    },
  },
  {
    method: "GET",
    path: /^\/api\/audit\/consistency$/,
    run: async (_m, url, _b, { inbox }) => {
      const q = url.searchParams;
      const current = (await inbox.store.auditTree()).size;
      const from = parseTreeSize(q.get("from"), "from", current);
      const { size: to, head } = await sizeOrLatest(inbox, q.get("to"), "to");
      return jsonResponse(200, { ...(await consistencyProofJson(inbox.store, from, to)), head });
    },
  },
];
