import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { progressBar } from "../../src/cli/progress.ts";
import { terminalOutput } from "../../src/cli/terminal.ts";

function stream(tty: boolean) {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  Object.assign(out, { isTTY: tty });
  return { out, text: () => text };
}

describe("progressBar", () => {
  it("redraws one line in place on a terminal", () => {
    const s = stream(true);
    const bar = progressBar(terminalOutput(s.out), 1000, "events replayed");
    bar.update(500);
    bar.finish(1000);
    expect(s.text()).toBe(
      `\r[${"█".repeat(15)}${"░".repeat(15)}] 500/1000 events replayed` +
        `\r[${"█".repeat(30)}] 1000/1000 events replayed\n`,
    );
  });

  it("writes only a final line elsewhere (pipes, CI, cron), and copes with nothing to do", () => {
    const s = stream(false);
    const bar = progressBar(terminalOutput(s.out), 0, "events replayed");
    bar.update(0);
    bar.finish(0);
    expect(s.text()).toBe(`[${"█".repeat(30)}] 0/0 events replayed\n`);
  });
});
