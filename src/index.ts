/**
 * hookinbox: an inbox for webhooks. Verify on raw bytes, store once under a unique constraint,
 * answer fast.
 *
 * @example
 * ```ts
 * import { createInbox, stripe, toNodeListener } from "hookinbox";
 * const inbox = createInbox({ sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] }) } });
 * http.createServer(toNodeListener(inbox)).listen(8080);
 * ```
 */
export { captureRawBody, expressHandler } from "./adapters/express.ts";
export { fastifyPlugin } from "./adapters/fastify.ts";
export { toFetchHandler } from "./adapters/fetch.ts";
export { toNodeListener } from "./adapters/node.ts";
export type { AlertNotice, EffectHeldAlert } from "./alerts/types.ts";
export {
  defineConfig,
  type HookinboxConfig,
  type SecretConfig,
  type SourceConfig,
} from "./config/index.ts";
export {
  type ErrorCode,
  errorCodes,
  type HandlerErrorCode,
  HookinboxError,
  isHookinboxError,
  kindOf,
} from "./errors.ts";
export type { Transform, TransformEvent, TransformOutput } from "./forward/transform.ts";
export {
  EffectHeldError,
  IllegalTransitionError,
  isPermanent,
  PermanentError,
} from "./handlers/errors.ts";
export { idempotencyKey } from "./handlers/idempotency-key.ts";
export { type StateMachine, stateMachine, type Transitions } from "./handlers/state-machine.ts";
export type {
  EffectOptions,
  Handler,
  HandlerContext,
  HandlerEvent,
} from "./handlers/types.ts";
export { createInbox, type Inbox, type InboxOptions } from "./inbox.ts";
export type { InboxRequest, InboxResponse } from "./ingest/request.ts";
export type { SourceHelper } from "./providers/definition.ts";
export type { KeyFetcher, KeyFetchRequest, KeyFetchResponse } from "./providers/keys/index.ts";
export { type PubsubMessage, pubsubMessage } from "./providers/pubsub.ts";
// The source helpers, one per provider: stripe({ secrets }), github(…), … (derived from the registry).
export * from "./providers/registry.ts";
export type {
  ProcessAvailableOptions,
  ProcessAvailableResult,
} from "./queue/process-available.ts";
export type { Worker } from "./queue/worker.ts";
export type { SqlValue } from "./store/core/sql-template.ts";
export type {
  AttemptView,
  DeadLetterAlert,
  DeliveryStatus,
  DeliveryView,
  EffectView,
  ReplayFilter,
  StuckReport,
  TransactionClient,
} from "./store/queue-types.ts";
export type { EventDetail, EventIdentity, EventSummary, Store } from "./store/types.ts";
