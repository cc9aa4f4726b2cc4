import { generateKeyPairSync } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/temp.ts";
import { isHookinboxError } from "../errors.ts";
import { auditKeyFile, loadAuditKey, parseAuditKey } from "./audit-key.ts";
import {
  encodeTreeHead,
  parseTreeHeadJson,
  publicKeyFromHex,
  publicKeyHex,
  signTreeHead,
  treeHeadJson,
  verifyTreeHead,
} from "./tree-head.ts";

// RFC 8032 §7.1 test 1: the secret key (seed) and its public key.
const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

describe("tree heads", () => {
  it("reads a key as a hex seed, a base64 seed or a PEM, all giving RFC 8032's public key", () => {
    const fromHex = parseAuditKey(SEED, "test");
    expect(publicKeyHex(fromHex)).toBe(PUBLIC);
    expect(publicKeyHex(parseAuditKey(Buffer.from(SEED, "hex").toString("base64"), "t"))).toBe(
      PUBLIC,
    );
    const pem = fromHex.export({ format: "pem", type: "pkcs8" }).toString();
    expect(publicKeyHex(parseAuditKey(pem, "t"))).toBe(PUBLIC);
    for (const bad of [
      "abc",
      "00",
      generateKeyPairSync("ec", { namedCurve: "P-256" })
        .privateKey.export({ format: "pem", type: "pkcs8" })
        .toString(),
    ]) {
      try {
        parseAuditKey(bad, "audit.key");
        expect.unreachable();
      } catch (error) {
        expect(isHookinboxError(error, "HOOKINBOX_AUDIT_KEY_INVALID")).toBe(true);
      }
    }
  });

  it("signs the documented bytes; any changed field or another key fails", () => {
    const key = parseAuditKey(SEED, "test");
    const root = Buffer.alloc(32, 7);
    const head = signTreeHead(key, { size: 8, root }, 1_767_225_600_000);
    expect(encodeTreeHead(head).toString("hex")).toBe(
      `${Buffer.from("hookinbox tree head v1\0").toString("hex")}0000000000000008${(1_767_225_600_000).toString(16).padStart(16, "0")}${root.toString("hex")}`,
    );
    const trusted = publicKeyFromHex(PUBLIC);
    expect(verifyTreeHead(head, trusted)).toBe(true);
    expect(parseTreeHeadJson(treeHeadJson(head))).toEqual(head);
    expect(verifyTreeHead({ ...head, size: 9 }, trusted)).toBe(false);
    expect(verifyTreeHead({ ...head, signedAt: head.signedAt + 1 }, trusted)).toBe(false);
    expect(verifyTreeHead({ ...head, root: Buffer.alloc(32, 8) }, trusted)).toBe(false);
    const other = generateKeyPairSync("ed25519").publicKey;
    expect(verifyTreeHead(head, other)).toBe(false);
  });

  it("makes a key file once (mode 0600) and reads the same key after", () => {
    const tmp = tempDir();
    try {
      const file = auditKeyFile(`sqlite:${join(tmp.dir, "db", "hookinbox.db")}`, "/elsewhere");
      expect(file).toBe(join(tmp.dir, "db", "audit-ed25519.pem"));
      expect(auditKeyFile("postgres://db/x", "/srv/app")).toBe(
        "/srv/app/.hookinbox/audit-ed25519.pem",
      );
      const first = loadAuditKey(null, file);
      expect(first.generated).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const again = loadAuditKey(null, file);
      expect(again.generated).toBe(false);
      expect(publicKeyHex(again.key)).toBe(publicKeyHex(first.key));
      expect(readFileSync(file, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(publicKeyHex(loadAuditKey(SEED, file).key)).toBe(PUBLIC);
    } finally {
      tmp.cleanup();
    }
  });
});
