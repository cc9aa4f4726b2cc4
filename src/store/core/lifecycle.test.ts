import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../../errors.ts";
import { storeLifecycle } from "./lifecycle.ts";

describe("storeLifecycle: one open/closed rule for both drivers", () => {
  it("guard makes close() wait for a compound operation's later steps", async () => {
    const life = storeLifecycle();
    const steps: string[] = [];
    let releaseWrite: () => void = () => undefined;
    const written = new Promise<void>((resolve) => {
      releaseWrite = resolve;
    });
    const driver = life.guard(
      {
        async replay() {
          await written;
          steps.push("write");
          await Promise.resolve();
          steps.push("read back");
          return 2;
        },
        stats: () => steps.length,
        close: () => life.close(async () => void steps.push("released")),
      },
      ["stats", "close"],
    );
    const replay = driver.replay();
    const closing = driver.close();
    releaseWrite();
    await closing;
    expect(await replay).toBe(2);
    expect(steps).toEqual(["write", "read back", "released"]);
    expect(driver.stats()).toBe(3);
    const refused = await driver.replay().catch((error: unknown) => error);
    expect(isHookinboxError(refused, "HOOKINBOX_STORE_CLOSED")).toBe(true);
  });
});
