import type { TerminalOutput } from "./terminal.ts";

/** A progress display on a stream: a bar redrawn in place on a terminal, one final line otherwise. */
export interface Progress {
  update(done: number): void;
  finish(done: number): void;
}

const width = 30;

/**
 * A text progress bar for long CLI operations. On a TTY it redraws one line (`\r`) at each
 * update; elsewhere (pipes, CI logs, cron) it stays silent until `finish`, which writes one line.
 *
 * @example
 * ```ts
 * const progress = progressBar(terminalOutput(process.stderr), 1200, "events replayed");
 * progress.update(500);
 * progress.finish(1200); // "[██████████████████████████████] 1200/1200 events replayed"
 * ```
 */
export function progressBar(stream: TerminalOutput, total: number, label: string): Progress {
  const tty = stream.isTTY;
  const line = (done: number) => {
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(ratio * width);
    return `[${"█".repeat(filled)}${"░".repeat(width - filled)}] ${done}/${total} ${label}`;
  };
  return {
    update(done) {
      if (tty) stream.redrawLine(line(done));
    },
    finish(done) {
      if (tty) stream.redrawLine(`${line(done)}\n`);
      else stream.write(`${line(done)}\n`);
    },
  };
}
