import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/index.ts";
import { providerNames } from "../../src/config/schema.ts";
import { isHookinboxError } from "../../src/errors.ts";
import { readHeaders } from "../../src/ingest/headers.ts";
import { identify } from "../../src/ingest/identify.ts";
import {
  alterOneByte,
  providerSamples,
  providersWithoutSample,
  sampleSourceConfig,
} from "../../src/testing/samples/index.ts";
import type { ProviderSample, SampleRequest } from "../../src/testing/samples/types.ts";

// Every provider a source may name has a sample, and our own verifier (the scheme a source of
// that provider gets) accepts it, finds the dedup key the sample announces, answers its
// handshake, and refuses it once one signed byte changes.

const url = "https://hooks.example.com/webhooks/probe";
const nowMs = Date.UTC(2026, 10, 30, 12, 0, 0);

function sourceFor(sample: ProviderSample, secret: string, at = url) {
  const config = resolveConfig(
    { sources: { probe: sampleSourceConfig(sample, secret, at) } },
    {},
    sample.keyFetcher ? { keyFetcher: sample.keyFetcher(secret) } : {},
  );
  const source = config.sources.get("probe");
  if (!source) throw new Error("no source");
  return source;
}

function signedRequest(request: SampleRequest) {
  const headers = new Map(Object.entries(request.headers));
  const target = new URL(request.url);
  return {
    method: "POST",
    url: target.pathname + target.search,
    headers: { get: (name: string) => headers.get(name) },
    body: new TextEncoder().encode(request.body),
  };
}

async function verify(sample: ProviderSample, secret: string, request: SampleRequest, at = nowMs) {
  const source = sourceFor(sample, secret);
  const signed = signedRequest(request);
  const active = source.secrets.map((s, index) => ({ index, value: s.value }));
  return { source, signed, verified: await source.scheme.verifier.verify(signed, active, at) };
}

async function firstItemIdentity(sample: ProviderSample, secret: string, request: SampleRequest) {
  const { source, signed } = await verify(sample, secret, request);
  const items = source.scheme.split?.(signed);
  const headers = readHeaders(request.headers);
  const body = items?.[0]?.body ?? signed.body;
  return identify(source.identity, headers, body);
}

describe("provider samples", () => {
  it("every provider a source may name has a sample, except the ones listed as not yet covered", () => {
    const missing = providerNames.filter((name) => !providerSamples.has(name));
    expect(missing.sort()).toEqual([...providersWithoutSample].sort());
    expect(
      [...providerSamples.keys()].every((name) =>
        (providerNames as readonly string[]).includes(name),
      ),
    ).toBe(true);
  });

  describe.each([...providerSamples.values()])("$provider", (sample) => {
    const secret = sample.exampleSecret;
    const input = { secret, url, nowMs, id: sample.newId() };

    it("verifies with our own scheme and carries the dedup key and type it announces", async () => {
      const request = sample.build(input);
      await expect(verify(sample, secret, request)).resolves.toBeDefined();
      const identity = await firstItemIdentity(sample, secret, request);
      if (sample.traits(secret).dedup === "per-notification" && request.eventId === undefined) {
        // No id in the request: the receiver keys each notification afresh (Dropbox).
        expect(identity.dedupKey.length).toBeGreaterThan(0);
      } else {
        expect(identity.dedupKey).toBe(request.eventId);
      }
      expect(request.type).toBe(sample.defaultType);
    });

    it("an unhandled type and an explicit resource still verify", async () => {
      const request = sample.build({
        ...input,
        type: sample.unhandledType,
        resource: "res_42",
        sequence: 1_700_000_000,
      });
      await expect(verify(sample, secret, request)).resolves.toBeDefined();
      const identity = await firstItemIdentity(sample, secret, request);
      if (request.eventId !== undefined) expect(identity.dedupKey).toBe(request.eventId);
    });

    it("the same id gives the same dedup key on a redelivery signed later", async () => {
      if (sample.traits(secret).dedup === "per-notification") return;
      const first = sample.build(input);
      const again = sample.build({ ...input, nowMs: nowMs + 2_000, redelivery: true });
      expect((await firstItemIdentity(sample, secret, again)).dedupKey).toBe(first.eventId);
    });

    it("one altered signed byte is refused", async () => {
      if (sample.traits(secret).signs === "nothing") return;
      const request = sample.build(input);
      const body = (sample.tamper ?? alterOneByte)(request.body);
      expect(body).not.toBe(request.body);
      expect(body.length).toBe(request.body.length);
      let code: string | undefined;
      try {
        await verify(sample, secret, { ...request, body });
      } catch (error) {
        if (isHookinboxError(error)) code = error.code;
      }
      expect(code).toMatch(/^HOOKINBOX_SIGNATURE_/);
    });

    it("a timestamp outside the provider's window is refused", async () => {
      const window = sample.traits(secret).timestampWindowMs;
      if (window === undefined) return;
      const request = sample.build({ ...input, nowMs: nowMs - window - 60_000 });
      let code: string | undefined;
      try {
        await verify(sample, secret, request);
      } catch (error) {
        if (isHookinboxError(error)) code = error.code;
      }
      expect(code).toBe("HOOKINBOX_TIMESTAMP_TOO_OLD");
    });

    it("its handshake is verified and answered as the provider expects", async () => {
      if (!sample.handshake) return;
      const handshake = sample.handshake(input);
      const { source, signed, verified } = await verify(sample, secret, handshake.request);
      const index = verified.secretIndex ?? 0;
      const answer = source.scheme.handshake?.(signed, verified, {
        index,
        value: source.secrets[index]?.value ?? "",
      });
      expect(answer).toBeDefined();
      expect(handshake.accepts(answer?.status ?? 0, answer?.body ?? "")).toBe(true);
      expect(handshake.accepts(200, "wrong")).toBe(false);
    });
  });
});
