/**
 * Forwarding hops: every request hookinbox forwards carries `hookinbox-hops`, how many times
 * hookinbox has forwarded this event's content (1 for an event that came from a provider), so a
 * destination that leads back into a hookinbox (itself, or a second gateway forwarding to the
 * first) is stopped after `http.maxHops` instead of turning one event into an endless stream.
 */

/** The header that counts how many times hookinbox has forwarded a request. */
export const hopsHeader = "hookinbox-hops";
/** The header signing `hookinbox-hops` with the destination's secrets. */
export const hopsSignatureHeader = "hookinbox-hops-signature";
/** Requests that passed through hookinbox more often than this are refused by default. */
export const defaultMaxHops = 3;

/**
 * What `hookinbox-hops-signature` signs: `hookinbox-hops.<hops>.<id>.<timestamp>` (the prefix
 * keeps it apart from a `webhook-signature`, which begins with the id).
 *
 * @example
 * ```ts
 * hopsSignedContent(2, "evt_01J…:app", "1767225600"); // "hookinbox-hops.2.evt_01J…:app.1767225600"
 * ```
 */
export function hopsSignedContent(hops: number, id: string, timestamp: string): string {
  return `hookinbox-hops.${hops}.${id}.${timestamp}`;
}

const wholeNumber = /^\s*(\d{1,9})\s*$/;

/**
 * Reads a `hookinbox-hops` value: 0 when absent, the largest of repeated values (joined with
 * ", "), null when any part is not a whole number (never trusted as 0: hookinbox only writes
 * decimal integers).
 *
 * @example
 * ```ts
 * readHops(undefined); // 0
 * readHops("2");       // 2
 * readHops("1, 3");    // 3
 * readHops("two");     // null
 * ```
 */
export function readHops(value: string | undefined): number | null {
  if (value === undefined) return 0;
  let hops = 0;
  for (const part of value.split(",")) {
    const match = wholeNumber.exec(part);
    if (!match) return null;
    hops = Math.max(hops, Number(match[1]));
  }
  return hops;
}

/**
 * The hops of a stored event, from its request headers as received (names in any case).
 *
 * @example
 * ```ts
 * storedHops([["Hookinbox-Hops", "2"], ["content-type", "application/json"]]); // 2
 * ```
 */
export function storedHops(headers: ReadonlyArray<readonly [string, string]>): number | null {
  const values = headers.filter(([name]) => name.toLowerCase() === hopsHeader).map(([, v]) => v);
  return readHops(values.length === 0 ? undefined : values.join(", "));
}
