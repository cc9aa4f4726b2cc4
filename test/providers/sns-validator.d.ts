/** Types for sns-validator 0.3.5 (it ships none): the part the SNS tests use as an oracle. */
declare module "sns-validator" {
  export default class MessageValidator {
    constructor(hostPattern?: RegExp, encoding?: string);
    validate(
      message: string | Record<string, unknown>,
      callback: (error: Error | null, message?: Record<string, unknown>) => void,
    ): void;
  }
}
