/**
 * What every provider scheme implements: verify a request on its raw bytes, and name where the
 * event's identity lives. Verification throws a `HookinboxError` with exactly one code per
 * defect (see src/errors.ts) and returns which secret matched (its index, never the secret).
 */

/** Read-only access to request headers by lower-case name. */
export interface HeaderReader {
  /** The header value, or undefined when absent. Repeated headers are joined with ", ". */
  get(name: string): string | undefined;
}

/** The parts of an HTTP request a verifier may look at. */
export interface SignedRequest {
  readonly method: string;
  /** Path and query exactly as received, e.g. `/webhooks/stripe?x=1`. */
  readonly url: string;
  readonly headers: HeaderReader;
  /** The raw body bytes, never re-serialised. */
  readonly body: Uint8Array;
}

/** One secret that is valid right now, with its index in the source's configured list. */
export interface ActiveSecret {
  readonly index: number;
  readonly value: string;
}

/** What a successful verification proves. */
export interface Verified {
  /** Index in the source's configured `secrets` of the secret that matched. */
  readonly secretIndex: number;
  /** The signed timestamp in ms since the epoch, where the scheme signs one. */
  readonly signedAt?: number;
}

/** Verifies one request against the currently active secrets. Throws HookinboxError. */
export interface Verifier {
  verify(request: SignedRequest, secrets: readonly ActiveSecret[], nowMs: number): Verified;
}

/** What an identity field reads: the parsed JSON body (lazily) and the headers. */
export interface IdentityContext {
  readonly headers: HeaderReader;
  /** The parsed JSON body; throws HOOKINBOX_BODY_INVALID_JSON when the body is not JSON. */
  json(): unknown;
}

/**
 * Where one identity field comes from: a JSON path into the body (`$.data.object.id`), a header
 * (`header:x-github-delivery`), or, in presets only, a function.
 */
export type IdentityField = string | ((context: IdentityContext) => unknown);

/** Where each part of an event's identity comes from. `id` is required for deduplication. */
export interface IdentitySpec {
  readonly id?: IdentityField;
  readonly type?: IdentityField;
  readonly orderingKey?: IdentityField;
  readonly version?: IdentityField;
  readonly occurredAt?: IdentityField;
}

/** A provider scheme bound to one source's options: its verifier and its identity defaults. */
export interface ProviderScheme {
  readonly provider: string;
  readonly verifier: Verifier;
  readonly identity: IdentitySpec;
}
