// For every provider in the catalogue: a signed sample is ingested, forwarded over real HTTP to a
// loopback app, and the app verifies the forwarded body and headers with that provider's own
// verifier (the scheme a hookinbox source of that provider gets). Providers that sign the URL are
// verified against the URL the sample was signed for (docs/forwarding.md); Standard Webhooks,
// Clerk and Resend with the destination's secret, since hookinbox's own signature replaces theirs.
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/index.ts";
import { providerDefinitions } from "../../src/providers/all.ts";
import {
  providerSamples,
  sampleKeyFetcher,
  sampleSourceConfig,
} from "../../src/testing/samples/index.ts";
import type { ProviderSample, SampleRequest } from "../../src/testing/samples/types.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import type { ReceivedRequest } from "../helpers/receiver.ts";
import { destination, destinationSecret, receiver } from "./forward-env.ts";

/** Sources whose signature hookinbox's own Standard Webhooks signature replaces. */
const replaced = new Set(["standard-webhooks", "clerk", "resend"]);
/** Sources whose proof is in a header a destination opts into (`authorization`, hmac's own). */
const optIn = new Set(["hmac", "okta", "postmark", "pubsub"]);
const optInHeaders = ["authorization", "x-signature", "x-timestamp", "x-event-id"];

const urlFor = (name: string) => `https://hooks.example.com/webhooks/${name}`;

function verifierSource(sample: ProviderSample, secret: string) {
  const config = resolveConfig(
    { sources: { app: sampleSourceConfig(sample, secret, urlFor(sample.provider)) } },
    {},
    sample.keyFetcher ? { keyFetcher: sample.keyFetcher(secret) } : {},
  );
  const source = config.sources.get("app");
  if (!source) throw new Error("no source");
  return source;
}

/** What the app received, as a request to the URL the provider signed. */
function asSigned(received: ReceivedRequest, signedUrl: string, body: Buffer) {
  const headers = new Map(Object.entries(received.headers));
  const target = new URL(signedUrl);
  return {
    method: "POST",
    url: target.pathname + target.search,
    headers: { get: (name: string) => headers.get(name) },
    body: new Uint8Array(body),
  };
}

describe("every provider's signature survives forwarding", () => {
  it("forwards a signed sample of each provider; the app verifies each with its own verifier", async () => {
    const samples = providerDefinitions.map((definition) => {
      const sample = providerSamples.get(definition.name);
      if (!sample) throw new Error(`no sample for ${definition.name}`);
      return sample;
    });
    const app = await receiver();
    const sources: Record<string, Record<string, unknown>> = {};
    for (const sample of samples)
      sources[sample.provider] = sampleSourceConfig(
        sample,
        sample.exampleSecret,
        urlFor(sample.provider),
      );
    const names = samples.map((s) => s.provider);
    const env = processingInbox(
      {
        sources,
        destinations: {
          app: destination(app.url),
          optin: destination(app.url, { forwardHeaders: optInHeaders }),
        },
        routes: [
          { from: names.filter((n) => !optIn.has(n)), to: "app" },
          { from: names.filter((n) => optIn.has(n)), to: "optin" },
        ],
        retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 3 },
        worker: { pollInterval: "50ms" },
      },
      { keyFetcher: sampleKeyFetcher((sample) => sample.exampleSecret) },
    );
    onCleanup(env.cleanup);

    const sent = new Map<string, SampleRequest>();
    for (const sample of samples) {
      const request = sample.build({
        secret: sample.exampleSecret,
        url: urlFor(sample.provider),
        nowMs: Date.now(),
        id: sample.newId(),
      });
      sent.set(sample.provider, request);
      const target = new URL(request.url);
      const response = await env.inbox.handle({
        method: "POST",
        url: target.pathname + target.search,
        headers: request.headers,
        body: new TextEncoder().encode(request.body),
      });
      expect(response.status, `${sample.provider}: ${response.body}`).toBeLessThan(300);
    }
    const worker = env.inbox.startWorker();
    await until(
      () => new Set(app.requests.map((r) => r.headers["hookinbox-source"])).size === samples.length,
      30_000,
      "one forward per provider",
    );
    await worker.stop();

    const verified: string[] = [];
    const batchVerified: string[] = [];
    const failed: string[] = [];
    for (const sample of samples) {
      const received = app.requests.find((r) => r.headers["hookinbox-source"] === sample.provider);
      if (!received) throw new Error(`nothing forwarded for ${sample.provider}`);
      const request = sent.get(sample.provider)!;
      const secret = replaced.has(sample.provider) ? destinationSecret : sample.exampleSecret;
      const source = verifierSource(sample, secret);
      const active = source.secrets.map((s, index) => ({ index, value: s.value }));
      const verify = (body: Buffer) =>
        source.scheme.verifier.verify(asSigned(received, request.url, body), active, Date.now());
      try {
        await verify(received.body);
        verified.push(sample.provider);
      } catch (error) {
        // A batch the scheme splits is forwarded one event per item, each with the item's bytes
        // (a byte span of the signed body): the forwarded headers still verify the whole batch.
        const original = Buffer.from(request.body);
        if (source.scheme.split && original.includes(received.body)) {
          await verify(original);
          batchVerified.push(sample.provider);
        } else failed.push(`${sample.provider}: ${(error as Error).message}`);
      }
    }
    expect(failed).toEqual([]);
    expect(batchVerified).toEqual(["adyen", "asana", "hubspot", "msgraph", "sendgrid"]);
    expect(verified.length + batchVerified.length).toBe(providerDefinitions.length);
    expect(verified.length).toBe(providerDefinitions.length - 5);
  }, 60_000);
});
