/**
 * No import inside a package's `src/internal/` runs back up a floor. Each folder of `internal/` (and the
 * files at its root, as one folder `.`) stands on a floor; a module may import from its own folder and from
 * folders on lower floors only. The floors of each package are listed below, lowest first: a kernel shared by
 * every part stands low, what wires the parts together stands high.
 *
 * Every import is read from the parsed file (static imports, `export … from`, and dynamic `import()`, types
 * included), resolved against the importing file, and checked when both ends are in `internal/`. A folder of
 * `internal/` that no table lists is a failure too, so a new folder must be given its floor here.
 *
 * `node scripts/check-floors.ts` prints every import that runs up (or sideways, to another folder on the same
 * floor) and exits 1 when there is one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { parseSync } from "oxc-parser"

const root = join(import.meta.dirname, "..")

/** Each package's floors, lowest first; `.` is the files at the root of `internal/`. */
export const floors: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>> = {
  core: [
    // kernels every part may use: JSON, text, redaction, secrets, lazy loading, the idempotency key's reader
    ["."],
    // one concern each: a tool's schema and name, events and telemetry, resilience, the stores
    ["tool", "events", "resilience", "approvals", "thread"],
    // schemas and model calls, over the floor below
    ["schema", "model"],
    // one executor per action kind
    ["executor"],
    // the ten steps of a call
    ["pipeline"],
    // an agent: its registration, front doors, toolkit and composed actions
    ["agent"],
    // chat turns, over everything
    ["chat"]
  ],
  mcp: [["oauth"], ["."], ["serve"]],
  durable: [["."], ["store"]],
  testing: [["."]],
  openai: [["."]],
  anthropic: [["."]],
  "effect-ai": [["."]],
  inspector: [["."]]
}

/** One import that runs up or sideways. */
export interface Problem {
  readonly file: string
  readonly imported: string
  readonly message: string
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : []
  })

/** The folder of `internal/` a path is in (`.` for its root files), or `undefined` outside `internal/`. */
const folderOf = (internal: string, path: string): string | undefined => {
  const rel = relative(internal, path)
  if (rel.startsWith("..") || rel === "") return undefined
  const parts = rel.split(sep)
  return parts.length === 1 ? "." : (parts[0] as string)
}

/** Every module specifier a file imports (static, re-exported, dynamic; types included). */
export const specifiers = (path: string, text: string): ReadonlyArray<string> => {
  const parsed = parseSync(path, text)
  const found: Array<string> = []
  for (const entry of parsed.module.staticImports) found.push(entry.moduleRequest.value)
  for (const entry of parsed.module.staticExports) {
    for (const item of entry.entries) if (item.moduleRequest !== null) found.push(item.moduleRequest.value)
  }
  for (const entry of parsed.module.dynamicImports) {
    const literal = text.slice(entry.moduleRequest.start, entry.moduleRequest.end)
    const match = /^["'`]([^"'`]+)["'`]$/.exec(literal)
    if (match?.[1] !== undefined) found.push(match[1])
  }
  return found
}

/**
 * The imports of one package's `internal/` (under `sourceRoot`) that run up or sideways on `table`'s floors,
 * and its folders the table does not list.
 */
export const check = (
  packageName: string,
  sourceRoot: string,
  table: ReadonlyArray<ReadonlyArray<string>> | undefined = floors[packageName]
): ReadonlyArray<Problem> => {
  const internal = join(sourceRoot, "internal")
  if (!existsSync(internal)) return []
  const floorOf = new Map<string, number>()
  table?.forEach((folders, floor) => {
    for (const folder of folders) floorOf.set(folder, floor)
  })
  const problems: Array<Problem> = []
  const unplaced = new Set<string>()
  for (const file of sourceFiles(internal)) {
    const from = folderOf(internal, file) as string
    if (!floorOf.has(from)) unplaced.add(from)
    for (const specifier of specifiers(file, readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue
      const target = resolve(dirname(file), specifier)
      const to = folderOf(internal, target)
      if (to === undefined || to === from) continue
      const fromFloor = floorOf.get(from)
      const toFloor = floorOf.get(to)
      if (toFloor === undefined) {
        unplaced.add(to)
        continue
      }
      if (fromFloor !== undefined && toFloor >= fromFloor) {
        problems.push({
          file: relative(root, file),
          imported: specifier,
          message:
            toFloor === fromFloor
              ? `internal/${from} imports internal/${to}, another folder on its floor (${fromFloor})`
              : `internal/${from} (floor ${fromFloor}) imports internal/${to}, on floor ${toFloor} above it`
        })
      }
    }
  }
  for (const folder of unplaced) {
    problems.push({
      file: relative(root, join(internal, folder)),
      imported: "",
      message: `internal/${folder} of ${packageName} has no floor: give it one in scripts/check-floors.ts`
    })
  }
  return problems
}

const main = () => {
  const packages = readdirSync(join(root, "packages"))
  const problems = packages.flatMap((name) => check(name, join(root, "packages", name, "src")))
  for (const problem of problems) {
    console.error(`${problem.file}${problem.imported === "" ? "" : ` → ${problem.imported}`}: ${problem.message}`)
  }
  if (problems.length > 0) {
    console.error(`${problems.length} import(s) inside internal/ run up a floor.`)
    process.exit(1)
  }
  console.log(`No import inside the internal/ folders of ${packages.length} packages runs up a floor.`)
}

if (import.meta.main) main()
