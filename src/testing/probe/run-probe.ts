/**
 * The probe battery: what providers do to a receiver, checked one by one. Each check sends
 * samples built by the provider's sample (src/testing/samples), signed as the provider signs,
 * and states what a correct receiver answers. With an effects source it also checks that each
 * unique event produced exactly one effect and that the newest state of a resource won.
 */

import { type DeliveryResult, deliver, isSuccess, percentile, repeat } from "../deliver.ts";
import { alterOneByte } from "../samples/sign.ts";
import type { ProviderSample, SampleInput, SampleRequest } from "../samples/types.ts";
import { type AnswerBudget, answerBudget } from "./budgets.ts";
import { type EffectsReading, readEffects } from "./effects.ts";

/** The checks, in the order they run. */
export const probeChecks = [
  { id: 1, key: "duplicate-in-a-row", title: "same event twice in a row → both 2xx" },
  { id: 2, key: "duplicate-in-parallel", title: "same event 20× in parallel → all 2xx" },
  { id: 3, key: "altered-body", title: "valid signature, body altered by one byte → 4xx" },
  { id: 4, key: "stale-timestamp", title: "timestamp outside the provider's window → 4xx" },
  {
    id: 5,
    key: "re-serialised-json",
    title: "same JSON with other spacing → verified on raw bytes",
  },
  { id: 6, key: "unhandled-type", title: "unhandled event type → 2xx" },
  { id: 7, key: "out-of-order", title: "two events of one resource, newest first → newest wins" },
  { id: 8, key: "answer-time", title: "answer time p99 within the provider's timeout" },
] as const;

/** The stable key of a check (`duplicate-in-parallel`…), for reports and tests. */
export type ProbeCheckKey = (typeof probeChecks)[number]["key"];

/** One check's outcome. */
export interface ProbeCheckResult {
  readonly id: number;
  readonly key: ProbeCheckKey;
  readonly title: string;
  readonly outcome: "pass" | "fail" | "skip";
  /** One line: what was seen, and for a failure what it means. */
  readonly detail: string;
}

/** The whole report. */
export interface ProbeReport {
  readonly provider: string;
  readonly url: string;
  readonly budget: AnswerBudget;
  readonly checks: ProbeCheckResult[];
  /** True when no check failed. */
  readonly ok: boolean;
}

/** What the probe needs. */
export interface ProbeOptions {
  readonly url: string;
  readonly sample: ProviderSample;
  readonly secret: string;
  /** An effects source: an http(s) URL or a shell command (see ./effects.ts). */
  readonly effects?: string;
  /** Overrides the provider's answer-time budget, in ms. */
  readonly budgetMs?: number;
  /** How many identical requests check 2 sends at once (default 20). */
  readonly parallel?: number;
  /** Per-request timeout in ms (default: 3 × the budget, at least 30 s). */
  readonly timeoutMs?: number;
  /** How long effects must stay unchanged to count as settled, in ms (default 1 000). */
  readonly quietMs?: number;
  /** The longest wait for effects to appear, in ms (default 30 000). */
  readonly settleMs?: number;
  /** For an effects command: its working directory and environment. */
  readonly cwd?: string;
  readonly env?: Record<string, string | undefined>;
  /** Called after each check, for progress output. */
  readonly onCheck?: (result: ProbeCheckResult) => void;
}

const statusText = (r: DeliveryResult) =>
  r.status === 0 ? `no answer (${r.error ?? "?"})` : String(r.status);

function tally(results: readonly DeliveryResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) {
    const key = r.status === 0 ? "no answer" : String(r.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(", ");
}

/** JSON with other spacing: two-space indentation and a trailing newline, like Stripe's. */
function respaced(body: string): string | undefined {
  try {
    const pretty = `${JSON.stringify(JSON.parse(body), null, 2)}\n`;
    return pretty === body ? undefined : pretty;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the battery against `options.url` and resolves to the report; never throws for
 * anything the receiver does (a dead receiver fails checks, it does not crash the probe).
 *
 * @example
 * ```ts
 * const report = await runProbe({ url: "http://127.0.0.1:3000/webhooks/stripe", sample: stripeSample, secret });
 * if (!report.ok) process.exitCode = 1;
 * ```
 */
export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const { sample, secret } = options;
  const budget =
    options.budgetMs === undefined
      ? answerBudget(sample.provider)
      : { ms: options.budgetMs, basis: "set with --budget" };
  const timeoutMs = options.timeoutMs ?? Math.max(30_000, budget.ms * 3);
  const quietMs = options.quietMs ?? 1_000;
  const settleMs = options.settleMs ?? 30_000;
  const traits = sample.traits(secret);
  const timings: number[] = [];
  const checks: ProbeCheckResult[] = [];
  const run = Date.now().toString(36);
  let serial = 0;

  // Each event is about a resource of its own (unless a check says otherwise), so a receiver's
  // version guard never mistakes one check's event for a stale copy of another's.
  const newResource = () => `probe-${run}-${++serial}`;
  const input = (extra: Partial<SampleInput> = {}): SampleInput => ({
    secret,
    url: options.url,
    nowMs: Date.now(),
    id: sample.newId(),
    resource: newResource(),
    ...extra,
  });
  const send = async (request: SampleRequest) => {
    const result = await deliver(request, { timeoutMs });
    if (result.status !== 0) timings.push(result.ms);
    return result;
  };
  const record = (id: number, outcome: ProbeCheckResult["outcome"], detail: string) => {
    const check = probeChecks.find((c) => c.id === id);
    if (!check) throw new RangeError(`no check ${id}`);
    const result: ProbeCheckResult = { id, key: check.key, title: check.title, outcome, detail };
    checks.push(result);
    options.onCheck?.(result);
  };

  const effectsContext = { cwd: options.cwd ?? process.cwd(), env: options.env ?? process.env };
  const readOnce = (resource?: string): Promise<EffectsReading> =>
    readEffects(options.effects ?? "", resource, effectsContext);
  /** Polls until `done` holds and the reading has not changed for `quietMs` (or time is up). */
  const settle = async (
    done: (reading: EffectsReading) => boolean,
    resource?: string,
  ): Promise<EffectsReading> => {
    const deadline = Date.now() + settleMs;
    let last = await readOnce(resource);
    let changedAt = Date.now();
    for (;;) {
      if (done(last) && Date.now() - changedAt >= quietMs) return last;
      if (Date.now() > deadline) return last;
      await sleep(100);
      const next = await readOnce(resource);
      if (next.effects !== last.effects || next.state !== last.state) changedAt = Date.now();
      last = next;
    }
  };
  /** Sends, then checks (with --effects) that the effect count grew by exactly one. */
  const exactlyOneEffect = async (
    sendAll: () => Promise<DeliveryResult[]>,
  ): Promise<{ results: DeliveryResult[]; effects?: string }> => {
    if (options.effects === undefined) return { results: await sendAll() };
    const before = (await settle(() => true)).effects;
    const results = await sendAll();
    const after = (await settle((r) => r.effects >= before + 1)).effects;
    return {
      results,
      effects: after - before === 1 ? undefined : `${after - before} effects for one event`,
    };
  };
  const guarded = async (id: number, body: () => Promise<void>) => {
    try {
      await body();
    } catch (error) {
      record(id, "fail", `could not run: ${(error as Error).message}`);
    }
  };

  // 1. The same event twice in a row: both 2xx (and one effect).
  await guarded(1, async () => {
    const request = sample.build(input());
    const { results, effects } = await exactlyOneEffect(async () => [
      await send(request),
      await send(request),
    ]);
    const bad = results.filter((r) => !isSuccess(r.status));
    if (bad.length > 0)
      record(1, "fail", `answers ${results.map(statusText).join(", ")}; a duplicate must get 2xx`);
    else if (effects) record(1, "fail", `${effects}: the duplicate was processed again`);
    else record(1, "pass", `2 × 2xx${options.effects ? ", 1 effect" : ""}`);
  });

  // 2. The same event many times at once: all 2xx, never 409 or 5xx (and one effect).
  await guarded(2, async () => {
    const count = options.parallel ?? 20;
    const request = sample.build(input());
    const { results, effects } = await exactlyOneEffect(() =>
      repeat(count, count, 0, () => send(request)),
    );
    const bad = results.filter((r) => !isSuccess(r.status));
    if (bad.length > 0)
      record(
        2,
        "fail",
        `${tally(results)}; concurrent duplicates must all get 2xx (a unique constraint, not check-then-insert)`,
      );
    else if (effects)
      record(2, "fail", `${effects}: concurrent duplicates slipped past the dedup check`);
    else record(2, "pass", `${count} × 2xx${options.effects ? ", 1 effect" : ""}`);
  });

  // 3. A body altered by one byte under a signature that was valid for the original: 4xx.
  await guarded(3, async () => {
    if (traits.signs === "nothing") {
      record(3, "skip", `${sample.provider} does not sign the body with this secret`);
      return;
    }
    const request = sample.build(input());
    const body = (sample.tamper ?? alterOneByte)(request.body);
    const result = await send({ ...request, body });
    if (result.status >= 400 && result.status < 500) record(3, "pass", `${result.status}`);
    else
      record(3, "fail", `answered ${statusText(result)}; an altered body must be refused with 4xx`);
  });

  // 4. A timestamp outside the provider's window: 4xx.
  await guarded(4, async () => {
    if (traits.timestampWindowMs === undefined) {
      record(4, "skip", `${sample.provider} signs no timestamp`);
      return;
    }
    const stale = Date.now() - traits.timestampWindowMs - 600_000;
    const result = await send(sample.build(input({ nowMs: stale })));
    if (result.status >= 400 && result.status < 500) record(4, "pass", `${result.status}`);
    else
      record(
        4,
        "fail",
        `answered ${statusText(result)} to a request signed ${Math.round((Date.now() - stale) / 60_000)} min ago; replays must be refused`,
      );
  });

  // 5. Raw bytes: a compact body sent re-spaced under its signature is refused, and a body the
  //    provider signed with other spacing is accepted.
  await guarded(5, async () => {
    if (traits.signs !== "body" || traits.bodyFormat !== "json") {
      record(5, "skip", `${sample.provider}'s signature does not cover the JSON bytes`);
      return;
    }
    const compact = sample.build(input());
    const pretty = respaced(compact.body);
    if (pretty === undefined) {
      record(5, "skip", "the sample body cannot be re-spaced");
      return;
    }
    const forged = await send({ ...compact, body: pretty });
    const signedPretty = sample.build(
      input({ body: respaced(sample.build(input()).body) ?? pretty }),
    );
    const genuine = await send(signedPretty);
    if (!(forged.status >= 400 && forged.status < 500)) {
      record(
        5,
        "fail",
        `re-spaced body under the compact body's signature answered ${statusText(forged)}; verify the raw bytes, never re-serialised JSON`,
      );
    } else if (!isSuccess(genuine.status)) {
      record(
        5,
        "fail",
        `a body signed with 2-space indentation answered ${statusText(genuine)}; verify the raw bytes, never re-serialised JSON`,
      );
    } else {
      record(5, "pass", `re-spaced forgery ${forged.status}, re-spaced genuine ${genuine.status}`);
    }
  });

  // 6. An event type the receiver does not handle: 2xx (or the provider retries it for days).
  await guarded(6, async () => {
    const result = await send(sample.build(input({ type: sample.unhandledType })));
    if (isSuccess(result.status)) record(6, "pass", `${sample.unhandledType}: ${result.status}`);
    else
      record(
        6,
        "fail",
        `${sample.unhandledType} answered ${statusText(result)}; unhandled types must get 2xx`,
      );
  });

  // 7. Two events of one resource, the newest sent first: the newest state must win.
  await guarded(7, async () => {
    if (options.effects === undefined) {
      record(7, "skip", "needs --effects (a URL or command reporting the resource's state)");
      return;
    }
    const resource = newResource();
    const now = Math.floor(Date.now() / 1000);
    const newer = sample.build(input({ resource, sequence: now }));
    const older = sample.build(input({ resource, sequence: now - 60 }));
    const first = await send(newer);
    const second = await send(older);
    if (!isSuccess(first.status) || !isSuccess(second.status)) {
      record(7, "fail", `answers ${statusText(first)}, ${statusText(second)}; both must get 2xx`);
      return;
    }
    const reading = await settle((r) => r.state !== undefined, resource);
    const wins = [newer.version, newer.eventId].filter((v) => v !== undefined);
    if (reading.state !== undefined && wins.includes(reading.state)) {
      record(7, "pass", `state ${reading.state} (the newest)`);
    } else if (reading.state === undefined) {
      record(7, "fail", `no state reported for resource ${resource} within ${settleMs} ms`);
    } else {
      record(
        7,
        "fail",
        `state ${reading.state}, the newest was ${newer.version ?? newer.eventId}; a late, older event overwrote newer state (compare versions)`,
      );
    }
  });

  // 8. p99 answer time of every answered request above, against the provider's budget.
  const p99 = percentile(timings, 99);
  if (timings.length === 0) record(8, "fail", "no request was answered");
  else if (p99 <= budget.ms)
    record(8, "pass", `p99 ${p99.toFixed(0)} ms of ${budget.ms} ms (${timings.length} requests)`);
  else
    record(
      8,
      "fail",
      `p99 ${p99.toFixed(0)} ms over the ${budget.ms} ms budget (${budget.basis}); store, answer, then process`,
    );

  return {
    provider: sample.provider,
    url: options.url,
    budget,
    checks,
    ok: checks.every((c) => c.outcome !== "fail"),
  };
}
