import { describe, expect, it } from "vitest";
import type { HookinboxConfig } from "../../src/config/index.ts";
import { isHookinboxError } from "../../src/errors.ts";
import { createInbox } from "../../src/inbox.ts";
import { secrets } from "../helpers/signers.ts";
import { destinationSecret } from "./forward-env.ts";

// Destinations and routes at boot: unknown names and bad secrets fail with a clear code before
// anything runs; routes pick targets by source, type globs and body values.

const sources = {
  stripe: { provider: "stripe", secrets: [secrets.stripe] },
  std: { provider: "standard-webhooks", secrets: [secrets.standard] },
} as const;
const app = { url: "https://app.example.com/hooks", secret: destinationSecret };

/** The error createInbox throws for a config (its code and message), or null. */
function bootError(config: Record<string, unknown>): { code: string; message: string } | null {
  try {
    // Wrong on purpose: the config is checked at run time, as one read from JSON would be.
    const input = { store: "sqlite::memory:", sources, ...config } as HookinboxConfig;
    const inbox = createInbox(input, { env: {} });
    void inbox.close();
    return null;
  } catch (error) {
    if (!isHookinboxError(error)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe("destinations and routes in the config", () => {
  it("a route naming an unknown destination, handler or source fails at boot with HOOKINBOX_ROUTE_UNKNOWN_NAME", () => {
    const unknownTarget = bootError({
      destinations: { app },
      routes: [{ from: "stripe", to: ["ap"] }],
    });
    expect(unknownTarget?.code).toBe("HOOKINBOX_ROUTE_UNKNOWN_NAME");
    expect(unknownTarget?.message).toContain('routes[0].to: no handler or destination named "ap"');
    expect(unknownTarget?.message).toContain("destinations: app");
    const unknownSource = bootError({
      destinations: { app },
      routes: [{ from: "strpe", to: "app" }],
    });
    expect(unknownSource?.code).toBe("HOOKINBOX_ROUTE_UNKNOWN_NAME");
    expect(unknownSource?.message).toContain('no source named "strpe"');
  });

  it("a destination secret that is not a Standard Webhooks secret, or a bad name, fails with HOOKINBOX_CONFIG_INVALID", () => {
    const badSecret = bootError({ destinations: { app: { ...app, secret: "hunter2" } } });
    expect(badSecret?.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(badSecret?.message).toContain("destinations.app.secret");
    const badName = bootError({ destinations: { "app:v2": app } });
    expect(badName?.code).toBe("HOOKINBOX_CONFIG_INVALID");
    const badUrl = bootError({ destinations: { app: { ...app, url: "ftp://app.example.com" } } });
    expect(badUrl?.code).toBe("HOOKINBOX_CONFIG_INVALID");
  });

  it("routes pick targets by source, type globs and body values; handlers no route names keep their own pattern", () => {
    const inbox = createInbox(
      {
        store: "sqlite::memory:",
        sources,
        destinations: { billing: app, audit: app, ci: app },
        handlers: { "stripe:*": async () => {} },
        routes: [
          {
            from: "stripe",
            types: ["invoice.*"],
            where: { "$.data.object.livemode": true },
            to: ["billing"],
          },
          { from: ["stripe", "std"], to: "audit" },
          { from: "std", types: ["build.*", "deploy"], to: "ci" },
        ],
      },
      { env: {} },
    );
    const route = inbox.config.route;
    const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    const live = body({ data: { object: { livemode: true } } });
    const test = body({ data: { object: { livemode: false } } });
    expect(route("stripe", "invoice.paid", live)).toEqual(["stripe:*", "billing", "audit"]);
    expect(route("stripe", "invoice.paid", test)).toEqual(["stripe:*", "audit"]);
    expect(route("stripe", "charge.succeeded", live)).toEqual(["stripe:*", "audit"]);
    expect(route("std", "build.done", body({}))).toEqual(["audit", "ci"]);
    expect(route("std", "deploy.started", body({}))).toEqual(["audit"]);
    expect(route("std", "deploy", new TextEncoder().encode("not json"))).toEqual(["audit", "ci"]);
    void inbox.close();
  });

  it("circuitBreaker: defaults, every key resolved, unknown keys refused, and the old `failures` refused naming the new keys", () => {
    const resolved = (circuitBreaker: unknown) => {
      const inbox = createInbox(
        {
          store: "sqlite::memory:",
          sources,
          destinations: { app: { ...app, circuitBreaker } },
        } as HookinboxConfig,
        { env: {} },
      );
      void inbox.close();
      return inbox.config.destinations.get("app")!.circuitBreaker;
    };
    expect(resolved(undefined)).toEqual({
      failureRate: 0.85,
      windowMs: 30_000,
      minCalls: 50,
      downInRow: 5,
      cooldownMs: 5_000,
      trials: 3,
    });
    expect(resolved(false)).toBeNull();
    expect(
      resolved({
        failureRate: 0.5,
        window: "1m",
        minCalls: 20,
        downInRow: 3,
        cooldown: "10s",
        trials: 1,
      }),
    ).toEqual({
      failureRate: 0.5,
      windowMs: 60_000,
      minCalls: 20,
      downInRow: 3,
      cooldownMs: 10_000,
      trials: 1,
    });
    const refused = (circuitBreaker: unknown) =>
      bootError({ destinations: { app: { ...app, circuitBreaker } } });
    const old = refused({ failures: 5, cooldown: "30s" });
    expect(old?.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(old?.message).toContain("destinations.app.circuitBreaker.failures");
    expect(old?.message).toContain("`failures` was replaced: use `downInRow`");
    expect(old?.message).toContain("`failureRate`, `window`, `minCalls`");
    expect(refused({ probes: 2 })?.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(refused({ failureRate: 1.5 })?.message).toContain("circuitBreaker.failureRate");
    expect(refused({ failureRate: 0 })?.message).toContain("circuitBreaker.failureRate");
    expect(refused({ window: "0s" })?.message).toContain("circuitBreaker.window");
    expect(refused({ trials: 0 })?.message).toContain("circuitBreaker.trials");
    expect(refused(true)?.code).toBe("HOOKINBOX_CONFIG_INVALID");
  });
});
