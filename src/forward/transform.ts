import { parseDuration } from "../config/units.ts";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import { connectionHeaders } from "./forwarded-headers.ts";

/**
 * What a transform sees of an event: a frozen deep copy (changing it throws in strict code and
 * changes nothing stored). `headers` are the original headers this target would be sent (the
 * forwarding allowlist and the destination's `forwardHeaders`; never `authorization` or cookies),
 * lower-case; `body` is the body as UTF-8 text and `json` its parsed value, or undefined when the
 * body is not JSON.
 */
export interface TransformEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string | null;
  /** ISO 8601. */
  readonly receivedAt: string;
  /** The delivery target (a destination name) this call is for. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly json: unknown;
}

/**
 * What a transform returns: the body to send (a string as UTF-8, bytes as they are, any other
 * value as JSON with `content-type: application/json` unless `headers` name one; absent: the body
 * unchanged) and the headers (absent: unchanged; given: they replace the original headers, and
 * the destination's static headers and hookinbox's own still go on top). `null` drops the event
 * for this target (the delivery ends done, its attempt marked filtered).
 */
export interface TransformOutput {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A transform: the operator's own code, run in the gateway's process. */
export type Transform = (
  event: TransformEvent,
) => TransformOutput | null | Promise<TransformOutput | null>;

/** A transform ready to run: the function, its time budget per call, and where it is configured. */
export interface ResolvedTransform {
  readonly fn: Transform;
  readonly timeoutMs: number;
  /** The config key, e.g. `routes[0].transform` (for error messages; never a body). */
  readonly where: string;
}

/** The request a target gets: what transforms made of it, or the original. */
export interface TransformedRequest {
  readonly body: Uint8Array;
  /** The original headers that go to the target (lower-case), as the transforms left them. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The event fields a transform is given beside the body and headers. */
export interface TransformSubject {
  readonly id: string;
  readonly source: string;
  readonly type: string | null;
  readonly receivedAt: string;
  readonly target: string;
}

/** The default time budget of one transform call. */
export const defaultTransformTimeoutMs = 1000;

const utf8 = new TextDecoder("utf-8", { fatal: false });
const headerToken = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * The frozen deep copy a transform is given: fresh objects (the JSON parsed again from the text),
 * so nothing it does reaches the stored event or the next transform's input.
 *
 * @example
 * ```ts
 * const event = transformEvent(subject, { body, headers });
 * Object.isFrozen(event.headers); // true
 * ```
 */
export function transformEvent(
  subject: TransformSubject,
  request: TransformedRequest,
): TransformEvent {
  const body = utf8.decode(request.body);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return deepFreeze({
    id: subject.id,
    source: subject.source,
    type: subject.type,
    receivedAt: subject.receivedAt,
    target: subject.target,
    headers: { ...request.headers },
    body,
    json,
  });
}

function invalid(where: string, detail: string): never {
  throw hookinboxError("HOOKINBOX_TRANSFORM_INVALID", `${where} ${detail}`);
}

/** Checks a transform's answer and turns it into the request it describes. */
function outputToRequest(
  where: string,
  output: unknown,
  input: TransformedRequest,
): TransformedRequest {
  if (typeof output !== "object" || output === null || Array.isArray(output))
    invalid(where, "returned neither null nor an object { body, headers }");
  const { body, headers, ...rest } = output as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    invalid(
      where,
      `returned unknown keys (${extra.slice(0, 3).join(", ")}); expected body, headers`,
    );
  let nextHeaders: Record<string, string> = { ...input.headers };
  if (headers !== undefined) {
    if (typeof headers !== "object" || headers === null || Array.isArray(headers))
      invalid(where, "returned headers that are not an object of strings");
    nextHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (!headerToken.test(key)) invalid(where, `returned a header name that is not a token`);
      if (connectionHeaders.has(key)) invalid(where, `may not set the ${key} header`);
      if (typeof value !== "string" || /[\r\n\0]/.test(value))
        invalid(where, `returned header ${key} whose value is not a one-line string`);
      nextHeaders[key] = value;
    }
  }
  let nextBody = input.body;
  if (body instanceof Uint8Array) nextBody = body;
  else if (typeof body === "string") nextBody = Buffer.from(body, "utf8");
  else if (body !== undefined) {
    let text: string | undefined;
    try {
      text = JSON.stringify(body);
    } catch {
      text = undefined;
    }
    if (text === undefined) invalid(where, "returned a body that is not JSON-serialisable");
    nextBody = Buffer.from(text, "utf8");
    nextHeaders["content-type"] ??= "application/json";
  }
  return { body: nextBody, headers: nextHeaders };
}

/**
 * Runs one transform with its time budget: the request it returns, or null when it drops the
 * event. A throw or rejection is HOOKINBOX_TRANSFORM_FAILED (with the error's name and first
 * line of message), a promise still pending after `timeoutMs` HOOKINBOX_TRANSFORM_TIMEOUT, a bad
 * return shape HOOKINBOX_TRANSFORM_INVALID. A synchronous endless loop cannot be interrupted (it
 * holds the process's only thread): the timeout covers asynchronous work only.
 *
 * @example
 * ```ts
 * const next = await runTransform(transform, subject, { body, headers }); // null: filtered
 * ```
 */
export async function runTransform(
  transform: ResolvedTransform,
  subject: TransformSubject,
  input: TransformedRequest,
): Promise<TransformedRequest | null> {
  const event = transformEvent(subject, input);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          hookinboxError(
            "HOOKINBOX_TRANSFORM_TIMEOUT",
            `${transform.where} did not settle within ${transform.timeoutMs} ms`,
          ),
        ),
      transform.timeoutMs,
    );
    timer.unref?.();
  });
  let output: unknown;
  try {
    output = await Promise.race([Promise.resolve().then(() => transform.fn(event)), expired]);
  } catch (error) {
    if (isHookinboxError(error, "HOOKINBOX_TRANSFORM_TIMEOUT")) throw error;
    const { name = "Error", message = String(error) } = (error ?? {}) as {
      name?: string;
      message?: string;
    };
    throw hookinboxError(
      "HOOKINBOX_TRANSFORM_FAILED",
      `${transform.where} threw ${name}: ${String(message).split("\n")[0]}`,
      error,
    );
  } finally {
    clearTimeout(timer);
  }
  if (output === null) return null;
  return outputToRequest(transform.where, output, input);
}

/**
 * Runs transforms in order (a route's, then the destination's), each on what the one before
 * returned; null as soon as one drops the event.
 *
 * @example
 * ```ts
 * const request = await runTransforms([routeTransform, destinationTransform], subject, original);
 * ```
 */
export async function runTransforms(
  chain: readonly ResolvedTransform[],
  subject: TransformSubject,
  original: TransformedRequest,
): Promise<TransformedRequest | null> {
  let request: TransformedRequest | null = original;
  for (const transform of chain) {
    request = await runTransform(transform, subject, request);
    if (request === null) return null;
  }
  return request;
}

/**
 * A configured `transform` ready to run, or null without one. A module path still a string here
 * was not loaded by a config file (`createInbox` takes functions): HOOKINBOX_CONFIG_INVALID.
 *
 * @example
 * ```ts
 * resolveTransform((event) => null, "2s", "destinations.app.transform"); // { fn, timeoutMs: 2000, where }
 * ```
 */
export function resolveTransform(
  value: unknown,
  timeout: string | number | undefined,
  where: string,
): ResolvedTransform | null {
  if (value === undefined) return null;
  if (typeof value !== "function")
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `${where}: a module path is loaded from a config file only; pass the function itself to createInbox`,
    );
  return {
    fn: value as Transform,
    timeoutMs:
      timeout === undefined
        ? defaultTransformTimeoutMs
        : (parseDuration(timeout) ?? defaultTransformTimeoutMs),
    where,
  };
}
