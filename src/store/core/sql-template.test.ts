import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../../errors.ts";
import { type SqlDialect, sqlStatement, sqlTag } from "./sql-template.ts";

/** Captures a tag's strings and values, to write them out like `tx.sql` does. */
const template = (strings: TemplateStringsArray, ...values: unknown[]) => ({ strings, values });

const writeOut = (dialect: SqlDialect, t: ReturnType<typeof template>) =>
  sqlStatement(dialect, t.strings, t.values);

/** The code a call rejects (or throws) with. */
async function codeOf(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (isHookinboxError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("sqlStatement", () => {
  const id = "ord_1";

  it("numbers placeholders on PostgreSQL and uses ? on SQLite, text otherwise unchanged", () => {
    const t = template`UPDATE orders SET paid = ${true} WHERE id = ${id} AND note <> '?'`;
    expect(writeOut("postgres", t)).toEqual({
      text: "UPDATE orders SET paid = $1 WHERE id = $2 AND note <> '?'",
      params: [true, "ord_1"],
    });
    expect(writeOut("sqlite", t)).toEqual({
      text: "UPDATE orders SET paid = ? WHERE id = ? AND note <> '?'",
      params: [1, "ord_1"],
    });
  });

  it("leaves a template without values as its text", () => {
    expect(writeOut("postgres", template`SELECT 1`)).toEqual({ text: "SELECT 1", params: [] });
    expect(writeOut("sqlite", template`SELECT 1`)).toEqual({ text: "SELECT 1", params: [] });
  });

  it("converts each kind of value for the dialect's driver", () => {
    const at = new Date("2026-12-05T08:00:00.123Z");
    const bytes = new Uint8Array([0, 255, 7]).subarray(1);
    const buffer = Buffer.from([1, 2]);
    const t = template`${false}${at}${42n}${bytes}${buffer}${null}${1.5}${"é"}`;

    const pg = writeOut("postgres", t);
    expect(pg.text).toBe("$1$2$3$4$5$6$7$8");
    expect(pg.params).toEqual([false, at, 42n, bytes, buffer, null, 1.5, "é"]);
    expect(pg.params[1]).toBe(at);

    const lite = writeOut("sqlite", t);
    expect(lite.text).toBe("????????");
    expect(lite.params.slice(0, 3)).toEqual([0, "2026-12-05T08:00:00.123Z", 42n]);
    expect(Buffer.isBuffer(lite.params[3])).toBe(true);
    expect([...(lite.params[3] as Buffer)]).toEqual([255, 7]);
    expect(lite.params[4]).toBe(buffer);
    expect(lite.params.slice(5)).toEqual([null, 1.5, "é"]);
  });

  it("refuses undefined, naming the parameter", async () => {
    const t = template`INSERT INTO t VALUES (${1}, ${undefined})`;
    for (const dialect of ["postgres", "sqlite"] as const) {
      expect(await codeOf(() => writeOut(dialect, t))).toBe("HOOKINBOX_SQL_VALUE_UNDEFINED");
      expect(() => writeOut(dialect, t)).toThrow(
        /undefined; pass null for SQL NULL: parameter 2 of 2$/,
      );
    }
  });

  it("refuses objects, arrays, functions, symbols and invalid Dates", async () => {
    const refused: unknown[] = [{ a: 1 }, [1, 2], () => 1, Symbol("s"), new Date(Number.NaN)];
    for (const value of refused) {
      for (const dialect of ["postgres", "sqlite"] as const) {
        expect(await codeOf(() => writeOut(dialect, template`SELECT ${value}`))).toBe(
          "HOOKINBOX_SQL_VALUE_UNSUPPORTED",
        );
      }
    }
    expect(() => writeOut("sqlite", template`SELECT ${[1]}`)).toThrow(
      /JSON.stringify an object: parameter 1 of 1 is an array$/,
    );
  });

  it("refuses a call that is not a tag", async () => {
    const plain = "SELECT 1" as unknown as TemplateStringsArray;
    expect(await codeOf(() => sqlStatement("sqlite", plain, []))).toBe(
      "HOOKINBOX_SQL_NOT_TEMPLATE",
    );
    const noRaw = ["SELECT ", ""] as unknown as TemplateStringsArray;
    expect(await codeOf(() => sqlStatement("postgres", noRaw, [1]))).toBe(
      "HOOKINBOX_SQL_NOT_TEMPLATE",
    );
    const t = template`SELECT ${1}`;
    expect(await codeOf(() => sqlStatement("postgres", t.strings, []))).toBe(
      "HOOKINBOX_SQL_NOT_TEMPLATE",
    );
  });
});

describe("sqlTag", () => {
  it("runs the written-out statement through query and answers what query answers", async () => {
    const ran: Array<[string, readonly unknown[]]> = [];
    const sql = sqlTag("postgres", async (text, params) => {
      ran.push([text, params]);
      return { rows: [{ id: "ord_1" }], rowCount: 1 };
    });
    const result = await sql<{ id: string }>`SELECT id FROM orders WHERE paid = ${true}`;
    expect(result).toEqual({ rows: [{ id: "ord_1" }], rowCount: 1 });
    expect(ran).toEqual([["SELECT id FROM orders WHERE paid = $1", [true]]]);
  });

  it("rejects (never throws synchronously) and runs nothing when refused", async () => {
    let runs = 0;
    const sql = sqlTag("sqlite", async () => {
      runs++;
      return { rows: [], rowCount: 0 };
    });
    const call = (sql as (...args: unknown[]) => Promise<unknown>)("SELECT 1");
    expect(call).toBeInstanceOf(Promise);
    await expect(call).rejects.toMatchObject({ code: "HOOKINBOX_SQL_NOT_TEMPLATE" });
    expect(runs).toBe(0);
  });
});
