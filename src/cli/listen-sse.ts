/** One Server-Sent Events message. */
export interface SseMessage {
  /** The `id:` field, or null when the message had none. */
  readonly id: string | null;
  /** The `event:` field (`message` when absent). */
  readonly event: string;
  readonly data: string;
}

/**
 * Parses a Server-Sent Events body as it arrives (the WHATWG rules: lines end in LF, CRLF or
 * CR; `:` starts a comment; a blank line dispatches; `data:` lines join with LF). Ends when the
 * body ends; a body cut mid-message drops that message (the server sends it again on resume).
 *
 * @example
 * ```ts
 * for await (const message of readSse(response.body)) console.log(message.event, message.id);
 * ```
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | null = null;
  let event = "";
  let data: string[] = [];
  /** One line: a message when it is the blank line that ends one. */
  const line = (text: string): SseMessage | null => {
    if (text === "") {
      const message =
        data.length > 0 ? { id, event: event || "message", data: data.join("\n") } : null;
      event = "";
      data = [];
      return message;
    }
    if (text.startsWith(":")) return null;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
    return null;
  };
  /** The complete lines in the buffer; at the end, a last CR ends its line too. */
  function* lines(final: boolean): Generator<SseMessage> {
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      if (end === -1) return;
      // A CR at the end may be the first half of a CRLF: wait for more, unless nothing comes.
      if (!final && end === buffer.length - 1 && buffer[end] === "\r") return;
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
      const message = line(text);
      if (message) yield message;
    }
  }
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* lines(false);
  }
  yield* lines(true);
}
