import type Database from "better-sqlite3";
import { ulid } from "../../ids.ts";
import type { RejectionInput } from "../types.ts";

const insertRejectionSql = `
  INSERT INTO receipts (id, event_id, source, received_at, duplicate, remote_address, status,
                        code, size, header_names)
  VALUES (@id, NULL, @source, @receivedAt, 0, @remoteAddress, @status, @code, @size, @headerNames)`;

/**
 * Prepares the statement that records a rejected request as a receipt with no event: metadata,
 * status, error code and header names only — never the body or header values. Runs inside the
 * group commit's transaction, beside accepts.
 *
 * @example
 * ```ts
 * const record = prepareRecordRejection(db);
 * await groupCommit.submit(() => record({ source: "stripe", receivedAt: Date.now(),
 *   remoteAddress: "203.0.113.9", status: 401, code: "HOOKINBOX_SIGNATURE_MISMATCH",
 *   size: 812, headerNames: ["content-type", "stripe-signature"] }));
 * ```
 */
export function prepareRecordRejection(db: Database.Database): (input: RejectionInput) => string {
  const insertRejection = db.prepare<[RejectionRow]>(insertRejectionSql);
  return (input) => {
    const receivedAt = Math.floor(input.receivedAt);
    const id = `rcp_${ulid(receivedAt)}`;
    insertRejection.run({
      id,
      source: input.source,
      receivedAt,
      remoteAddress: input.remoteAddress,
      status: input.status,
      code: input.code,
      size: input.size,
      headerNames: JSON.stringify(input.headerNames),
    });
    return id;
  };
}

interface RejectionRow {
  id: string;
  source: string;
  receivedAt: number;
  remoteAddress: string | null;
  status: number;
  code: string;
  size: number;
  headerNames: string;
}
