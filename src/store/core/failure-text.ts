import type { FailInput } from "../queue-types.ts";

/** Error messages are capped so that a huge message cannot bloat every listing. */
export const maxErrorMessage = 2000;
/** Stacks are kept on the attempt only, capped likewise. */
export const maxErrorStack = 8000;

/**
 * The failure as every store records it: its message and stack capped (`maxErrorMessage`,
 * `maxErrorStack`). Both stores apply it before their driver writes, so the drivers store the
 * text they receive.
 *
 * @example
 * ```ts
 * failDelivery: (input) => write("fail", withStoredError(input)),
 * ```
 */
export function withStoredError(input: FailInput): FailInput {
  const { message, stack } = input.error;
  if (message.length <= maxErrorMessage && (stack?.length ?? 0) <= maxErrorStack) {
    return input;
  }
  return {
    ...input,
    error: {
      message: message.slice(0, maxErrorMessage),
      stack: stack?.slice(0, maxErrorStack) ?? null,
    },
  };
}
