import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createInbox } from "../../src/inbox.ts";
import { until } from "../helpers/processing.ts";
import { stripeRequest } from "../helpers/signers.ts";
import { storeFactories } from "../helpers/stores.ts";
import { repoRoot } from "../helpers/temp.ts";
import { effectWorkerConfig } from "./fixtures/effect-config.ts";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function spawnWorker(args: string[]) {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "bin/run-ts.mjs"),
      join(repoRoot, "test/processing/fixtures/effect-worker.ts"),
      ...args,
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited };
}

const lines = (file: string) =>
  existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];

const cases = storeFactories().flatMap((factory) =>
  (["reclaim", "hold"] as const).map((onStale) => ({
    factory,
    onStale,
    kind: factory.kind,
    name: factory.name,
  })),
);

describe.each(cases)(
  "worker SIGKILLed between an effect's claim and its completion ($name, onStale: $onStale)",
  ({ factory, onStale }) => {
    it(
      onStale === "reclaim"
        ? "runs the effect again and finishes the delivery"
        : "holds the effect for a human, alerts once, dead-letters",
      async () => {
        const store = await factory.open();
        cleanups.push(() => store.cleanup());
        const callsFile = join(store.dir, "calls");
        const alertsFile = join(store.dir, "alerts");
        // Ingest in this process (no worker here), process in child processes.
        const inbox = createInbox(
          effectWorkerConfig(store.url, onStale, {
            effect: async () => undefined,
            alert: () => undefined,
          }),
          { env: {} },
        );
        cleanups.push(() => inbox.close());
        const signed = stripeRequest("evt_ship");
        const accepted = await inbox.handle({
          method: "POST",
          url: "/webhooks/stripe",
          headers: signed.headers,
          body: new TextEncoder().encode(signed.body),
        });
        const { eventId } = JSON.parse(accepted.body) as { eventId: string };

        const hanging = spawnWorker([store.url, onStale, "hang", callsFile, alertsFile]);
        await until(() => lines(callsFile).length === 1, 20_000, "the effect's first call");
        hanging.child.kill("SIGKILL");
        expect(await hanging.exited).toBe("SIGKILL");

        spawnWorker([store.url, onStale, "finish", callsFile, alertsFile]);
        const event = await until(
          async () => {
            const e = await inbox.store.getEvent(eventId);
            return e && e.status !== "pending" ? e : null;
          },
          20_000,
          "the delivery to settle",
        );
        const [effect] = await inbox.store.listEffects({ eventId });
        const outcomes = event.deliveries[0]!.attemptLog!.map((a) => a.outcome);
        if (onStale === "reclaim") {
          expect(lines(callsFile)).toEqual(["call", "call"]);
          expect(event.status).toBe("done");
          expect(effect).toMatchObject({
            name: "ship",
            status: "done",
            claims: 2,
            onStale: "reclaim",
          });
          expect(outcomes[0]).toBe("lease-expired");
          expect(outcomes.at(-1)).toBe("success");
          expect(lines(alertsFile)).toEqual([]);
        } else {
          expect(lines(callsFile)).toEqual(["call"]);
          expect(event.status).toBe("dead");
          expect(effect).toMatchObject({
            name: "ship",
            status: "held",
            claims: 1,
            onStale: "hold",
          });
          expect(outcomes[0]).toBe("lease-expired");
          expect(outcomes.at(-1)).toBe("permanent");
          await until(() => lines(alertsFile).length === 2, 5000, "alerts");
          await new Promise((resolve) => setTimeout(resolve, 400));
          expect(lines(alertsFile).sort()).toEqual(["dead-letter", "effect-held"]);
        }
      },
    );
  },
);
