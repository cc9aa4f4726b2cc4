import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../errors.ts";
import {
  type ResolvedTransform,
  resolveTransform,
  runTransform,
  runTransforms,
} from "./transform.ts";

const subject = {
  id: "evt_01",
  source: "std",
  type: "t",
  receivedAt: "2026-12-06T00:00:00.000Z",
  target: "app",
};
const input = {
  body: new TextEncoder().encode('{"n":1,"deep":{"a":[1]}}'),
  headers: { "content-type": "application/json" },
};
const of = (fn: ResolvedTransform["fn"], timeoutMs = 1000): ResolvedTransform => ({
  fn,
  timeoutMs,
  where: "routes[0].transform",
});
const codeOf = async (run: Promise<unknown>) => {
  try {
    await run;
    return null;
  } catch (error) {
    return isHookinboxError(error) ? error.code : String(error);
  }
};

describe("runTransform", () => {
  it("gives a frozen deep copy: writes throw and reach nothing", async () => {
    let tried = "";
    const result = await runTransform(
      of((event) => {
        try {
          (event.json as { deep: { a: number[] } }).deep.a.push(2);
        } catch (error) {
          tried = (error as Error).name;
        }
        return { body: event.json };
      }),
      subject,
      input,
    );
    expect(tried).toBe("TypeError");
    expect(new TextDecoder().decode(result!.body)).toBe('{"n":1,"deep":{"a":[1]}}');
    expect(new TextDecoder().decode(input.body)).toBe('{"n":1,"deep":{"a":[1]}}');
  });

  it("turns bodies into bytes: strings as UTF-8, bytes as given, values as JSON; absent keeps", async () => {
    const text = await runTransform(
      of(() => ({ body: "é" })),
      subject,
      input,
    );
    expect([...text!.body]).toEqual([0xc3, 0xa9]);
    const bytes = await runTransform(
      of(() => ({ body: new Uint8Array([0, 255]) })),
      subject,
      input,
    );
    expect([...bytes!.body]).toEqual([0, 255]);
    const json = await runTransform(
      of(() => ({ body: [1], headers: { "X-A": "b" } })),
      subject,
      input,
    );
    expect(json!.headers).toEqual({ "x-a": "b", "content-type": "application/json" });
    const kept = await runTransform(
      of(() => ({})),
      subject,
      input,
    );
    expect(kept).toEqual(input);
  });

  it("refuses bad shapes with HOOKINBOX_TRANSFORM_INVALID", async () => {
    for (const output of [
      undefined,
      [],
      "text",
      { body: 1n },
      { extra: 1 },
      { headers: { "bad name": "x" } },
      { headers: { "x-a": "a\r\nb" } },
      { headers: { host: "evil" } },
      { headers: { "x-a": 1 } },
    ])
      expect(
        await codeOf(
          runTransform(
            of(() => output as never),
            subject,
            input,
          ),
        ),
      ).toBe("HOOKINBOX_TRANSFORM_INVALID");
  });

  it("a throw, a rejection and a hang have their codes; null drops; the chain stops at null", async () => {
    expect(
      await codeOf(
        runTransform(
          of(() => {
            throw new Error("boom");
          }),
          subject,
          input,
        ),
      ),
    ).toBe("HOOKINBOX_TRANSFORM_FAILED");
    expect(
      await codeOf(
        runTransform(
          of(() => Promise.reject(42)),
          subject,
          input,
        ),
      ),
    ).toBe("HOOKINBOX_TRANSFORM_FAILED");
    expect(
      await codeOf(
        runTransform(
          of(() => new Promise(() => undefined), 20),
          subject,
          input,
        ),
      ),
    ).toBe("HOOKINBOX_TRANSFORM_TIMEOUT");
    let second = 0;
    const chain = [
      of(() => null),
      of(() => {
        second++;
        return {};
      }),
    ];
    expect(await runTransforms(chain, subject, input)).toBeNull();
    expect(second).toBe(0);
  });

  it("resolveTransform: none, a function with its budget, and a path left unloaded", () => {
    expect(resolveTransform(undefined, undefined, "x")).toBeNull();
    expect(resolveTransform(() => null, "250ms", "x")?.timeoutMs).toBe(250);
    expect(resolveTransform(() => null, undefined, "x")?.timeoutMs).toBe(1000);
    expect(() => resolveTransform("./t.mjs", undefined, "routes[0].transform")).toThrow(
      /routes\[0\]\.transform: a module path is loaded from a config file only/,
    );
  });
});
