import type { CompleteInput } from "../../queue-types.ts";

/**
 * What the destination answered, per delivery, as rows `r(id, worker, attempt, status, headers,
 * body, latency_ms, error_class)` from one jsonb parameter (`param`, e.g. `$6`; see responsesValue). An end
 * statement joins them to the attempt it ends and writes them in the same UPDATE (responseSetSql),
 * so a forwarded attempt's row is updated once, not once for the response and again for its end.
 *
 * @example
 * ```ts
 * const sql = `UPDATE attempts a SET ${responseSetSql("r")} FROM ending e
 *   LEFT JOIN ${attemptResponsesSql("$6")} ON ${responseJoinSql("r", "e")} WHERE a.delivery_id = e.id`;
 * ```
 */
export function attemptResponsesSql(param: string): string {
  return `jsonb_to_recordset(${param}::jsonb) AS r(id text, worker text, attempt int, status int,
    headers jsonb, body text, latency_ms int, error_class text, request_bytes int,
    request_sha256 text, filtered boolean)`;
}

/**
 * The join of attemptResponsesSql's rows `alias` to the ending attempts `ending` (columns `id`,
 * `worker`, `attempt`): a delivery named twice in one batch gets only its own attempt's response.
 *
 * @example
 * ```ts
 * `… LEFT JOIN ${attemptResponsesSql("$6")} ON ${responseJoinSql("r", "e")}`;
 * ```
 */
export function responseJoinSql(alias: string, ending: string): string {
  return `${alias}.id = ${ending}.id AND ${alias}.worker = ${ending}.worker AND ${alias}.attempt = ${ending}.attempt`;
}

/**
 * The attempt columns of attemptResponsesSql's rows named `alias`, for an UPDATE's SET list: an
 * attempt ended without a response (a handler's, or no row for it) keeps its own values.
 *
 * @example
 * ```ts
 * `UPDATE attempts a SET ended_at = e.now, ${responseSetSql("r")} FROM …`;
 * ```
 */
export function responseSetSql(alias: string): string {
  const kept = (column: string, value: string) =>
    `${column} = CASE WHEN ${alias}.id IS NULL THEN a.${column} ELSE ${alias}.${value} END`;
  return [
    kept("response_status", "status"),
    kept("response_headers", "headers"),
    kept("response_body", "body"),
    kept("latency_ms", "latency_ms"),
    kept("error_class", "error_class"),
    kept("request_bytes", "request_bytes"),
    kept("request_sha256", "request_sha256"),
    kept("filtered", "filtered"),
  ].join(", ");
}

/**
 * The jsonb parameter of attemptResponsesSql for `inputs`: one element per input that carries a
 * response (latency rounded to whole ms), `[]` when none does.
 *
 * @example
 * ```ts
 * const values = [...endingValues(inputs), "done", responsesValue(inputs)];
 * ```
 */
export function responsesValue(inputs: readonly CompleteInput[]): string {
  return JSON.stringify(
    inputs.flatMap((i) =>
      i.response
        ? [
            {
              id: i.deliveryId,
              worker: i.workerId,
              attempt: i.attempt,
              status: i.response.status,
              headers: i.response.headers,
              body: i.response.body,
              latency_ms: Math.round(i.response.latencyMs),
              error_class: i.response.errorClass,
              request_bytes: i.response.request?.bytes ?? null,
              request_sha256: i.response.request?.sha256 ?? null,
              filtered: i.response.filtered === true,
            },
          ]
        : [],
    ),
  );
}
