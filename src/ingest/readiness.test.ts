import { describe, expect, it } from "vitest";
import { hookinboxError } from "../errors.ts";
import { createReadiness } from "./readiness.ts";

describe("readiness", () => {
  it("pings at most once per second however often it is asked, and follows failing accepts", async () => {
    let now = 0;
    let pings = 0;
    const readiness = createReadiness({
      ping: async () => {
        pings++;
      },
      now: () => now,
    });
    const answers = await Promise.all(Array.from({ length: 50 }, () => readiness.check()));
    expect(answers.every((a) => a.ok)).toBe(true);
    now = 999;
    await readiness.check();
    expect(pings).toBe(1);
    now = 1_000;
    await readiness.check();
    expect(pings).toBe(2);

    const error = hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", "disk full");
    readiness.recordAccept({ ok: false, error });
    expect(await readiness.check()).toEqual({ ok: false, error });
    now = 10_999;
    expect(await readiness.check()).toEqual({ ok: false, error });
    readiness.recordAccept({ ok: true });
    expect(await readiness.check()).toEqual({ ok: true });
    readiness.recordAccept({ ok: false, error });
    now = 21_000;
    expect(await readiness.check()).toEqual({ ok: true });
    expect(pings).toBe(4);
  });
});
