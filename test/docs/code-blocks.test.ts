// Every ts/js code block in README.md and docs/*.md type-checks against the package's types, names
// files that exist, and uses PostgreSQL's placeholders on PostgreSQL (check-code-blocks.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as hookinbox from "../../src/index.ts";
import { repoRoot } from "../helpers/temp.ts";
import { checkBlocks, codeBlocks } from "./check-code-blocks.ts";

const exported = new Set(Object.keys(hookinbox));

const markdownFiles = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const blocks = markdownFiles.flatMap((file) =>
  codeBlocks(join(repoRoot, file), readFileSync(join(repoRoot, file), "utf8")),
);

describe("code blocks in README.md and docs/", () => {
  it("every block type-checks against the package, imports only files that exist and uses $1 on PostgreSQL", () => {
    const reports = checkBlocks(blocks, exported);
    const problems = reports.flatMap((r) => r.problems).map((p) => p.replace(`${repoRoot}/`, ""));
    expect(problems).toEqual([]);
    const skipped = blocks.filter((b) => b.skip !== null);
    console.log(`${reports.length} blocks checked, ${skipped.length} skipped with a reason`);
    expect(skipped.every((b) => (b.skip ?? "").trim().length > 0)).toBe(true);
  });

  it("fails a block that does not parse, imports a missing file, or uses ? on PostgreSQL", () => {
    const markdown = [
      "```ts",
      'sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] }); }',
      "```",
      "```ts",
      'import { mailer } from "./mailer.ts";',
      "```",
      "```ts",
      'import type { Handler } from "hookinbox";',
      "export const credit: Handler = async (event, ctx) => {",
      '  await ctx.transaction((tx) => tx.query("INSERT INTO credits (id) VALUES (?)", [event.id]));',
      "};",
      "```",
      "<!-- docs-check: skip (a fragment on purpose) -->",
      "```ts",
      "app.post(",
      "```",
    ].join("\n");
    const parsed = codeBlocks(join(repoRoot, "docs/example.md"), markdown);
    expect(parsed.map((b) => b.skip)).toEqual([null, null, null, "a fragment on purpose"]);
    const reports = checkBlocks(parsed, exported);
    expect(reports).toHaveLength(3);
    expect(reports[0]?.problems.join("\n")).toMatch(/docs\/example\.md:2: TS1005/);
    expect(reports[1]?.problems.join("\n")).toMatch(
      /docs\/example\.md:5: TS2307 Cannot find module '\.\/mailer\.ts'/,
    );
    expect(reports[2]?.problems).toEqual([
      `${repoRoot}/docs/example.md:8: tx.query with "?" placeholders: PostgreSQL takes $1, $2 ("?" is SQLite's; name the sqlite: store in the block)`,
    ]);
  });
});
