/**
 * Splitting a verified JSON batch into items whose bytes are sliced verbatim from the raw body
 * (see {@link SplitItem}): HubSpot's top-level arrays, Adyen's `notificationItems`.
 */

import { hookinboxError } from "../errors.ts";
import { path as follow, utf8Text } from "./body.ts";
import { arrayItemSpans } from "./json-spans.ts";
import type { SplitItem } from "./types.ts";

/**
 * Splits a JSON body into the elements of the array at `path` (object keys from the root),
 * taking the member `itemKey` of each element when given. With an empty path and a root that is
 * not an array, the whole body is one item. A path that leads to no array gives no items.
 * Each item's `body` is a copy of its exact bytes in the request; `json` is their parse.
 *
 * @throws HookinboxError HOOKINBOX_BODY_INVALID_JSON when the body is not JSON.
 * @example
 * ```ts
 * splitJson(request.body, []);                                              // HubSpot
 * splitJson(request.body, ["notificationItems"], "NotificationRequestItem"); // Adyen
 * ```
 */
export function splitJson(
  bytes: Uint8Array,
  path: readonly string[],
  itemKey?: string,
): SplitItem[] {
  let root: unknown;
  try {
    root = JSON.parse(utf8Text(bytes));
  } catch (error) {
    throw hookinboxError("HOOKINBOX_BODY_INVALID_JSON", "a batch body must be JSON", error);
  }
  const target = path.length === 0 ? root : follow(root, ...path);
  if (!Array.isArray(target)) {
    return path.length === 0 ? [{ index: 0, json: root, body: bytes.slice() }] : [];
  }
  const spans = arrayItemSpans(bytes, path, itemKey) ?? [];
  return spans.map((span, index) => {
    const body = bytes.slice(span.start, span.end);
    return { index, json: JSON.parse(utf8Text(body)) as unknown, body };
  });
}
