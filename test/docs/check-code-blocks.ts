// Docs that run: every ts/js code block of a Markdown file, type-checked as a module of its own
// beside the file (so `./x.ts` imports resolve as they would for a reader who pasted it there)
// against the package's types (`hookinbox` and its subpaths map to src/, as in tsconfig.json).
// A block that starts with a config key (`sources: {…}`, `http: {…}`) is a fragment of a config
// object: it is checked inside `defineConfig({ … })`, with the source helpers it calls (`stripe(…)`)
// imported from `hookinbox`, so it must parse and type-check as config. A block that is partial
// in any other way is preceded by `<!-- docs-check: skip (why) -->`.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { repoRoot } from "../helpers/temp.ts";

/** One fenced ts/js block of a Markdown file. */
export interface CodeBlock {
  readonly file: string;
  /** 1-based line of the block's first code line. */
  readonly line: number;
  readonly code: string;
  /** The reason given in a `<!-- docs-check: skip (…) -->` marker, or null. */
  readonly skip: string | null;
}

const languages = new Set(["ts", "typescript", "js", "javascript", "mjs"]);

/** The ts/js blocks of a Markdown text. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    if (end === -1) break;
    if (languages.has(open[1] ?? "")) {
      const before = (lines[i - 1] ?? "") + (lines[i - 2] ?? "");
      const skip = /<!--\s*docs-check:\s*skip\s*\(([^)]*)\)\s*-->/.exec(before);
      blocks.push({
        file,
        line: i + 2,
        code: lines.slice(i + 1, end).join("\n"),
        skip: skip ? (skip[1] ?? "") : null,
      });
    }
    i = end;
  }
  return blocks;
}

/** `hookinbox/<sub>` → its source file, from package.json's exports. */
function subpathSources(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    exports: Record<string, { import?: { types: string } } | string>;
  };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string" || !target.import) continue;
    const source = target.import.types.replace("./dist/esm/", "./src/").replace(/\.d\.ts$/, ".ts");
    paths[key === "." ? "hookinbox" : `hookinbox/${key.slice(2)}`] = [source];
  }
  return paths;
}

/** A `?` placeholder in a `tx.query` on a block whose store is not SQLite. */
function placeholderProblems(block: CodeBlock): string[] {
  if (/["'`]sqlite:/.test(block.code)) return [];
  const problems: string[] = [];
  for (const match of block.code.matchAll(/tx\.query(?:<[^>]*>)?\(\s*(["'`])([\s\S]*?)\1/g)) {
    if (/(?:[(,=<>]|VALUES|\s)\s*\?(?:\s*[,)]|\s*$|\s)/i.test(match[2] ?? ""))
      problems.push(
        `${block.file}:${block.line}: tx.query with "?" placeholders: PostgreSQL takes $1, $2 ("?" is SQLite's; name the sqlite: store in the block)`,
      );
  }
  return problems;
}

/** A block that starts (after comments) with `key:` is a fragment of a config object. */
function isConfigFragment(code: string): boolean {
  const first = code.split("\n").find((l) => l.trim() !== "" && !l.trim().startsWith("//"));
  return /^[A-Za-z_$][\w$]*\s*:/.test(first?.trim() ?? "");
}

/** A config fragment inside `defineConfig({ … })`, importing the helpers it calls. */
function wrapConfigFragment(code: string, exported: ReadonlySet<string>): string {
  const called = new Set([...code.matchAll(/\b([a-z][A-Za-z]*)\(/g)].map((m) => m[1] ?? ""));
  const helpers = [...called].filter((name) => exported.has(name) && name !== "defineConfig");
  // One line, so the block's lines keep their numbers (diagnostics point into the Markdown).
  return `import { defineConfig, ${helpers.join(", ")} } from "hookinbox"; export default defineConfig({ ${code}\n});`;
}

/** What is wrong with one block: "file:line: message" lines (empty when it passes). */
export type BlockReport = { block: CodeBlock; problems: string[] };

/**
 * Type-checks the blocks together in one program (each its own module). Returns one report per
 * block that is not skipped.
 */
export function checkBlocks(
  blocks: readonly CodeBlock[],
  /** The names `hookinbox` exports (config fragments import the ones they call). */
  exported: ReadonlySet<string>,
): BlockReport[] {
  const configFile = ts.readConfigFile(join(repoRoot, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, repoRoot);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    paths: { ...parsed.options.paths, ...subpathSources() },
    // Blocks declare what they show, not everything they touch.
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
  const checked = blocks.filter((b) => b.skip === null);
  const virtual = new Map<string, string>();
  const fileOf = new Map<string, CodeBlock>();
  for (const block of checked) {
    const name = join(dirname(block.file), `${block.file.split("/").pop()}.line${block.line}.ts`);
    // `export {}` makes every block a module (top-level await, no clashes between blocks).
    const code = isConfigFragment(block.code)
      ? wrapConfigFragment(block.code, exported)
      : block.code;
    virtual.set(name, `${code}\nexport {};\n`);
    fileOf.set(name, block);
  }
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (f) => virtual.get(f) ?? readFile(f);
  host.fileExists = (f) => virtual.has(f) || fileExists(f);
  host.getSourceFile = (f, language, onError, create) => {
    const text = virtual.get(f);
    return text === undefined
      ? getSourceFile(f, language, onError, create)
      : ts.createSourceFile(f, text, language, true);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  const reports = new Map<CodeBlock, string[]>(checked.map((b) => [b, placeholderProblems(b)]));
  // Only the blocks' own diagnostics are reported, so only the blocks are checked: the checker
  // resolves what they import from src/ without checking every body there (tsc --noEmit does).
  const diagnostics = [...virtual.keys()].flatMap((name) => {
    const source = program.getSourceFile(name);
    return source
      ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
      : [];
  });
  for (const diagnostic of diagnostics) {
    const block = diagnostic.file ? fileOf.get(diagnostic.file.fileName) : undefined;
    if (!block || !diagnostic.file) continue;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
    reports.get(block)?.push(`${block.file}:${block.line + line}: TS${diagnostic.code} ${message}`);
  }
  return [...reports].map(([block, problems]) => ({ block, problems }));
}
