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
});
