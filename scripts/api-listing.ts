/**
 * The public export listing: writes `packages/<name>/API.md` for each
 * publishable package from its built declarations (`dist/index.d.ts` and the
 * `.d.ts` of every module it re-exports), so any change to the surface shows
 * in review. For each namespace (`export * as X from "./X.js"`), every name it
 * exports with its kind (function, const, class, interface, type, namespace,
 * enum; a `const` of a function type counts as a function), sorted; names
 * exported directly by the entry point (plain `export *`, `export { … } from`,
 * declarations) are listed under the package itself.
 *
 * The same walk gives each exported name's declarations with the docstring
 * right above each (`read`), which scripts/check-docs.ts checks.
 *
 * It reads the declaration text, not a compiler API (TypeScript 7 has none):
 * tsc writes one top-level statement per unindented line, so only
 * unindented `export` lines count, and members of exported namespaces are
 * not listed.
 *
 * Run after `npm run build`:
 *   node scripts/api-listing.ts           writes the listings
 *   node scripts/api-listing.ts --check   fails, naming the package and the differing lines, when a
 *                                         committed listing is not what the build gives
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { packages } from "./build.ts"

const root = fileURLToPath(new URL("..", import.meta.url))

type Kinds = Map<string, Set<string>>

const add = (into: Kinds, name: string, kind: string) => {
  const kinds = into.get(name) ?? new Set<string>()
  kinds.add(kind)
  into.set(name, kinds)
}

/** `./X.js` (or `./X.ts`, `./X`) from a declaration file → the declaration file it names. */
const resolve = (from: string, specifier: string): string => {
  const base = join(dirname(from), specifier.replace(/\.(js|ts|d\.ts)$/, ""))
  const candidates = [`${base}.d.ts`, join(base, "index.d.ts")]
  const found = candidates.find((candidate) => existsSync(candidate))
  if (found === undefined) throw new Error(`${relative(root, from)}: cannot find the declarations of ${specifier}`)
  return found
}

const declaration =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(const|let|var|function|class|interface|type|namespace|module|enum)\s+([A-Za-z_$][\w$]*)/
const starAs = /^export\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s+["']([^"']+)["']/
const star = /^export\s+\*\s+from\s+["']([^"']+)["']/
const named = /^export\s+(type\s+)?\{([^}]*)\}(?:\s+from\s+["']([^"']+)["'])?/
const local =
  /^(?:declare\s+)?(?:abstract\s+)?(const|let|var|function|class|interface|type|namespace|module|enum)\s+([A-Za-z_$][\w$]*)/

/** A `const` whose type is a function type (`(a) => b`, `<A>(a: A) => b`) is listed as a function. */
const functionType = /^[^:]*:\s*[<(]/

const kindOf = (keyword: string, line: string): string =>
  keyword === "const" || keyword === "let" || keyword === "var"
    ? functionType.test(line)
      ? "function"
      : "const"
    : keyword === "module"
      ? "namespace"
      : keyword

/** One declaration of an exported name: its kind, the declaration file it is in, and its docstring (if any). */
export interface Declared {
  readonly kind: string
  readonly file: string
  readonly doc: string | undefined
}

/**
 * A module's own exports (names → kinds), the namespaces it re-exports (name → file) and each exported name's
 * declarations with their docstrings.
 */
export interface Module {
  readonly names: Kinds
  readonly namespaces: Map<string, string>
  readonly docs: Map<string, Array<Declared>>
}

const declare = (into: Map<string, Array<Declared>>, name: string, declared: Declared) => {
  const all = into.get(name) ?? []
  all.push(declared)
  into.set(name, all)
}

/**
 * The unindented docstring (`/** … *\/`) that ends on the line just before each line, by line index; tsc
 * writes a top-level declaration's docstring unindented right above it.
 */
const docstrings = (lines: ReadonlyArray<string>): Map<number, string> => {
  const docs = new Map<number, string>()
  let start: number | undefined
  lines.forEach((line, i) => {
    if (start === undefined && line.startsWith("/**")) start = i
    if (start !== undefined && line.includes("*/")) {
      docs.set(i + 1, lines.slice(start, i + 1).join("\n"))
      start = undefined
    }
  })
  return docs
}

export const read = (file: string, seen: ReadonlySet<string> = new Set()): Module => {
  if (seen.has(file)) return { names: new Map(), namespaces: new Map(), docs: new Map() }
  const visiting = new Set([...seen, file])
  const names: Kinds = new Map()
  const namespaces = new Map<string, string>()
  const docs = new Map<string, Array<Declared>>()
  const lines = readFileSync(file, "utf8").split("\n")
  const comments = docstrings(lines)
  // Unexported top-level declarations, for `export { x }` and `export { x as y }`.
  const locals: Kinds = new Map()
  const localDocs = new Map<string, Array<Declared>>()
  lines.forEach((line, i) => {
    const match = local.exec(line)
    if (match?.[1] === undefined || match[2] === undefined) return
    const kind = kindOf(match[1], line)
    add(locals, match[2], kind)
    declare(localDocs, match[2], { kind, file, doc: comments.get(i) })
  })
  for (const [i, line] of lines.entries()) {
    let match = starAs.exec(line)
    if (match?.[1] !== undefined && match[2] !== undefined) {
      namespaces.set(match[1], resolve(file, match[2]))
      continue
    }
    match = star.exec(line)
    if (match?.[1] !== undefined) {
      const inner = read(resolve(file, match[1]), visiting)
      for (const [name, kinds] of inner.names) for (const kind of kinds) add(names, name, kind)
      for (const [name, target] of inner.namespaces) namespaces.set(name, target)
      for (const [name, all] of inner.docs) for (const declared of all) declare(docs, name, declared)
      continue
    }
    match = named.exec(line)
    if (match?.[2] !== undefined) {
      const typeOnly = match[1] !== undefined
      const source = match[3] === undefined ? undefined : read(resolve(file, match[3]), visiting)
      for (const part of match[2].split(",")) {
        const spec = /^\s*(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?\s*$/.exec(part)
        if (spec?.[2] === undefined) continue
        const exported = spec[3] ?? spec[2]
        const target = source?.namespaces.get(spec[2])
        if (target !== undefined) {
          namespaces.set(exported, target)
          continue
        }
        const kinds = source === undefined ? locals.get(spec[2]) : source.names.get(spec[2])
        for (const kind of kinds ?? ["unknown"])
          add(names, exported, typeOnly || spec[1] !== undefined ? (kind === "interface" ? kind : "type") : kind)
        for (const declared of (source === undefined ? localDocs : source.docs).get(spec[2]) ?? [])
          declare(docs, exported, declared)
      }
      continue
    }
    match = declaration.exec(line)
    if (match?.[1] !== undefined && match[2] !== undefined) {
      const kind = kindOf(match[1], line)
      add(names, match[2], kind)
      declare(docs, match[2], { kind, file, doc: comments.get(i) })
    }
  }
  return { names, namespaces, docs }
}

const order = ["namespace", "class", "function", "const", "enum", "interface", "type", "unknown"]

const listing = (names: Kinds): ReadonlyArray<string> =>
  [...names.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([name, kinds]) => `- \`${name}\`: ${[...kinds].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(", ")}`
    )

/** The listing of one package, as the text of its API.md. */
export const render = (name: string): string => {
  const entry = join(root, "packages", name, "dist", "index.d.ts")
  if (!existsSync(entry)) throw new Error(`packages/${name}/dist/index.d.ts is missing: run npm run build first`)
  const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8"))
  const module = read(entry)
  const lines = [
    `# ${manifest.name}: public exports`,
    "",
    "Generated by `node scripts/api-listing.ts` from the built declarations (`dist/*.d.ts`); do not edit by hand.",
    "CI fails when this listing is stale: regenerate it with `npm run build && node scripts/api-listing.ts`."
  ]
  const namespaces = [...module.namespaces.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  let count = module.names.size
  if (module.names.size > 0) lines.push("", `## ${manifest.name}`, "", ...listing(module.names))
  for (const [namespace, file] of namespaces) {
    const inner = read(file)
    count += inner.names.size + inner.namespaces.size
    lines.push("", `## ${namespace}`, "", `\`import { ${namespace} } from "${manifest.name}"\``)
    const nested: Kinds = new Map(inner.names)
    for (const name of inner.namespaces.keys()) add(nested, name, "namespace")
    lines.push("", ...(nested.size === 0 ? ["(no exports)"] : listing(nested)))
  }
  lines.splice(4, 0, "", `${namespaces.length} namespaces, ${count} exported names.`)
  return `${lines.join("\n")}\n`
}

/** Lines only in `before` (`-`) and only in `after` (`+`), in order. */
const differences = (before: string, after: string): ReadonlyArray<string> => {
  const a = before.split("\n")
  const b = after.split("\n")
  const inB = new Set(b)
  const inA = new Set(a)
  return [
    ...a.filter((line) => !inB.has(line)).map((line) => `- ${line}`),
    ...b.filter((line) => !inA.has(line)).map((line) => `+ ${line}`)
  ]
}

const main = () => {
  const check = process.argv.includes("--check")
  let stale = 0
  for (const name of packages) {
    const file = join(root, "packages", name, "API.md")
    let text: string
    try {
      text = render(name)
    } catch (error) {
      console.error(`@rolecraft/${name}: ${error instanceof Error ? error.message : String(error)}`)
      process.exitCode = 1
      return
    }
    const committed = existsSync(file) ? readFileSync(file, "utf8") : ""
    if (!check) {
      if (committed !== text) writeFileSync(file, text)
      console.log(`packages/${name}/API.md: ${text.split("\n")[5] ?? ""}`)
      continue
    }
    if (committed === text) continue
    stale += 1
    const lines = differences(committed, text)
    console.log(`@rolecraft/${name}: packages/${name}/API.md is stale (${existsSync(file) ? "differs" : "missing"}):`)
    for (const line of lines.length > 0 ? lines : ["(same lines, another order)"]) console.log(`  ${line}`)
  }
  if (!check) return
  if (stale === 0) console.log(`The export listings of ${packages.length} packages are up to date.`)
  else {
    console.log(`${stale} export listing(s) stale: run npm run build && node scripts/api-listing.ts, and commit.`)
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
