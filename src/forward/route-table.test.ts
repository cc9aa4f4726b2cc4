import { describe, expect, it } from "vitest";
import { compileRoutes } from "./route-table.ts";

const body = new TextEncoder().encode("{}");

describe("compileRoutes types", () => {
  const route = compileRoutes(new Map(), new Set(["app"]), new Set(["stripe"]), [
    { from: "stripe", types: ["invoice.*", "a*z"], to: "app" },
  ]);

  it.each([
    ["invoice.paid", ["app"]],
    ["invoice.\n", ["app"]],
    ["invoice.paid\r\nforged", ["app"]],
    ["a\nz", ["app"]],
    ["a\r\n\nz", ["app"]],
    ["invoiceXpaid", []],
    ["customer\n.invoice.paid", []],
    ["a\nzz\nq", []],
  ] as const)("%j → %j (* matches any characters, newlines included)", (type, expected) => {
    expect(route("stripe", type, body)).toEqual(expected);
  });
});
