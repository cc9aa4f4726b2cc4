/**
 * The operations layer: one schema and one function per admin operation, shared by the admin
 * API (a route table over these), the CLI (argv mapped onto these) and the OpenAPI document
 * (generated from the same schemas).
 */
export { auditKey, latestHead, proveConsistency, proveEvent, signHead } from "./audit.ts";
export { buildOverview, dashboardOverview, dashboardSearch, type Overview } from "./dashboard.ts";
export {
  listDeadLetters,
  listDeliveries,
  retryDeadLetters,
  retryDeliveriesNow,
  retryDelivery,
  showDelivery,
} from "./deliveries.ts";
export {
  destinationDeliveries,
  enableDestination,
  listDestinations,
  pauseDestination,
  resumeDestination,
  showDestination,
} from "./destinations.ts";
export { listEffects, resolveEffect } from "./effects.ts";
export { listEvents, listReceipts, showEvent } from "./events.ts";
export {
  defineOperation,
  type Operation,
  type OperationContext,
  parseInput,
  type ReplayRouting,
  runOperation,
} from "./operation.ts";
export { replayEvent, replayWhere } from "./replay.ts";
export {
  planReplayMatching,
  type Replayer,
  replayMatching,
  replayStoredEvent,
} from "./replay-policy.ts";
export { listRunbooks } from "./runbooks.ts";
export { stuckWork } from "./stuck.ts";
export { previewTransforms } from "./transform-preview.ts";
