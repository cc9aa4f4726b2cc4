import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { errorCodes, HookinboxError, isHookinboxError, kindOf } from "./errors.ts";
import { EffectHeldError, IllegalTransitionError, PermanentError } from "./handlers/errors.ts";

const docsDir = new URL("../docs/", import.meta.url);
const reference = readFileSync(new URL("errors.md", docsDir), "utf8");
/** Codes in the reference's tables: the first cell of each row. */
const documented = [...reference.matchAll(/^\| `(HOOKINBOX_[A-Z0-9_]+)` +\|/gm)].map(
  (m) => m[1] ?? "",
);

/** Every HOOKINBOX_* code named anywhere in the docs or the README (env names excluded). */
function codesNamedInDocs(): Map<string, string> {
  const files = readdirSync(docsDir)
    .filter((name) => name.endsWith(".md"))
    .map((name) => new URL(name, docsDir));
  files.push(new URL("../README.md", import.meta.url));
  const named = new Map<string, string>();
  for (const file of files) {
    for (const match of readFileSync(file, "utf8").matchAll(/\bHOOKINBOX_[A-Z0-9_]+\b/g)) {
      named.set(match[0], file.pathname.split("/").slice(-2).join("/"));
    }
  }
  return named;
}

/** Environment variables and placeholders that share the prefix but are not error codes. */
const notCodes = new Set([
  "HOOKINBOX_ADMIN_TOKEN",
  "HOOKINBOX_AUDIT_KEY",
  "HOOKINBOX_ENV",
  "HOOKINBOX_SECRET",
]);

describe("the error registry and docs/errors.md", () => {
  it("documents every registered code exactly once", () => {
    const missing = errorCodes.filter((code) => !documented.includes(code));
    expect(missing).toEqual([]);
    expect(documented.length).toBe(new Set(documented).size);
  });

  it("documents no code that no longer exists", () => {
    const registered = new Set<string>(errorCodes);
    expect(documented.filter((code) => !registered.has(code))).toEqual([]);
  });

  it("names no unknown code anywhere in the docs or the README", () => {
    const registered = new Set<string>(errorCodes);
    const unknown = [...codesNamedInDocs()]
      .filter(([code]) => !registered.has(code) && !notCodes.has(code))
      .filter(([code]) => !code.startsWith("HOOKINBOX_PROBE_") && !code.endsWith("_"))
      .map(([code, file]) => `${code} in ${file}`);
    expect(unknown).toEqual([]);
  });
});

describe("handler errors", () => {
  it("are HookinboxErrors of kind handler that keep the handler's own message", () => {
    const permanent = new PermanentError("order does not exist");
    expect(isHookinboxError(permanent, "HOOKINBOX_PERMANENT")).toBe(true);
    expect(permanent.message).toBe("order does not exist");
    expect(`${permanent.name}: ${permanent.message}`).toBe("PermanentError: order does not exist");
    expect(kindOf(permanent.code)).toBe("handler");

    const illegal = new IllegalTransitionError("expired", "active");
    expect(isHookinboxError(illegal, "HOOKINBOX_ILLEGAL_TRANSITION")).toBe(true);
    expect(illegal).toBeInstanceOf(PermanentError);

    const held = new EffectHeldError("refund", "eff_1");
    expect(isHookinboxError(held, "HOOKINBOX_EFFECT_HELD")).toBe(true);
    expect(held.status).toBe(409);
    expect(held.name).toBe("EffectHeldError");
  });

  it("leaves hookinbox's own errors of kind hookinbox with the registry message first", () => {
    const error = new HookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected stripe-signature");
    expect(kindOf(error.code)).toBe("hookinbox");
    expect(error.message).toBe("Signature header is missing: expected stripe-signature");
  });
});
