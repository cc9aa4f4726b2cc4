import { describe, expect, it } from "vitest";
import { readSse, type SseMessage } from "./listen-sse.ts";

async function parse(chunks: string[]): Promise<SseMessage[]> {
  async function* body() {
    for (const chunk of chunks) yield new TextEncoder().encode(chunk);
  }
  const out: SseMessage[] = [];
  for await (const message of readSse(body())) out.push(message);
  return out;
}

describe("readSse", () => {
  it("reads messages split anywhere, with LF, CRLF or CR line ends, skipping comments", async () => {
    const text =
      'retry: 1000\n: connected\n\nid: evt_1\nevent: webhook\ndata: {"a":1}\n\n: heartbeat\r\n\r\nid: evt_2\r\nevent: webhook\r\ndata: x\r\ndata: y\r\r';
    const whole = await parse([text]);
    expect(whole).toEqual([
      { id: "evt_1", event: "webhook", data: '{"a":1}' },
      { id: "evt_2", event: "webhook", data: "x\ny" },
    ]);
    // One byte at a time (a CRLF cut between its CR and LF included) reads the same.
    expect(await parse([...text])).toEqual(whole);
  });

  it("keeps the last id for messages without one, defaults the event to message, and drops a message cut off", async () => {
    expect(await parse(["id: 7\ndata: a\n\ndata: b\n\ndata: cut"])).toEqual([
      { id: "7", event: "message", data: "a" },
      { id: "7", event: "message", data: "b" },
    ]);
  });
});
