import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { providerNames } from "../../src/config/schema.ts";
import { providerSamples, providersWithoutSample } from "../../src/testing/samples/index.ts";

// The catalogue is complete: every provider a source may name has a row in docs/providers.md's
// catalogue, a section there with its setup, retries and timeout, a test file that exists, and
// a row in the README's table saying what its verifier is checked against. A provider added to
// the config schema without them fails here.

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => readFileSync(`${root}${file}`, "utf8");
const docs = read("docs/providers.md");
const readme = read("README.md");

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The `## ` sections of docs/providers.md by anchor. */
const sections = new Map<string, string>();
for (const part of docs.split(/^## /m).slice(1)) {
  const newline = part.indexOf("\n");
  sections.set(slug(part.slice(0, newline).trim()), part.slice(newline + 1));
}

interface Row {
  readonly provider: string;
  readonly anchor: string;
  readonly basis: string;
  readonly test: string;
}

const catalogue: Row[] = [
  ...(sections.get("catalogue") ?? "").matchAll(
    // Cells may be padded: biome aligns Markdown table columns.
    /^\| `([a-z-]+)` +\| \[[^\]]+\]\(#([^)]+)\) +\| ([^|]+) \| `([^`]+)` +\|$/gm,
  ),
].map(([, provider = "", anchor = "", basis = "", test = ""]) => ({
  provider,
  anchor,
  basis: basis.trim(),
  test,
}));

const BASES = /^(official package|published vectors|documentation)/;

describe("provider catalogue", () => {
  it("docs/providers.md lists every provider a source may name, once, and at least 40", () => {
    const listed = catalogue.map((row) => row.provider);
    expect([...listed].sort()).toEqual([...providerNames].sort());
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.length).toBeGreaterThanOrEqual(40);
  });

  it.each(catalogue)("$provider: a section with setup, retries and timeout", (row) => {
    const section = sections.get(row.anchor);
    expect(section, `no section #${row.anchor}`).toBeDefined();
    for (const label of ["**Retries.**", "**Timeout.**", "**Setup"]) {
      expect(section, `#${row.anchor} lacks ${label}`).toContain(label);
    }
  });

  it.each(catalogue)("$provider: says what it is verified against, and its test exists", (row) => {
    expect(row.basis).toMatch(BASES);
    expect(existsSync(`${root}${row.test}`), row.test).toBe(true);
    expect(read(row.test)).toMatch(new RegExp(`\\b${row.provider.replace("-", "[-]?")}`, "i"));
  });

  it("the README's table names every provider with what it is verified against", () => {
    for (const name of providerNames) {
      const line = readme.split("\n").find((l) => new RegExp(`\\| \`${name}\` +\\|`).test(l));
      expect(line, `README row for ${name}`).toBeDefined();
      expect(line?.split("|")[3]?.trim()).toMatch(BASES);
    }
  });

  it("every provider has a `send` sample", () => {
    expect(providerNames.filter((name) => !providerSamples.has(name))).toEqual([]);
    expect(providersWithoutSample).toEqual([]);
  });
});
