/**
 * Reads a receiver's effect count (and a resource's state) for `hookinbox probe --effects`:
 * either an http(s) URL, fetched with GET (`?resource=<id>` appended when a resource is asked
 * about), or a shell command, run with `HOOKINBOX_PROBE_RESOURCE` set. The answer is a bare
 * integer (the number of effects so far), or JSON `{"effects": N, "state": S}` where `S` is
 * the version or the event id of the state the resource holds now.
 */

import { exec } from "node:child_process";

/** What an effects source reported. */
export interface EffectsReading {
  readonly effects: number;
  /** The resource's current version or event id, when a resource was asked about. */
  readonly state?: string;
}

/**
 * Parses an effects answer: a bare integer, or `{"effects": N, "state": S}`.
 *
 * @example
 * ```ts
 * parseEffects("3"); // { effects: 3 }
 * parseEffects('{"effects":2,"state":"evt_2"}'); // { effects: 2, state: "evt_2" }
 * ```
 */
export function parseEffects(text: string): EffectsReading {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { effects: Number(trimmed) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new Error(
      `expected an integer or {"effects": N, "state": S}, got ${JSON.stringify(trimmed.slice(0, 60))}`,
    );
  }
  const record = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<
    string,
    unknown
  >;
  const effects = record.effects;
  if (typeof effects !== "number" || !Number.isInteger(effects) || effects < 0) {
    throw new Error('the JSON answer needs "effects": a non-negative integer');
  }
  const state = record.state;
  return state === undefined || state === null ? { effects } : { effects, state: String(state) };
}

/**
 * Reads the effects source once. Throws an Error with a one-line reason when it cannot.
 *
 * @example
 * ```ts
 * await readEffects("http://127.0.0.1:3000/effects", "sub_1", { cwd, env }); // { effects: 4, state: "1700000060" }
 * ```
 */
export async function readEffects(
  source: string,
  resource: string | undefined,
  context: { cwd: string; env: Record<string, string | undefined> },
): Promise<EffectsReading> {
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    if (resource !== undefined) url.searchParams.set("resource", resource);
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok)
      throw new Error(`GET ${url.origin}${url.pathname} answered ${response.status}`);
    return parseEffects(await response.text());
  }
  const output = await new Promise<string>((resolve, reject) => {
    exec(
      source,
      {
        cwd: context.cwd,
        env: { ...context.env, HOOKINBOX_PROBE_RESOURCE: resource ?? "" },
        timeout: 30_000,
        maxBuffer: 64 * 1024,
      },
      (error, stdout) =>
        error
          ? reject(new Error(`the effects command failed: ${error.message.split("\n")[0]}`))
          : resolve(stdout),
    );
  });
  return parseEffects(output);
}
