import type { KeyObject } from "node:crypto";
import { appendFile } from "node:fs/promises";
import { type Resolver, systemResolver } from "../forward/address-guard.ts";
import { openDestinationClient } from "../forward/http-client.ts";
import type { Logger } from "../log.ts";
import type { StoredTreeHead } from "../store/audit-types.ts";
import type { Store } from "../store/types.ts";
import { currentTree } from "./log.ts";
import { sequenceAll } from "./sequencer.ts";
import { publicKeyHex, signTreeHead, treeHeadJson } from "./tree-head.ts";

/** Signs, stores and publishes tree heads of one store's log. */
export interface TreeHeads {
  /** Hex of the raw Ed25519 public key heads are signed with. */
  publicKey(): string;
  /**
   * Signs the current tree now, stores the head and sends it to the witnesses. On PostgreSQL the
   * leaves pending so far are sequenced first, so the head covers every event accepted before it.
   */
  signNow(): Promise<StoredTreeHead>;
  /** The newest stored head; signs one first when none is stored yet. */
  latest(): Promise<StoredTreeHead>;
  /** Signs on an interval, whenever the log grew since the newest stored head. */
  start(intervalMs: number): void;
  /** Stops the interval and waits for a head under way. */
  stop(): Promise<void>;
}

/**
 * The tree-head signer of a store: heads on demand and on an interval, stored in the store,
 * appended as JSON lines to `witness.file` and POSTed as JSON to `witness.url` (a witness that
 * fails is logged, never fatal: the head is stored either way). The POST has a destination's SSRF
 * guard (loopback, private, link-local and metadata addresses refused unless
 * `witness.allowPrivateNetworks`) and follows no redirect. `key` is called on first use,
 * so a key file is only made when a head is first needed.
 *
 * @example
 * ```ts
 * const heads = treeHeads({ store, key: () => privateKey, now: Date.now, witness: { file: null, url: null } });
 * const head = await heads.signNow();
 * ```
 */
export function treeHeads(options: {
  store: Pick<Store, "auditTree" | "saveTreeHead" | "latestTreeHead" | "auditSequence">;
  key: () => KeyObject;
  now: () => number;
  witness: { file: string | null; url: string | null; allowPrivateNetworks?: boolean };
  logger?: Logger;
  /** Host name resolution for the witness URL (tests pass their own; the guard checks it). */
  resolver?: Resolver;
}): TreeHeads {
  const { store, witness, logger } = options;
  // The same client as a destination's: the SSRF guard on every address it connects to (unless
  // allowPrivateNetworks) and no redirects followed.
  const witnessClient = witness.url
    ? openDestinationClient(new URL(witness.url), {
        connections: 1,
        allowPrivateNetworks: witness.allowPrivateNetworks ?? false,
        resolver: options.resolver ?? systemResolver,
      })
    : null;
  let key: KeyObject | undefined;
  const signingKey = () => {
    key ??= options.key();
    return key;
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  const publish = async (head: StoredTreeHead) => {
    const line = JSON.stringify(treeHeadJson(head));
    if (witness.file) {
      await appendFile(witness.file, `${line}\n`).catch((error: Error) =>
        logger?.warn(
          { err: error.message },
          "could not append the tree head to audit.witness.file",
        ),
      );
    }
    if (witnessClient) {
      const result = await witnessClient.post(
        { "content-type": "application/json" },
        Buffer.from(line, "utf8"),
        10_000,
        new AbortController().signal,
      );
      const ok = result.status !== null && result.status >= 200 && result.status < 300;
      if (!ok)
        logger?.warn(
          {
            err: result.status === null ? result.error : `HTTP ${result.status} (never followed)`,
            ...(result.refused ? { code: "HOOKINBOX_FORWARD_ADDRESS_REFUSED" } : {}),
          },
          "could not POST the tree head to audit.witness.url",
        );
    }
  };

  const signTree = async () => {
    const head = signTreeHead(signingKey(), await currentTree(store), options.now());
    await store.saveTreeHead(head);
    await publish(head);
    return head;
  };

  const signNow = async () => {
    await sequenceAll(store);
    return signTree();
  };

  const tick = async () => {
    const [tree, newest] = await Promise.all([store.auditTree(), store.latestTreeHead()]);
    if (!newest || newest.size < tree.size) await signTree();
  };

  return {
    publicKey: () => publicKeyHex(signingKey()),
    signNow,
    async latest() {
      return (await store.latestTreeHead()) ?? signNow();
    },
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = tick()
          .catch((error: Error) =>
            logger?.warn(
              { err: error.message },
              "could not sign a tree head; next try next interval",
            ),
          )
          .finally(() => {
            running = null;
          });
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
      await witnessClient?.close();
    },
  };
}
