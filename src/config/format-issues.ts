import type { z } from "zod";
import { providerNames } from "../providers/all.ts";

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const part of path) value = (value as Record<PropertyKey, unknown> | undefined)?.[part];
  return value;
}

/** "unknown provider "strip" (did you mean "stripe"?); must be one of …" (the registry's names). */
function unknownProvider(given: unknown): string {
  const list = `must be one of ${providerNames.map((p) => `"${p}"`).join(", ")}`;
  if (typeof given !== "string") return list;
  const closest = providerNames
    .map((name) => ({ name, d: editDistance(name, given.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  const hint =
    closest && closest.d <= Math.max(2, Math.floor(given.length / 3))
      ? ` (did you mean "${closest.name}"?)`
      : "";
  return `unknown provider "${given}"${hint}; ${list}`;
}

function pathText(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out || "(config root)";
}

function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[], input: unknown): string[] {
  // Walks the input alongside the schema's shape to list the keys accepted where an unknown key
  // was found, so that the error can suggest the closest one.
  let node: unknown = schema;
  let value: unknown = input;
  for (const part of path) {
    node = unwrap(node, value);
    const shape = (node as { shape?: Record<string, unknown> }).shape;
    const element = (node as { element?: unknown }).element;
    const valueType = (node as { def?: { valueType?: unknown } }).def?.valueType;
    if (shape && typeof part === "string" && part in shape) node = shape[part];
    else if (element && typeof part === "number") node = element;
    else if (valueType) node = valueType;
    else return [];
    value = (value as Record<PropertyKey, unknown> | undefined)?.[part];
  }
  node = unwrap(node, value);
  const shape = (node as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

function unwrap(node: unknown, value: unknown): unknown {
  let current = node as { def?: Record<string, unknown> } | undefined;
  for (let guard = 0; guard < 10 && current?.def; guard++) {
    const def = current.def;
    if (def.innerType) current = def.innerType as typeof current;
    else if (def.type === "pipe" && def.in) current = def.in as typeof current;
    else if (def.type === "union" && Array.isArray(def.options)) {
      const provider = (value as { provider?: unknown } | undefined)?.provider;
      const match = (
        def.options as Array<{ shape?: Record<string, { def?: { values?: unknown[] } }> }>
      ).find((o) => o.shape?.provider?.def?.values?.includes(provider) ?? false);
      const objectOption = (def.options as Array<{ shape?: unknown }>).find((o) => o.shape);
      current = (match ?? objectOption) as typeof current;
      if (!current) return undefined;
    } else break;
  }
  return current;
}

/**
 * Turns zod issues into lines that each name the key and the fix.
 *
 * @example
 * ```ts
 * formatIssues(schema, input, result.error.issues);
 * // ['sources.stripe.secret: unknown key "secret" (did you mean "secrets"?)']
 * ```
 */
export function formatIssues(
  schema: z.ZodType,
  input: unknown,
  issues: readonly z.core.$ZodIssue[],
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const where = pathText(issue.path);
    if (issue.code === "unrecognized_keys") {
      const known = knownKeysAt(schema, issue.path, input);
      for (const key of issue.keys) {
        const closest = known
          .map((k) => ({ k, d: editDistance(k.toLowerCase(), key.toLowerCase()) }))
          .sort((a, b) => a.d - b.d)[0];
        const hint =
          closest && closest.d <= Math.max(2, Math.floor(key.length / 3))
            ? ` (did you mean "${closest.k}"?)`
            : known.length > 0
              ? ` (allowed: ${known.join(", ")})`
              : "";
        lines.push(`${pathText([...issue.path, key])}: unknown key "${key}"${hint}`);
      }
    } else if (
      issue.code === "invalid_union" &&
      "note" in issue &&
      issue.note === "No matching discriminator" &&
      (issue as { discriminator?: string }).discriminator !== "type"
    ) {
      lines.push(`${where}: ${unknownProvider(valueAt(input, issue.path))}`);
    } else if (issue.code === "invalid_union") {
      lines.push(
        `${where}: ${where.includes("secrets") || where.endsWith("token") ? 'expected a secret: "literal", { env: "NAME" } or { value | env, notAfter }' : issue.message}`,
      );
    } else {
      lines.push(`${where}: ${issue.message}`);
    }
  }
  return lines;
}
