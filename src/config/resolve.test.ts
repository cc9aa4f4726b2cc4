import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../errors.ts";
import { readHeaders } from "../ingest/headers.ts";
import { identify } from "../ingest/identify.ts";
import { stripe } from "../providers/registry.ts";
import { resolveConfig } from "./resolve.ts";
import { activeSecrets } from "./secrets.ts";

function configError(input: unknown, env: Record<string, string> = {}): string {
  try {
    resolveConfig(input, env);
  } catch (error) {
    if (isHookinboxError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error("expected the config to be rejected");
}

describe("resolveConfig", () => {
  it("applies the documented defaults", () => {
    const config = resolveConfig({}, {});
    expect(config.store).toBe("sqlite:./.hookinbox/hookinbox.db");
    expect(config.http).toEqual({
      host: "127.0.0.1",
      port: 8080,
      bodyLimit: 1024 * 1024,
      readTimeoutMs: 30_000,
      idleTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 35_000,
      maxConnections: 1000,
      maxConnectionsPerAddress: 100,
      minBodyRate: { bytesPerSecond: 240, graceMs: 5_000, windowMs: 5_000 },
      drainTimeoutMs: 10_000,
      publicUrl: null,
      maxHops: 3,
      trustedProxies: null,
      rejectLimit: { max: 60, windowMs: 60_000 },
      rejectedRetentionMs: 7 * 24 * 3600_000,
    });
    expect(config.admin.token).toBeNull();
    expect(config.sources.size).toBe(0);
  });

  it("lets DATABASE_URL win over store, and reads the admin token from HOOKINBOX_ADMIN_TOKEN", () => {
    const config = resolveConfig(
      { store: "sqlite:./a.db" },
      {
        DATABASE_URL: "sqlite:./b.db",
        HOOKINBOX_ADMIN_TOKEN: "unit-test-admin-token-5e1c9a7b3d2f80",
      },
    );
    expect(config.store).toBe("sqlite:./b.db");
    expect(config.admin.token).toBe("unit-test-admin-token-5e1c9a7b3d2f80");
  });

  it("rejects an unknown top-level key and suggests the closest", () => {
    expect(configError({ sorces: {} })).toBe(
      'HOOKINBOX_CONFIG_INVALID: Config is invalid: \n  - sorces: unknown key "sorces" (did you mean "sources"?)',
    );
  });

  it("rejects an unknown key inside a source, naming its path", () => {
    const message = configError({
      sources: { stripe: { provider: "stripe", secret: ["s"], secrets: ["s"] } },
    });
    expect(message).toContain(
      'sources.stripe.secret: unknown key "secret" (did you mean "secrets"?)',
    );
  });

  it("rejects an unknown provider with the list of providers", () => {
    expect(configError({ sources: { x: { provider: "strip", secrets: ["s"] } } })).toContain(
      'sources.x.provider: unknown provider "strip" (did you mean "stripe"?); must be one of "adyen", "asana", "bitbucket"',
    );
  });

  it("fails closed: a source needs at least one secret", () => {
    expect(configError({ sources: { x: { provider: "github", secrets: [] } } })).toContain(
      "sources.x.secrets: a source needs at least one secret (fail closed)",
    );
  });

  it("names a missing environment variable without showing any secret", () => {
    const message = configError({
      sources: {
        s: { provider: "stripe", secrets: ["whsec_inline_value", { env: "STRIPE_SECRET_NEXT" }] },
      },
    });
    expect(message).toBe(
      "HOOKINBOX_SECRET_ENV_MISSING: Secret environment variable is not set: sources.s.secrets[1] reads environment variable STRIPE_SECRET_NEXT, which is not set; export it or change the config",
    );
    expect(message).not.toContain("whsec_inline_value");
  });

  it("never echoes a secret value in a validation error", () => {
    const message = configError({
      sources: {
        s: {
          provider: "stripe",
          secrets: [{ value: "super-secret-value", notAfter: "not a date" }],
        },
      },
    });
    expect(message).toContain("sources.s.secrets[0]");
    expect(message).not.toContain("super-secret-value");
  });

  it("requires an id for hmac sources (never a body hash by default)", () => {
    expect(
      configError({ sources: { crm: { provider: "hmac", header: "x-sig", secrets: ["s"] } } }),
    ).toContain("sources.crm.identity.id: an hmac source needs an event id");
  });

  it("rejects bad durations and sizes with the accepted forms", () => {
    expect(configError({ http: { bodyLimit: "1 megabyte" } })).toContain(
      'http.bodyLimit: expected a size: bytes or a string like "512kb", "1mb"',
    );
    expect(
      configError({
        sources: { s: { provider: "stripe", secrets: ["s"], tolerance: "5 minutes" } },
      }),
    ).toContain("sources.s.tolerance: expected a duration");
  });

  it("resolves env secrets and overrides identity fields per source", () => {
    const config = resolveConfig(
      {
        sources: {
          s: {
            ...stripe({ secrets: [{ env: "S1" }] }),
            identity: { orderingKey: "$.data.object.customer" },
          },
        },
      },
      { S1: "whsec_1" },
    );
    const source = config.sources.get("s")!;
    expect(source.secrets.map((s) => s.value)).toEqual(["whsec_1"]);
    expect(source.identity.orderingKey).toBe("$.data.object.customer");
    expect(source.identity.id).toBe("$.id");
  });
});

describe("identity overrides", () => {
  const headers = readHeaders([["x-shop", "s1"]]);
  const body = new TextEncoder().encode('{"pspReference":"881","eventCode":"CAPTURE"}');

  it("builds a synthetic key from several named fields, and refuses the event when one is missing", () => {
    const config = resolveConfig(
      {
        sources: {
          x: {
            provider: "hmac",
            header: "x-sig",
            secrets: ["s"],
            identity: { id: ["$.pspReference", "$.eventCode", "header:x-shop"] },
          },
        },
      },
      {},
    );
    const spec = config.sources.get("x")!.identity;
    expect(identify(spec, headers, body).dedupKey).toBe("881:CAPTURE:s1");
    expect(() => identify(spec, readHeaders([]), body)).toThrow(
      "a field of the source's id is missing",
    );
  });

  it("hashes the body only when asked for by name", () => {
    const config = resolveConfig(
      {
        sources: {
          x: { provider: "hmac", header: "x-sig", secrets: ["s"], identity: { id: "body:sha256" } },
        },
      },
      {},
    );
    expect(identify(config.sources.get("x")!.identity, headers, body).dedupKey).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
    expect(
      configError({
        sources: {
          x: { provider: "hmac", header: "x-sig", secrets: ["s"], identity: { id: "body" } },
        },
      }),
    ).toContain("sources.x.identity.id");
  });
});

describe("environments", () => {
  const config = {
    sources: { gh: { provider: "github", secrets: ["shared"] } },
    environments: {
      production: {
        sources: { stripe: { provider: "stripe", secrets: [{ env: "PROD_SECRET" }] } },
      },
      staging: {
        sources: { stripe: { provider: "stripe", secrets: [{ env: "STAGING_SECRET" }] } },
        log: { level: "debug" },
      },
    },
  };
  const env = { PROD_SECRET: "whsec_prod", STAGING_SECRET: "whsec_staging" };

  it("applies only the selected environment's sources and settings", () => {
    const production = resolveConfig(config, { ...env, HOOKINBOX_ENV: "production" });
    expect(production.sources.get("stripe")!.secrets.map((s) => s.value)).toEqual(["whsec_prod"]);
    expect(production.sources.get("gh")!.provider).toBe("github");
    expect(production.log.level).toBe("info");
    const staging = resolveConfig(config, { ...env, HOOKINBOX_ENV: "staging" });
    expect(staging.sources.get("stripe")!.secrets.map((s) => s.value)).toEqual(["whsec_staging"]);
    expect(staging.log.level).toBe("debug");
  });

  it("fails closed when no or an unknown environment is selected", () => {
    expect(configError(config, env)).toBe(
      'HOOKINBOX_CONFIG_INVALID: Config is invalid: \n  - environments: set HOOKINBOX_ENV to one of "production", "staging"',
    );
    expect(configError(config, { ...env, HOOKINBOX_ENV: "prod" })).toContain('(got "prod")');
  });

  it("names the environment in validation errors", () => {
    const bad = {
      environments: {
        staging: { sources: { s: { provider: "stripe", secrets: ["x"], tolerence: "1m" } } },
      },
    };
    expect(configError(bad, { HOOKINBOX_ENV: "staging" })).toContain('(environment "staging")');
  });
});

describe("activeSecrets (rotation windows)", () => {
  it("keeps a secret until its notAfter and starts one at its notBefore, boundaries exact", () => {
    const config = resolveConfig(
      {
        sources: {
          s: {
            provider: "github",
            secrets: [
              { value: "old", notAfter: "2026-12-31T00:00:00Z" },
              { value: "new", notBefore: "2026-12-30T00:00:00Z" },
            ],
          },
        },
      },
      {},
    );
    const secrets = config.sources.get("s")!.secrets;
    const at = (iso: string) => activeSecrets(secrets, Date.parse(iso)).map((s) => s.index);
    expect(at("2026-12-29T23:59:59.999Z")).toEqual([0]);
    expect(at("2026-12-30T00:00:00Z")).toEqual([0, 1]);
    expect(at("2026-12-30T23:59:59.999Z")).toEqual([0, 1]);
    expect(at("2026-12-31T00:00:00Z")).toEqual([1]);
  });
});
