import { connect } from "node:net";

/** What came back on a raw TCP exchange. `status` is null when no status line arrived. */
export interface RawAnswer {
  readonly status: number | null;
  readonly text: string;
  /** The server closed the connection (rather than the wait running out). */
  readonly closedByServer: boolean;
}

/**
 * Writes raw bytes to `url`'s host and port over a fresh TCP socket and collects the answer
 * until the server closes the connection or `waitMs` passes. No HTTP client sits in between, so
 * request lines and headers arrive exactly as written.
 */
export function rawExchange(
  url: string,
  bytes: string | Uint8Array,
  waitMs = 3_000,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : null, text, closedByServer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset after the answer still counts as the server closing.
      if (error.code === "ECONNRESET" || error.code === "EPIPE") finish(true);
      else if (!done) {
        done = true;
        clearTimeout(timer);
        reject(error);
      }
    });
    socket.write(bytes);
  });
}
