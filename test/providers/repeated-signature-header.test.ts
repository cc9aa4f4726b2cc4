import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createInbox } from "../../src/inbox.ts";
import { providerSamples, sampleSourceConfig } from "../../src/testing/samples/index.ts";
import type { ProviderSample } from "../../src/testing/samples/types.ts";
import { tempDir } from "../helpers/temp.ts";

// One rule for a repeated signature header, across every provider of the sample registry: each
// header of a correctly signed request is sent twice, once valid and once altered, in both
// orders. A header the verifier reads that comes twice is refused (400
// HOOKINBOX_SIGNATURE_HEADER_REPEATED, or the scheme's rejection status), so the two orders
// always get the same answer; the signature header of every header-signed provider is one of them.

const url = "https://hooks.example.com/webhooks/probe";
const nowMs = Date.UTC(2026, 10, 30, 12, 0, 0);
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** The value with its last letter or digit changed (still well-formed for most schemes). */
function altered(value: string): string {
  for (let i = value.length - 1; i >= 0; i--) {
    const c = value[i]!;
    if (/[0-9a-zA-Z]/.test(c)) {
      const next = c === "0" ? "1" : c === "a" ? "b" : c === "A" ? "B" : /\d/.test(c) ? "0" : "a";
      return value.slice(0, i) + next + value.slice(i + 1);
    }
  }
  return `${value}x`;
}

/** Providers whose signature (or token) travels in the body, not in a header. */
const signedInBody = new Set(["adyen", "mailgun", "sns", "msgraph"]);

async function answers(sample: ProviderSample) {
  const secret = sample.exampleSecret;
  const inbox = createInbox(
    {
      store: `sqlite:${join(tmp.dir, `${sample.provider}.db`)}`,
      sources: { probe: sampleSourceConfig(sample, secret, url) },
    } as never,
    {
      env: {},
      now: () => nowMs,
      ...(sample.keyFetcher ? { keyFetcher: sample.keyFetcher(secret) } : {}),
    },
  );
  const results: Array<{ header: string; first: string; second: string }> = [];
  try {
    for (const header of Object.keys(sample.build({ secret, url, nowMs, id: "x" }).headers)) {
      const outcome = async (validFirst: boolean) => {
        // A fresh event each time, so a first order that was stored is no duplicate for the other.
        const request = sample.build({ secret, url, nowMs, id: sample.newId() });
        const pairs = Object.entries(request.headers);
        const valid = request.headers[header]!;
        const copies: Array<[string, string]> = validFirst
          ? [
              [header, valid],
              [header, altered(valid)],
            ]
          : [
              [header, altered(valid)],
              [header, valid],
            ];
        const target = new URL(request.url);
        const response = await inbox.handle({
          method: "POST",
          url: target.pathname + target.search,
          headers: [...pairs.filter(([name]) => name !== header), ...copies],
          body: new TextEncoder().encode(request.body),
        });
        const code = response.status < 300 ? "" : (JSON.parse(response.body).error?.code ?? "");
        return `${response.status} ${code}`.trim();
      };
      results.push({ header, first: await outcome(true), second: await outcome(false) });
    }
  } finally {
    await inbox.close();
  }
  return results;
}

describe("a repeated signature header", () => {
  it.each([...providerSamples.values()].map((s) => [s.provider, s] as const))(
    "%s: the same answer whichever copy comes first",
    async (_name, sample) => {
      const results = await answers(sample);
      expect(results.filter((r) => r.first !== r.second)).toEqual([]);
      // Every provider whose signature travels in a header refuses it repeated.
      if (!signedInBody.has(sample.provider)) {
        const refused = results.filter((r) =>
          r.first.includes("HOOKINBOX_SIGNATURE_HEADER_REPEATED"),
        );
        expect(refused.length).toBeGreaterThan(0);
      }
    },
  );
});
