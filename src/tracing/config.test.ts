import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve.ts";
import { isHookinboxError } from "../errors.ts";

describe("tracing in the config", () => {
  it("is off unless enabled", () => {
    expect(resolveConfig({}, {}).tracing).toEqual({ enabled: false });
    expect(resolveConfig({ tracing: {} }, {}).tracing).toEqual({ enabled: false });
    expect(resolveConfig({ tracing: { enabled: true } }, {}).tracing).toEqual({ enabled: true });
  });

  it("refuses an unknown key or a wrong type with HOOKINBOX_CONFIG_INVALID, naming the key", () => {
    for (const tracing of [{ enabled: "yes" }, { enabled: true, exporter: "otlp" }, true]) {
      let caught: unknown;
      try {
        resolveConfig({ tracing }, {});
      } catch (error) {
        caught = error;
      }
      expect(isHookinboxError(caught, "HOOKINBOX_CONFIG_INVALID")).toBe(true);
      expect((caught as Error).message).toContain("tracing");
    }
  });
});
