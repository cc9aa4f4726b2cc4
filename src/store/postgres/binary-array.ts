/** PostgreSQL's type oid of `bytea` (pg_type), the element type written in a bytea[]. */
const BYTEA_OID = 17;

/**
 * A `bytea[]` parameter in PostgreSQL's binary array format (array_recv): pg sends a Buffer
 * parameter as binary, so the statement gets the bytes as they are. An array of Buffers would
 * go as text instead: every byte as two hex digits, escaped by pg and parsed back by the server
 * (array_in and hex_decode were a fifth of PostgreSQL's CPU in the accept statement, pg's
 * escapeElement and hexSlice a few % of the gateway's). The statement must cast the parameter
 * (`$1::bytea[]`), so that the server knows its type.
 *
 * Layout: dimensions (1, or 0 when empty), has-nulls flag (0), element type oid, then per
 * dimension its length and lower bound (1), then per element its byte length and bytes; every
 * integer 4 bytes, big-endian.
 *
 * @example
 * ```ts
 * await pool.query("SELECT cardinality($1::bytea[])", [byteaArrayParam([Buffer.from("a")])]); // 1
 * ```
 */
export function byteaArrayParam(values: readonly Uint8Array[]): Buffer {
  if (values.length === 0) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(BYTEA_OID, 8);
    return empty;
  }
  let length = 20;
  for (const value of values) length += 4 + value.byteLength;
  const out = Buffer.allocUnsafe(length);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(0, 4);
  out.writeInt32BE(BYTEA_OID, 8);
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  for (const value of values) {
    out.writeInt32BE(value.byteLength, at);
    out.set(value, at + 4);
    at += 4 + value.byteLength;
  }
  return out;
}
