// The SQLite writer thread: owns the writing connection, the group commit and the write
// operations; the main thread sends named operations and gets plain-data results back.
import { parentPort, workerData } from "node:worker_threads";
import { HookinboxError } from "../../errors.ts";
import type { EndPlan } from "../core/end-plan.ts";
import { openConnection } from "./connection.ts";
import { GroupCommit } from "./group-commit.ts";
import { migrateSqlite } from "./migrate.ts";
import { createTransactionClient } from "./transaction-client.ts";
import { prepareWriteOps, type WriteOps } from "./write-ops.ts";

/** Messages from the main thread. */
export type ToWriter =
  | { kind: "migrate"; id: number }
  | { kind: "ops"; items: Array<{ id: number; op: keyof WriteOps; args: unknown[] }> }
  | { kind: "xbegin"; id: number; tx: number; input: EndPlan }
  | { kind: "xquery"; id: number; tx: number; sql: string; params: unknown[] }
  | { kind: "xend"; id: number; tx: number; commit: boolean }
  | { kind: "pragma"; id: number; name: string }
  | { kind: "close"; id: number };

/** A serialised error: hookinbox's own keep their code and message. */
export interface WireError {
  readonly hookinbox?: { code: string; message: string };
  readonly message: string;
  readonly code?: string;
  readonly name: string;
}

const port = parentPort!;
const options = workerData as {
  path: string;
  busyTimeoutMs: number;
  maxBatch?: number;
};
const db = openConnection(options.path, options.busyTimeoutMs);
const group = new GroupCommit(
  db,
  options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch },
);
let ops: WriteOps | undefined;
const transactions = new Map<number, { end: (commit: boolean) => void }>();
const exclusiveResults = new Map<number, Promise<void>>();

function wire(error: unknown): WireError {
  if (error instanceof HookinboxError) {
    return {
      hookinbox: { code: error.code, message: error.message },
      message: error.message,
      name: error.name,
    };
  }
  const e = error as { message?: unknown; code?: unknown; name?: unknown };
  return {
    message: String(e?.message ?? error),
    ...(typeof e?.code === "string" ? { code: e.code } : {}),
    name: typeof e?.name === "string" ? e.name : "Error",
  };
}

// Replies of one turn go back in one message (one hop for a whole group commit).
let outbox: Array<{ id: number; ok: boolean; value?: unknown; error?: WireError }> = [];
function send(entry: { id: number; ok: boolean; value?: unknown; error?: WireError }): void {
  if (outbox.length === 0) {
    setImmediate(() => {
      const replies = outbox;
      outbox = [];
      port.postMessage({ replies, commits: group.commits, largestBatch: group.largestBatch });
    });
  }
  outbox.push(entry);
}
const reply = (id: number, value: unknown) => send({ id, ok: true, value });
const fail = (id: number, error: unknown) => send({ id, ok: false, error: wire(error) });

function settle(id: number, work: () => unknown): void {
  Promise.resolve()
    .then(work)
    .then(
      (value) => reply(id, value),
      (error) => fail(id, error),
    );
}

const toBuffer = (value: unknown) =>
  value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value) : value;

port.on("message", (message: ToWriter) => {
  switch (message.kind) {
    case "migrate":
      settle(message.id, () => {
        const report = migrateSqlite(db);
        ops = prepareWriteOps(db, group);
        return report;
      });
      return;
    case "ops":
      // Submitted synchronously, all of them, so they share the next group commit.
      for (const item of message.items) {
        if (!ops) {
          fail(
            item.id,
            new HookinboxError(
              "HOOKINBOX_STORE_UNAVAILABLE",
              "schema is missing; run migrate() first",
            ),
          );
          continue;
        }
        const current = ops;
        group
          .submit(() => (current[item.op] as (...a: unknown[]) => unknown)(...item.args))
          .then(
            (value) => reply(item.id, value),
            (error) => fail(item.id, error),
          );
      }
      return;
    case "xbegin": {
      // The transaction stays open until "xend"; its queries arrive as "xquery" messages.
      let begun = false;
      const done = group.exclusive(
        () =>
          new Promise<void>((resolve, reject) => {
            if (!ops) throw new Error("the writer thread was used before migrate()");
            ops.endHeld(message.input);
            begun = true;
            transactions.set(message.tx, {
              end: (commit) =>
                commit ? resolve() : reject(new Error("rolled back by the handler")),
            });
            reply(message.id, null);
          }),
      );
      done.then(
        () => undefined,
        (error) => {
          if (!begun) fail(message.id, error);
        },
      );
      exclusiveResults.set(message.tx, done);
      return;
    }
    case "xquery":
      settle(message.id, async () => {
        const client = createTransactionClient(db);
        return client.query(message.sql, message.params.map(toBuffer));
      });
      return;
    case "xend": {
      const transaction = transactions.get(message.tx);
      const result = exclusiveResults.get(message.tx);
      transactions.delete(message.tx);
      exclusiveResults.delete(message.tx);
      transaction?.end(message.commit);
      settle(message.id, async () => {
        try {
          await result;
        } catch (error) {
          if (!message.commit) return null;
          throw error;
        }
        return null;
      });
      return;
    }
    case "pragma":
      settle(message.id, () => db.pragma(message.name, { simple: true }));
      return;
    case "close":
      settle(message.id, async () => {
        await group.close();
        db.close();
        return null;
      });
      return;
  }
});

reply(0, "ready");
