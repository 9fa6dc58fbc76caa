/**
 * Type-checks every TypeScript snippet of the documentation: each ```ts (or
 * ```typescript) block of README.md, of docs/*.md, of each package's README.md and of the docstrings of
 * packages/*\/src (an `@example`, a module header's example) is written to its own file
 * under `.snippets/` (gitignored, inside the repository so `@rolecraft/*`
 * and `effect` resolve through node_modules) and the lot is checked with
 * `tsc` under the repository's strict settings. Snippets are documentation
 * people copy, so each must be complete: imports included.
 *
 * A block opened with ```` ```ts run ```` is also a program that must run to
 * its end offline: the consumer check (scripts/consumer-check.ts) runs each
 * one with `node` in a user's project and checks it exits 0, printing every
 * `// prints "…"` its code promises.
 *
 * Errors are reported at their place in the Markdown or source file
 * (`docs/chat.md:42:7`, `packages/core/src/Agent.ts:310:5`). Exit code 0 when every snippet compiles.
 *
 * Run: npm run check:snippets
 *      node scripts/check-snippets.ts [--out <folder>] [file.md | file.ts ...]
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * One snippet: the Markdown file, the line of its first code line (1-based), its code, and whether it is a
 * program that must run to its end (its fence says `ts run`).
 */
export interface Snippet {
  readonly file: string
  readonly line: number
  readonly code: string
  readonly run: boolean
}

const fence = /^(\s*)(`{3,}|~{3,})\s*(\S*)(.*)$/

/** Every ```ts / ```typescript block of a Markdown text, with the line its code starts on. */
export const extract = (file: string, markdown: string): ReadonlyArray<Snippet> => {
  const lines = markdown.split("\n")
  const snippets: Array<Snippet> = []
  let open:
    | {
        readonly marker: string
        readonly ts: boolean
        readonly run: boolean
        readonly start: number
        readonly body: Array<string>
      }
    | undefined
  lines.forEach((text, i) => {
    const match = fence.exec(text)
    if (open === undefined) {
      if (match !== null) {
        const language = (match[3] ?? "").toLowerCase()
        const run = (match[4] ?? "").trim().split(/\s+/).includes("run")
        open = {
          marker: match[2] ?? "```",
          ts: language === "ts" || language === "typescript",
          run,
          start: i + 2,
          body: []
        }
      }
      return
    }
    if (match !== null && (match[2] ?? "").startsWith(open.marker) && (match[3] ?? "") === "") {
      if (open.ts) snippets.push({ file, line: open.start, code: `${open.body.join("\n")}\n`, run: open.run })
      open = undefined
      return
    }
    open.body.push(text)
  })
  return snippets
}

/** The documentation files: README.md, every docs/*.md and every package's README.md. */
export const documentation = (): ReadonlyArray<string> => {
  const docs = join(root, "docs")
  const pages = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith(".md"))
        .sort()
        .map((name) => join("docs", name))
    : []
  const packages = readdirSync(join(root, "packages"))
    .sort()
    .map((name) => join("packages", name, "README.md"))
    .filter((file) => existsSync(join(root, file)))
  return ["README.md", ...pages, ...packages]
}

/**
 * Every ```ts block of the docstrings (`/** … *\/`) of a TypeScript source, with the line of the source its code
 * starts on: each docstring's lines without their leading ` * ` are read as Markdown.
 */
export const extractDocstrings = (file: string, source: string): ReadonlyArray<Snippet> => {
  const lines = source.split("\n")
  const snippets: Array<Snippet> = []
  let start: number | undefined
  lines.forEach((text, i) => {
    if (start === undefined && /^\s*\/\*\*/.test(text)) start = i
    if (start === undefined || !text.includes("*/")) return
    const body = lines
      .slice(start, i + 1)
      .map((line, j) => {
        const inner = j === 0 ? line.replace(/^\s*\/\*\*/, "") : line
        return inner.replace(/\*\/.*$/, "").replace(/^\s*\* ?/, "")
      })
      .join("\n")
    const first = start
    for (const snippet of extract(file, body)) snippets.push({ ...snippet, line: snippet.line + first })
    start = undefined
  })
  return snippets
}

/** The TypeScript sources of the packages (packages/*\/src, internal modules included), for their docstrings. */
export const sources = (): ReadonlyArray<string> => {
  const found: Array<string> = []
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    )) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".ts")) found.push(path)
    }
  }
  for (const name of readdirSync(join(root, "packages")).sort())
    if (existsSync(join(root, "packages", name, "src"))) walk(join("packages", name, "src"))
  return found
}

/** The snippets of one file: a Markdown file's blocks, or a TypeScript source's docstring blocks. */
export const snippetsOf = (file: string): ReadonlyArray<Snippet> => {
  const text = readFileSync(join(root, file), "utf8")
  return file.endsWith(".ts") ? extractDocstrings(file, text) : extract(file, text)
}

const snippetName = (snippet: Snippet) => `${snippet.file.replace(/[/\\.]/g, "_")}_${snippet.line}.ts`

/**
 * Writes the snippets under `out` (emptied first) with a tsconfig, runs tsc,
 * and returns its diagnostics mapped back to Markdown locations.
 */
export const check = (
  snippets: ReadonlyArray<Snippet>,
  out: string
): { readonly ok: boolean; readonly report: string } => {
  const folder = join(root, out)
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  const byName = new Map<string, Snippet>()
  for (const snippet of snippets) {
    const name = snippetName(snippet)
    byName.set(name, snippet)
    writeFileSync(join(folder, name), snippet.code)
  }
  const base = relative(folder, join(root, "tsconfig.base.json")).split("\\").join("/")
  writeFileSync(
    join(folder, "tsconfig.json"),
    JSON.stringify(
      {
        extends: base,
        // Snippets declare values to show them, not to use them.
        compilerOptions: { noUnusedLocals: false, noUnusedParameters: false },
        include: ["*.ts"]
      },
      null,
      2
    )
  )
  if (snippets.length === 0) return { ok: true, report: "no TypeScript snippets found" }
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", join(folder, "tsconfig.json"), "--pretty", "false"],
    { cwd: root, encoding: "utf8" }
  )
  const output = `${tsc.stdout ?? ""}${tsc.stderr ?? ""}`
  // "<path>/<name>.ts(3,5): error TS2322: ..." → "README.md:122:5: error TS2322: ..."
  const report = output
    .split("\n")
    .filter((text) => text.trim() !== "")
    .map((text) => {
      const match = /^(.*?)\((\d+),(\d+)\): (.*)$/.exec(text)
      const snippet = match === null ? undefined : byName.get(basename(match[1] ?? ""))
      if (match === null || snippet === undefined) return text
      return `${snippet.file}:${snippet.line + Number(match[2]) - 1}:${match[3]}: ${match[4]}`
    })
    .join("\n")
  return { ok: tsc.status === 0, report }
}

const main = () => {
  const args = process.argv.slice(2)
  const outAt = args.indexOf("--out")
  const out = outAt >= 0 ? (args[outAt + 1] ?? ".snippets") : ".snippets"
  const files = outAt >= 0 ? args.filter((_, i) => i !== outAt && i !== outAt + 1) : args
  const snippets = (files.length > 0 ? files : [...documentation(), ...sources()]).flatMap(snippetsOf)
  const { ok, report } = check(snippets, out)
  const pages = new Set(snippets.map((snippet) => snippet.file)).size
  if (ok) {
    console.log(`${snippets.length} TypeScript snippets in ${pages} files compile.`)
  } else {
    console.log(report)
    console.log(`The TypeScript snippets of the documentation do not all compile (${snippets.length} checked).`)
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
