import { describe, expect, it } from "vitest";
import { forwardedHeaderNames, heldBack } from "../../src/forward/forwarded-headers.ts";
import { providerDefinitions } from "../../src/providers/all.ts";

// The forwarding allowlist is derived from the provider definitions: every provider's signature
// headers are forwarded, except the few the documented rule holds back (the `webhook-*`/`svix-*`
// headers hookinbox's own signature replaces, and `authorization`, a credential a destination
// opts into with `forwardHeaders`).

/** Providers whose proof is in the body, or in headers each source names (`hmac`). */
const proofNotInAFixedHeader = ["adyen", "hmac", "mailgun", "msgraph", "sns"];

const svix = ["svix-id", "svix-timestamp", "svix-signature"];
const webhook = ["webhook-id", "webhook-timestamp", "webhook-signature"];

/** Providers with a signature header the rule holds back, and which ones. */
const heldBackByProvider = {
  clerk: svix,
  gitlab: webhook,
  okta: ["authorization"],
  postmark: ["authorization"],
  pubsub: ["authorization"],
  resend: svix,
  "standard-webhooks": [...webhook, ...svix],
};

describe("forwarded headers from the provider definitions", () => {
  it("every definition's signature headers are forwarded, or held back by the documented rule", () => {
    const held: Record<string, string[]> = {};
    for (const definition of providerDefinitions) {
      for (const name of definition.headers.signature) {
        expect(name, `${definition.name}: ${name}`).toBe(name.toLowerCase());
        if (heldBack(name)) held[definition.name] = [...(held[definition.name] ?? []), name];
        else expect(forwardedHeaderNames.has(name), `${definition.name}: ${name}`).toBe(true);
      }
      for (const name of definition.headers.context ?? [])
        expect(forwardedHeaderNames.has(name), `${definition.name}: ${name}`).toBe(true);
    }
    expect(held).toEqual(heldBackByProvider);
  });

  it("only the providers whose proof is not in a fixed header declare no signature header", () => {
    const none = providerDefinitions
      .filter((definition) => definition.headers.signature.length === 0)
      .map((definition) => definition.name);
    expect(none).toEqual(proofNotInAFixedHeader);
  });

  it("every provider with a signature header has one forwarded or replaced by hookinbox's own", () => {
    const withHeader = providerDefinitions.filter((d) => d.headers.signature.length > 0);
    const forwarded = withHeader.filter((d) =>
      d.headers.signature.some((name) => forwardedHeaderNames.has(name)),
    );
    const onlyHeld = withHeader.filter((d) => !forwarded.includes(d)).map((d) => d.name);
    // Standard Webhooks, Clerk and Resend: hookinbox's own signature replaces theirs; Okta,
    // Postmark and Pub/Sub: `authorization`, which a destination opts into.
    expect(onlyHeld).toEqual([
      "clerk",
      "okta",
      "postmark",
      "pubsub",
      "resend",
      "standard-webhooks",
    ]);
    expect(forwarded.length + onlyHeld.length + proofNotInAFixedHeader.length).toBe(
      providerDefinitions.length,
    );
  });

  it("keeps the content type and user agent, and never the headers the rule holds back", () => {
    expect(forwardedHeaderNames.has("content-type")).toBe(true);
    expect(forwardedHeaderNames.has("user-agent")).toBe(true);
    for (const name of forwardedHeaderNames) expect(heldBack(name), name).toBe(false);
  });
});
