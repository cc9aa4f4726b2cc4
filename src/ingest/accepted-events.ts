// Which events a 2xx from ingest stored or found stored, carried beside the answer (never in its
// body): host adapters that act after the response (Next.js `after`, a Lambda) read it to process
// exactly those events. A registered symbol, so two copies of the package (ESM and CommonJS) agree.

const key = Symbol.for("hookinbox.acceptedEventIds");

/**
 * Marks an answer (an `InboxResponse` or a Web `Response`) with the ids of the events it accepted:
 * new ones and, for a duplicate, the original's. Handshakes that store nothing are marked `[]`.
 * Returns the same object.
 *
 * @example
 * ```ts
 * return withAcceptedEvents(jsonResponse(200, { ok: true, eventId }), [eventId]);
 * ```
 */
export function withAcceptedEvents<T extends object>(response: T, eventIds: readonly string[]): T {
  Object.defineProperty(response, key, { value: Object.freeze([...eventIds]), enumerable: false });
  return response;
}

/**
 * The event ids an answer was marked with, or `undefined` when it carries no mark (it did not
 * come from ingest).
 *
 * @example
 * ```ts
 * const ids = acceptedEventIds(response); // ["evt_01…"] after a stored event
 * ```
 */
export function acceptedEventIds(response: object): readonly string[] | undefined {
  const ids = (response as { [key]?: unknown })[key];
  return Array.isArray(ids) ? (ids as readonly string[]) : undefined;
}
