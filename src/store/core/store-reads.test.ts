import { describe, expect, it } from "vitest";
import { bindText } from "./read-driver.ts";
import type { SqlStatement } from "./sql-template.ts";
import { coreReads } from "./store-reads.ts";

describe("coreReads: Store reads written once over a driver's rows primitive", () => {
  it("binds `?` placeholders as each dialect does", () => {
    expect(bindText("postgres", "a = ? AND b < ?", [1, 2])).toEqual({
      text: "a = $1 AND b < $2",
      params: [1, 2],
    });
    expect(bindText("sqlite", "a = ?", [1]).text).toBe("a = ?");
  });

  it("reads tree heads, PostgreSQL's bigint text as numbers", async () => {
    const seen: SqlStatement[] = [];
    const row = { size: "7", root: Buffer.from("r"), signed_at: "1000", public_key: "ab" };
    const reads = coreReads({
      dialect: "postgres",
      table: (name) => `"s".${name}`,
      rows: async <Row>(statement: SqlStatement) => {
        seen.push(statement);
        return [{ ...row, signature: Buffer.from("s") }] as Row[];
      },
    });
    expect(await reads.treeHeadsSignedBy(1000.9, 5)).toEqual([
      { size: 7, root: row.root, signedAt: 1000, publicKey: "ab", signature: Buffer.from("s") },
    ]);
    expect(seen).toEqual([
      {
        text: `SELECT * FROM "s".audit_heads WHERE signed_at <= $1 ORDER BY size DESC, signed_at DESC LIMIT $2`,
        params: [1000, 5],
      },
    ]);
  });
});
