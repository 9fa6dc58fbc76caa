/**
 * Builds the publishable packages into their `dist/` folders, in dependency
 * order (core, then mcp, openai and effect-ai, then testing and durable: each compiles against the
 * `dist/*.d.ts` of the packages it imports, as a user's project would).
 *
 * For each package: `dist/` is emptied (a module moved or deleted in `src/`
 * leaves nothing behind), `tsc -p tsconfig.build.json` emits JavaScript,
 * declarations and their maps, then the declarations' relative `.ts` import
 * suffixes are rewritten to `.js`. `rewriteRelativeImportExtensions` does
 * that for the JavaScript only (microsoft/TypeScript#61037): TypeScript
 * itself resolves `from "./Action.ts"` in a `.d.ts` to `Action.d.ts`, but
 * editors and other tools look for a `.ts` file that is not in `dist/`. The
 * rewrite keeps every string's length, so the declaration maps stay exact.
 *
 * The build is not incremental on purpose: a `.tsbuildinfo` would have to
 * live outside `dist/` to stay out of the tarballs, and then outlive a deleted
 * `dist/` and make `tsc -b` skip the emit. A full build takes a few seconds.
 *
 * Run: npm run build                     (every package)
 *      node scripts/build.ts core mcp    (the named ones, in that order)
 */
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The publishable packages, each after the ones it depends on. */
export const packages = ["core", "mcp", "openai", "effect-ai", "testing", "durable"] as const

/** `from "./x.ts"`, `import("../x.ts")`, `import "./x.ts"` → the same with `.js`. */
const relativeTs = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g

/** A declaration file's text with its relative `.ts` import suffixes rewritten to `.js`. */
export const rewriteDeclaration = (text: string): string => text.replace(relativeTs, "$1$2$3.js$2")

const build = (name: string): boolean => {
  const folder = join(root, "packages", name)
  const dist = join(folder, "dist")
  rmSync(dist, { recursive: true, force: true })
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", join(folder, "tsconfig.build.json")],
    { cwd: folder, stdio: "inherit" }
  )
  if (tsc.status !== 0) {
    console.error(`build: @rolecraft/${name} does not compile`)
    return false
  }
  for (const file of readdirSync(dist, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".d.ts")) continue
    const path = join(dist, file)
    const text = readFileSync(path, "utf8")
    const next = rewriteDeclaration(text)
    if (next !== text) writeFileSync(path, next)
  }
  return true
}

const main = () => {
  const named = process.argv.slice(2)
  const unknown = named.filter((name) => !(packages as ReadonlyArray<string>).includes(name))
  if (unknown.length > 0) {
    console.error(`build: no package named ${unknown.join(", ")} (known: ${packages.join(", ")})`)
    process.exitCode = 2
    return
  }
  for (const name of named.length > 0 ? named : packages) {
    if (!build(name)) {
      process.exitCode = 1
      return
    }
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
