import { Worker } from "node:worker_threads";
import { type ErrorCode, errorCodes, HookinboxError, hookinboxError } from "../../errors.ts";
import type { AcceptPlan } from "../core/accept-driver.ts";
import { sqlTag } from "../core/sql-template.ts";
import type { TransactionClient } from "../queue-types.ts";
import type { SqliteWriter } from "./writer.ts";
import type { WireError } from "./writer-thread-main.ts";

// Built JS (dist/) starts the thread's module directly; the TypeScript sources (a checkout, run
// through tsx) start a small .mjs that registers tsx inside the thread first.
const writerThreadEntry = import.meta.url.endsWith(".ts")
  ? "./writer-thread.mjs"
  : "./writer-thread-main.js";

interface Replies {
  replies: Array<{ id: number; ok: boolean; value?: unknown; error?: WireError }>;
  commits: number;
  largestBatch: number;
}

/**
 * The accept's body copied into an ArrayBuffer of its own, which the batch then transfers
 * (moves) to the writer thread. A request body is usually a slice of Node's 8 KiB Buffer pool,
 * and a structured clone of a view copies its whole backing buffer twice (serialise, then
 * deserialise); one copy of the body's own bytes and a transfer cost less (issue 15). The
 * caller's bytes stay untouched: the request may still read them.
 */
function ownBody(row: AcceptPlan, transfer: ArrayBuffer[]): AcceptPlan {
  const body = new Uint8Array(row.body.byteLength);
  body.set(row.body);
  transfer.push(body.buffer);
  return { ...row, body };
}

function unwire(error: WireError): Error {
  if (error.hookinbox) {
    const e = new HookinboxError(error.hookinbox.code as ErrorCode);
    e.message = error.hookinbox.message;
    return e;
  }
  const e = new Error(error.message) as Error & { code?: string };
  e.name = error.name;
  if (error.code) e.code = error.code;
  return e;
}

/**
 * A writer on its own thread. better-sqlite3 runs statements and the fsync of every COMMIT
 * synchronously; on the main thread that time is lost to HTTP and verification (bench:ingest:
 * BEGIN/COMMIT and the INSERTs were 44% of the gateway's busy time, with the second core idle).
 * Here they run beside it: the main thread sends named operations, the writer batches what
 * arrived while it was committing into one transaction, and replies after the COMMIT.
 *
 * @example
 * ```ts
 * const writer = await startThreadWriter({ path: "./hookinbox.db", busyTimeoutMs: 5000 });
 * await writer.migrate();
 * ```
 */
export async function startThreadWriter(options: {
  path: string;
  busyTimeoutMs: number;
  maxBatch?: number;
}): Promise<SqliteWriter> {
  const worker = new Worker(new URL(writerThreadEntry, import.meta.url), {
    workerData: options,
  });
  type Waiter = { resolve: (value: unknown) => void; reject: (error: unknown) => void };
  const pending = new Map<number, Waiter>();
  let nextId = 1;
  let nextTx = 1;
  let counters = { commits: 0, largestBatch: 0 };
  let exited: Error | null = null;

  const ready = new Promise<void>((resolve, reject) => {
    pending.set(0, { resolve: () => resolve(), reject });
  });
  // The thread keeps the process alive only while a reply is awaited: an idle writer lets a
  // process that never calls close() exit (a cron run of processAvailable, a script).
  const awaitReply = (id: number, waiter: Waiter) => {
    pending.set(id, waiter);
    if (pending.size === 1) worker.ref();
  };
  worker.on("message", (message: Replies) => {
    counters = { commits: message.commits, largestBatch: message.largestBatch };
    for (const reply of message.replies) {
      const waiter = pending.get(reply.id);
      if (!waiter) continue;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.value);
      else waiter.reject(unwire(reply.error!));
    }
    if (pending.size === 0) worker.unref();
  });
  const failAll = (error: Error) => {
    exited = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on("error", (error) => {
    // hookinbox's own errors (a path that cannot be opened) arrive with their code: keep them.
    const code = (error as { code?: unknown }).code;
    failAll(
      typeof code === "string" && errorCodes.includes(code as ErrorCode)
        ? unwire({ hookinbox: { code, message: error.message }, message: error.message, name: "" })
        : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", "the SQLite writer thread failed", error),
    );
  });
  worker.on("exit", () => failAll(hookinboxError("HOOKINBOX_STORE_CLOSED")));
  await ready;

  const call = <T>(message: Record<string, unknown>): Promise<T> => {
    if (exited) return Promise.reject(exited);
    flush(); // keep the order in which operations were issued
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      awaitReply(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...message, id });
    });
  };

  // Operations issued in the same turn travel in one message: one hop for a whole burst of
  // accepts, which the writer then commits together.
  let batch: Array<{ id: number; op: string; args: unknown[] }> = [];
  let transfer: ArrayBuffer[] = [];
  const flush = () => {
    if (batch.length === 0) return;
    const items = batch;
    const buffers = transfer;
    batch = [];
    transfer = [];
    worker.postMessage({ kind: "ops", items }, buffers);
  };
  const runOp = <T>(op: string, args: unknown[]): Promise<T> => {
    if (exited) return Promise.reject(exited);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      awaitReply(id, { resolve: resolve as (value: unknown) => void, reject });
      if (batch.length === 0) setImmediate(flush);
      batch.push({
        id,
        op,
        args: op === "insertOrGetEvent" ? [ownBody(args[0] as AcceptPlan, transfer)] : args,
      });
    });
  };

  return {
    migrate: () => call({ kind: "migrate" }),
    run: (op, ...args) => runOp(op, args),
    async exclusive(input, work) {
      const tx = nextTx++;
      await call({ kind: "xbegin", tx, input });
      const query: TransactionClient["query"] = (sql, params = []) =>
        call({ kind: "xquery", tx, sql, params: [...params] });
      const client: TransactionClient = {
        dialect: "sqlite",
        // The connection lives in the writer thread: statements go there through query().
        connection: null,
        query,
        // Converted here (booleans, Dates) so the thread gets what it binds as is.
        sql: sqlTag("sqlite", query),
      };
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(client);
      } catch (error) {
        await call({ kind: "xend", tx, commit: false });
        throw error;
      }
      await call({ kind: "xend", tx, commit: true });
      return result;
    },
    pragma: (name) => call({ kind: "pragma", name }),
    counters: () => counters,
    async close() {
      if (exited) return;
      try {
        flush(); // operations submitted before close() go first, and are committed
        await call({ kind: "close" });
      } finally {
        await worker.terminate();
      }
    },
  };
}
