/**
 * Where a delivery without a version sorts in its ordering key: first, then by arrival (id).
 * Both drivers store it in `order_version` (SQL: `coalesce(version, versionlessPosition)`).
 *
 * @example
 * ```ts
 * const orderVersion = delivery.version ?? versionlessPosition;
 * ```
 */
export const versionlessPosition = -1e308;

/**
 * `versionlessPosition` as a SQL literal (the same number), for `coalesce(version, …)` in a
 * statement's text.
 *
 * @example
 * ```ts
 * const sql = `SELECT coalesce($1, ${versionlessSql})`; // coalesce($1, -1e+308)
 * ```
 */
export const versionlessSql = String(versionlessPosition);
