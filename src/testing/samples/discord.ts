// Payloads: an APPLICATION_COMMAND interaction and the PING as in Discord's interactions docs
// (discord.com/developers/docs/interactions/receiving-and-responding), trimmed.
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import { digits, seconds } from "./sign.ts";
import type { ProviderSample, SampleInput, SampleRequest } from "./types.ts";

/** DER prefix of a PKCS#8 Ed25519 private key around its 32-byte seed (RFC 8410). */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

function privateKey(seedHex: string) {
  const seed = Buffer.from(seedHex.trim(), "hex");
  if (seed.length !== 32)
    throw new RangeError("a Discord sample secret is a 32-byte Ed25519 seed, 64 hex characters");
  return createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
}

function signed(
  input: SampleInput,
  body: string,
  type: string,
  eventId: string | undefined,
): SampleRequest {
  const t = String(seconds(input.nowMs));
  const signature = sign(null, Buffer.from(t + body), privateKey(input.secret)).toString("hex");
  return {
    url: input.url,
    headers: {
      "content-type": "application/json",
      "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
      "x-signature-ed25519": signature,
      "x-signature-timestamp": t,
    },
    body,
    eventId,
    type,
  };
}

const TYPES: Readonly<Record<string, number>> = {
  ping: 1,
  application_command: 2,
  message_component: 3,
  application_command_autocomplete: 4,
  modal_submit: 5,
};

/**
 * Discord interactions: `X-Signature-Ed25519` is an Ed25519 signature of
 * `{X-Signature-Timestamp}{body}`. The sample signs with a private key seed (the `secret`,
 * 64 hex characters); the receiver is configured with its public key
 * (`receiverSecret`). Type `ping` sends the PING, answered with `{"type":1}`.
 *
 * @example
 * ```ts
 * discordSample.receiverSecret?.(seedHex); // the application's public key, hex
 * ```
 */
export const discordSample: ProviderSample = {
  provider: "discord",
  origin: "discord.com developer docs: interaction object (APPLICATION_COMMAND) and PING",
  defaultType: "application_command",
  unhandledType: "application_command_autocomplete",
  handshakeType: "ping",
  exampleSecret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
  traits: () => ({ signs: "body", bodyFormat: "json" }),
  newId: () => digits(String(Math.random()), 19),
  receiverSecret(secret) {
    const spki = createPublicKey(privateKey(secret)).export({ format: "der", type: "spki" });
    return spki.subarray(spki.length - 32).toString("hex");
  },
  build(input) {
    const type = input.type ?? this.defaultType;
    const body =
      input.body ??
      JSON.stringify({
        id: input.id,
        application_id: "775799577604948031",
        type: TYPES[type] ?? 2,
        data: {
          id: "771825006014889984",
          name: "blep",
          type: 1,
          options: [{ name: "animal", type: 3, value: "animal_dog" }],
        },
        guild_id: "290926798626357999",
        channel_id: input.resource ?? "645027906669510667",
        member: {
          user: { id: "53908232506183680", username: "Mason" },
          roles: ["539082325061836999"],
        },
        token: "A_UNIQUE_TOKEN",
        version: 1,
      });
    return signed(input, body, type, input.body === undefined ? input.id : undefined);
  },
  handshake(input) {
    const body = JSON.stringify({
      id: input.id,
      application_id: "775799577604948031",
      type: 1,
      token: "A_UNIQUE_TOKEN",
      version: 1,
    });
    return {
      request: signed(input, body, "ping", undefined),
      accepts(status, text) {
        try {
          return status === 200 && (JSON.parse(text) as { type?: unknown }).type === 1;
        } catch {
          return false;
        }
      },
    };
  },
};
