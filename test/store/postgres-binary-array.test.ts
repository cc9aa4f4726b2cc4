import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteaArrayParam } from "../../src/store/postgres/binary-array.ts";
import { postgresServerUrl } from "../helpers/postgres.ts";

// The accept statement sends bodies and audit leaves as one binary bytea[] parameter each: the
// bytes PostgreSQL reads back must be exactly the ones given, element by element.

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: postgresServerUrl() });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

describe("byteaArrayParam", () => {
  it("writes PostgreSQL's binary array layout", () => {
    expect(byteaArrayParam([Buffer.from("ab"), Buffer.alloc(0)]).toString("hex")).toBe(
      "00000001" + // 1 dimension
        "00000000" + // no nulls
        "00000011" + // element type oid 17 (bytea)
        "00000002" + // 2 elements
        "00000001" + // lower bound 1
        "00000002" +
        "6162" + // "ab"
        "00000000", // empty
    );
    expect(byteaArrayParam([]).toString("hex")).toBe("000000000000000000000011");
  });

  it("40 arrays of 0 to 20 random byte strings (0 to 3,000 bytes) come back from PostgreSQL byte for byte", async () => {
    for (let i = 0; i < 40; i++) {
      const values = Array.from({ length: (i * 7) % 21 }, (_, k) =>
        randomBytes((i * 131 + k * 977) % 3001),
      );
      const { rows } = await client.query<{ values: Buffer[]; n: number }>(
        "SELECT $1::bytea[] AS values, cardinality($1::bytea[]) AS n",
        [byteaArrayParam(values)],
      );
      expect(rows[0]!.n).toBe(values.length);
      expect(rows[0]!.values).toEqual(values);
    }
  });
});
