/**
 * Builds the publishable packages into their `dist/` folders, in dependency
 * order (core, then mcp, openai, anthropic and effect-ai, then testing and durable: each compiles against the
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
 * A package whose build is up to date is skipped (`npm start` run twice
 * builds once). Up to date is decided by content, never by timestamps: after
 * a build, a stamp records a SHA-256 of everything the build reads (the
 * package's `src/`, `package.json` and `tsconfig.build.json`, the base
 * tsconfig, this script, `package-lock.json` for every dependency's version,
 * and the stamps of the packages it imports) and a SHA-256 of what it wrote
 * (every file under `dist/`). A package is skipped only when both hashes
 * match now: an edited source, a new dependency version or a rebuilt
 * upstream package changes the first; a deleted, emptied or hand-edited
 * `dist/` changes the second. The stamps live in `node_modules/.cache/`
 * (so `npm ci` starts over, and nothing extra lands in the tarballs).
 * `tsc`'s own incremental build is not used on purpose: its `.tsbuildinfo`
 * would have to live outside `dist/`, and then outlive a deleted `dist/` and
 * make `tsc -b` skip the emit.
 *
 * Run: npm run build                         (every package, each only when stale)
 *      node scripts/build.ts core mcp        (the named ones, in that order)
 *      node scripts/build.ts --force [...]   (build even when up to date)
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The publishable packages, each after the ones it depends on. */
export const packages = ["core", "mcp", "openai", "anthropic", "effect-ai", "testing", "durable", "inspector"] as const

/** `from "./x.ts"`, `import("../x.ts")`, `import "./x.ts"` → the same with `.js`. */
const relativeTs = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g

/** A declaration file's text with its relative `.ts` import suffixes rewritten to `.js`. */
export const rewriteDeclaration = (text: string): string => text.replace(relativeTs, "$1$2$3.js$2")

/** SHA-256 over the names and contents of `files` (paths relative to the root; a missing file counts as such). */
const hashFiles = (files: ReadonlyArray<string>, extra: ReadonlyArray<string> = []): string => {
  const hash = createHash("sha256")
  for (const text of extra) hash.update(`${text}\0`)
  for (const file of [...files].sort()) {
    const path = join(root, file)
    hash.update(`${file}\0`)
    hash.update(existsSync(path) ? readFileSync(path) : "(missing)")
    hash.update("\0")
  }
  return hash.digest("hex")
}

/** Every file under a folder, relative to the root (none when the folder does not exist). */
const filesUnder = (folder: string): ReadonlyArray<string> => {
  const path = join(root, folder)
  if (!existsSync(path)) return []
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

/** The workspace packages a package imports (its `@rolecraft/*` dependencies). */
const upstream = (name: string): ReadonlyArray<string> => {
  const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8"))
  return Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
    .filter((dependency) => dependency.startsWith("@rolecraft/"))
    .map((dependency) => dependency.slice("@rolecraft/".length))
    .sort()
}

const stamps = join(root, "node_modules", ".cache", "rolecraft-build")

interface Stamp {
  readonly inputs: string
  readonly outputs: string
}

const readStamp = (name: string): Stamp | undefined => {
  try {
    return JSON.parse(readFileSync(join(stamps, `${name}.json`), "utf8"))
  } catch {
    return undefined
  }
}

/** The hash of what building `name` reads, its upstream packages' built output included. */
const inputsOf = (name: string): string =>
  hashFiles(
    [
      ...filesUnder(join("packages", name, "src")),
      join("packages", name, "package.json"),
      join("packages", name, "tsconfig.build.json"),
      "tsconfig.base.json",
      "package-lock.json",
      "scripts/build.ts"
    ],
    upstream(name).map((dependency) => `${dependency}:${readStamp(dependency)?.outputs ?? "unbuilt"}`)
  )

const outputsOf = (name: string): string => hashFiles(filesUnder(join("packages", name, "dist")))

/** Whether `name`'s `dist/` is what building its current inputs would write. */
export const upToDate = (name: string): boolean => {
  const stamp = readStamp(name)
  return (
    stamp !== undefined &&
    existsSync(join(root, "packages", name, "dist")) &&
    stamp.inputs === inputsOf(name) &&
    stamp.outputs === outputsOf(name)
  )
}

const build = (name: string): boolean => {
  const folder = join(root, "packages", name)
  const dist = join(folder, "dist")
  rmSync(join(stamps, `${name}.json`), { force: true })
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
  mkdirSync(stamps, { recursive: true })
  const stamp: Stamp = { inputs: inputsOf(name), outputs: outputsOf(name) }
  writeFileSync(join(stamps, `${name}.json`), `${JSON.stringify(stamp)}\n`)
  return true
}

const main = () => {
  const args = process.argv.slice(2)
  const force = args.includes("--force")
  const named = args.filter((arg) => arg !== "--force")
  const unknown = named.filter((name) => !(packages as ReadonlyArray<string>).includes(name))
  if (unknown.length > 0) {
    console.error(`build: no package named ${unknown.join(", ")} (known: ${packages.join(", ")})`)
    process.exitCode = 2
    return
  }
  const fresh: Array<string> = []
  for (const name of named.length > 0 ? named : packages) {
    if (!force && upToDate(name)) {
      fresh.push(name)
      continue
    }
    if (!build(name)) {
      process.exitCode = 1
      return
    }
  }
  if (fresh.length > 0)
    console.log(`build: up to date, not rebuilt: ${fresh.map((name) => `@rolecraft/${name}`).join(", ")}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
