/**
 * Every random value a test draws comes from the seeded helper (test/support/seeded.ts), which prints the run's
 * seed on failure and replays it: a test that draws from anything else can fail by chance and never again.
 *
 * Read from each parsed file (so names in strings and comments do not count), in every `.ts` file under `test/`,
 * `packages/<name>/test/` and `bench/test/` except the helper and the global setup that draws the seed:
 *
 * - `Math.random`;
 * - `randomBytes`, `randomUUID`, `randomInt`, `randomFill`, `randomFillSync`, `getRandomValues` imported from
 *   `crypto` / `node:crypto`, or read off the global `crypto`, `globalThis.crypto`, a namespace or default import
 *   of `crypto`, or its `webcrypto`.
 *
 * `node scripts/check-randomness.ts` prints each one with its file, line and column, and exits 1 when there is one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { parseSync } from "oxc-parser"

const root = join(import.meta.dirname, "..")

/** The files allowed to draw: the helper itself, and the global setup that draws the run's seed. */
export const allowed: ReadonlyArray<string> = ["test/support/seeded.ts", "test/setup/seed.ts"]

/** The functions of `node:crypto` and Web Crypto that draw random values. */
export const drawing: ReadonlySet<string> = new Set([
  "randomBytes",
  "randomUUID",
  "randomInt",
  "randomFill",
  "randomFillSync",
  "getRandomValues"
])

const cryptoModules = new Set(["crypto", "node:crypto"])

/** One random draw outside the helper. */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly column: number
  readonly message: string
}

interface Node {
  readonly type: string
  readonly start: number
  readonly [key: string]: unknown
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"

const walk = (node: Node, visit: (node: Node) => void): void => {
  visit(node)
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) walk(item, visit)
    } else if (isNode(value)) walk(value, visit)
  }
}

const nameOf = (node: unknown): string | undefined => {
  if (!isNode(node)) return undefined
  if (node.type === "Identifier") return node.name as string
  if (node.type === "Literal" && typeof node.value === "string") return node.value
  return undefined
}

/** The random draws in one file's text (`path` only names it and picks the parser's dialect). */
export const drawsIn = (path: string, text: string): ReadonlyArray<Omit<Problem, "file">> => {
  const parsed = parseSync(path, text)
  const lineStarts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1)
  const at = (offset: number) => {
    let line = 0
    while (line + 1 < lineStarts.length && (lineStarts[line + 1] as number) <= offset) line++
    return { line: line + 1, column: offset - (lineStarts[line] as number) + 1 }
  }
  const program = parsed.program as unknown as Node
  // The names a file binds to node:crypto as a whole (namespace, default, or its webcrypto).
  const cryptoNames = new Set(["crypto"])
  const found: Array<Omit<Problem, "file">> = []
  walk(program, (node) => {
    if (node.type !== "ImportDeclaration" || !cryptoModules.has(nameOf(node.source) ?? "")) return
    for (const specifier of node.specifiers as ReadonlyArray<Node>) {
      const local = nameOf(specifier.local) ?? ""
      if (specifier.type !== "ImportSpecifier") {
        cryptoNames.add(local)
        continue
      }
      const imported = nameOf(specifier.imported) ?? ""
      if (imported === "webcrypto") cryptoNames.add(local)
      if (drawing.has(imported)) {
        found.push({ ...at(specifier.start), message: `${imported} imported from ${nameOf(node.source)}` })
      }
    }
  })
  const isCrypto = (node: unknown): boolean => {
    if (!isNode(node)) return false
    if (node.type === "Identifier") return cryptoNames.has(node.name as string)
    // globalThis.crypto, crypto.webcrypto, x.crypto
    if (node.type === "MemberExpression" && node.computed !== true) {
      const property = nameOf(node.property)
      return property === "crypto" || (property === "webcrypto" && isCrypto(node.object))
    }
    return false
  }
  walk(program, (node) => {
    if (
      node.type === "VariableDeclarator" &&
      isNode(node.id) &&
      node.id.type === "ObjectPattern" &&
      isCrypto(node.init)
    ) {
      // const { randomUUID } = crypto
      for (const property of node.id.properties as ReadonlyArray<Node>) {
        const key = nameOf(property.key)
        if (key !== undefined && drawing.has(key)) found.push({ ...at(property.start), message: `crypto.${key}` })
      }
      return
    }
    if (node.type !== "MemberExpression") return
    // crypto.randomUUID and crypto["randomUUID"]
    const property = nameOf(node.property)
    if (property === undefined) return
    const object = node.object
    if (property === "random" && isNode(object) && object.type === "Identifier" && object.name === "Math") {
      found.push({ ...at(node.start), message: "Math.random" })
    } else if (drawing.has(property) && isCrypto(object)) {
      found.push({ ...at(node.start), message: `crypto.${property}` })
    }
  })
  return found.sort((a, b) => a.line - b.line || a.column - b.column)
}

const testFiles = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((name) => {
        const path = join(dir, name)
        if (name === "node_modules") return []
        if (statSync(path).isDirectory()) return testFiles(path)
        return /\.(m|c)?ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : []
      })
    : []

/** The folders whose files are tests or test support, under `base`. */
export const testFolders = (base: string): ReadonlyArray<string> => [
  join(base, "test"),
  join(base, "bench", "test"),
  ...readdirSync(join(base, "packages")).map((name) => join(base, "packages", name, "test"))
]

/** Every random draw outside the helper in the test files under `base`. */
export const check = (base: string = root): ReadonlyArray<Problem> =>
  testFolders(base)
    .flatMap(testFiles)
    .filter((file) => !allowed.includes(relative(base, file).split(sep).join("/")))
    .flatMap((file) =>
      drawsIn(file, readFileSync(file, "utf8")).map((draw) => ({ file: relative(base, file), ...draw }))
    )

const main = () => {
  const problems = check()
  for (const problem of problems) {
    console.error(
      `${problem.file}:${problem.line}:${problem.column}: ${problem.message}: draw it from test/support/seeded.ts (Seeded.random, Seeded.randomBytes, Seeded.randomUUID, Seeded.draw), which prints the seed on failure`
    )
  }
  if (problems.length > 0) {
    console.error(`${problems.length} random draw(s) in tests outside the seeded helper.`)
    process.exit(1)
  }
  console.log("Every random value in the tests is drawn from the seeded helper (test/support/seeded.ts).")
}

if (import.meta.main) main()
