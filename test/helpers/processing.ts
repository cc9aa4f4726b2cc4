import { join } from "node:path";
import { createInbox, type Inbox, type InboxOptions } from "../../src/inbox.ts";
import type { ProcessAvailableResult } from "../../src/queue/process-available.ts";
import { secrets, standardRequest } from "./signers.ts";
import { tempDir } from "./temp.ts";

/** A `processAvailable` result: zero but for `counts`. */
export const counted = (counts: Partial<ProcessAvailableResult> = {}): ProcessAvailableResult => ({
  done: 0,
  retried: 0,
  dead: 0,
  failed: 0,
  released: 0,
  remaining: 0,
  ...counts,
});

/** A clock the test moves by hand. */
export function manualClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/**
 * Polls until `check` returns a truthy value (real time), failing after `timeoutMs`. The default
 * is generous on purpose: it bounds a wait, it asserts no speed, and on a loaded two-core CI
 * machine a condition that takes half a second idle has taken over ten.
 */
export async function until<T>(
  check: () => T,
  timeoutMs = 30_000,
  what = "condition",
): Promise<Exclude<Awaited<T>, null | undefined | false | 0 | "">> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<Awaited<T>, null | undefined | false | 0 | "">;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * An inbox with one Standard Webhooks source `std` whose identity reads `$.key` as the ordering
 * key and `$.seq` as the version, plus the given handlers. The store is `config.store` when given
 * (see storeFactories in stores.ts), else a fresh SQLite file.
 */
export function processingInbox(config: Record<string, unknown>, options: InboxOptions = {}) {
  const tmp = tempDir();
  const dbPath = join(tmp.dir, "processing.db");
  const inbox: Inbox = createInbox(
    {
      store: `sqlite:${dbPath}`,
      sources: {
        std: {
          provider: "standard-webhooks",
          secrets: [secrets.standard],
          identity: { orderingKey: "$.key", version: "$.seq" },
        },
      },
      ...config,
    },
    { env: {}, ...options },
  );
  const now = options.now ?? Date.now;
  return {
    inbox,
    dbPath,
    dir: tmp.dir,
    /** Ingests one signed event through the inbox's own request path. */
    async post(id: string, payload: Record<string, unknown>) {
      const signed = standardRequest(id, JSON.stringify(payload), new Date(now()));
      const response = await inbox.handle({
        method: "POST",
        url: "/webhooks/std",
        headers: signed.headers,
        body: new TextEncoder().encode(signed.body),
      });
      if (response.status !== 200)
        throw new Error(`ingest failed: ${response.status} ${response.body}`);
      return JSON.parse(response.body) as { eventId: string; duplicate: boolean };
    },
    /** Sends one request whose signature does not match (a rejection); returns its status. */
    async postForged(id: string, payload: Record<string, unknown>) {
      const forged = standardRequest(id, JSON.stringify(payload), new Date(now()));
      const response = await inbox.handle({
        method: "POST",
        url: "/webhooks/std",
        headers: {
          ...forged.headers,
          "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`,
        },
        body: new TextEncoder().encode(forged.body),
      });
      return response.status;
    },
    async cleanup() {
      await inbox.close();
      tmp.cleanup();
    },
  };
}

/**
 * A handler whose effect `ship` never finishes until `release()`, held for a human when its claim
 * goes stale (`staleAfter: "1s"`): how tests make a held effect.
 */
export function hangingEffect() {
  let release: () => void = () => undefined;
  const hang = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler = async (_event: unknown, ctx: any) => {
    await ctx.effect("ship", () => hang, { onStale: "hold", staleAfter: "1s" });
  };
  /**
   * Posts `msg_held`; a first worker starts the effect and "dies" (stopped, its lease never
   * extended), the clock moves past the stale time, and a second worker finds the stale claim and
   * holds it. Returns the second worker.
   */
  const makeHeld = async (
    env: ReturnType<typeof processingInbox>,
    clock: ReturnType<typeof manualClock>,
  ) => {
    const first = env.inbox.startWorker({ workerId: "wrk_first" });
    await env.post("msg_held", { type: "x" });
    await until(async () => (await env.inbox.store.listEffects({})).length === 1);
    await first.stop(0);
    clock.advance(5_000);
    return env.inbox.startWorker({ workerId: "wrk_second" });
  };
  return { handler, release: () => release(), makeHeld };
}
