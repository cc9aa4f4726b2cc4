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

describe("compileRoutes transformFor", () => {
  const a = () => null;
  const b = () => null;
  const route = compileRoutes(new Map(), new Set(["app", "other"]), new Set(["stripe"]), [
    { from: "stripe", types: ["invoice.*"], where: { "$.live": true }, to: "app", transform: a },
    { from: "stripe", to: ["app", "other"], transform: b, transformTimeout: "2s" },
    { from: "stripe", to: "other" },
  ]);
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  it("is the transform of the first route, in configured order, that sends the event to the target", () => {
    expect(route.transformFor("app", "stripe", "invoice.paid", json({ live: true }))?.fn).toBe(a);
    expect(route.transformFor("app", "stripe", "invoice.paid", json({ live: false }))?.fn).toBe(b);
    expect(route.transformFor("other", "stripe", "invoice.paid", body)).toMatchObject({
      fn: b,
      timeoutMs: 2000,
      where: "routes[1].transform",
    });
    expect(route.transformFor("none", "stripe", "x", body)).toBeNull();
  });
});
