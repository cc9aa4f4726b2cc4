/** One step of a compiled JSON path: an object key or an array index. */
type Step = string | number;

const cache = new Map<string, Step[]>();

/**
 * Compiles `$.a.b[0].c` into steps (cached). Only the plain subset is supported: `$`, `.key`,
 * `[index]`; the config schema rejects anything else at boot.
 *
 * @example
 * ```ts
 * compileJsonPath("$.data.object.id"); // ["data", "object", "id"]
 * ```
 */
export function compileJsonPath(path: string): Step[] {
  const cached = cache.get(path);
  if (cached) return cached;
  if (!path.startsWith("$")) throw new Error(`JSON path must start with $: ${path}`);
  const steps: Step[] = [];
  const pattern = /\.([^.[\]]+)|\[(\d+)\]/gy;
  pattern.lastIndex = 1;
  while (pattern.lastIndex < path.length) {
    const match = pattern.exec(path);
    if (!match) throw new Error(`unsupported JSON path: ${path}`);
    steps.push(match[1] !== undefined ? match[1] : Number(match[2]));
  }
  cache.set(path, steps);
  return steps;
}

/**
 * Reads the value at a JSON path, or undefined when any step is missing.
 *
 * @example
 * ```ts
 * readJsonPath({ data: { object: { id: "sub_1" } } }, "$.data.object.id"); // "sub_1"
 * ```
 */
export function readJsonPath(value: unknown, path: string): unknown {
  let current = value;
  for (const step of compileJsonPath(path)) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}
