/**
 * Checks the docstrings of the public surface: every name a package's entry point exports (the walk of
 * scripts/api-listing.ts over the built declarations, so exactly the names of `packages/<name>/API.md`) has,
 * on each of its declarations (a `const` and a `type` of one name are two), a docstring with `@since` and
 * `@category`; every exported namespace (a module) opens with a header docstring with `@since` and an example
 * (a ```ts block, which `npm run check:snippets` type-checks).
 *
 * `@since` is the release a name first shipped in: the version of the first release whose listing
 * (`packages/<name>/API.md` at that release's commit, read with `git show`) has the name, and for a name in no
 * release yet a version newer than the last release and not newer than the package's own version
 * (package.json). Fails naming the source file and line, the export and what is missing or wrong.
 *
 * Run after `npm run build` (`npm run check:docs` does both):
 *   node scripts/check-docs.ts
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { type Declared, read } from "./api-listing.ts"
import { packages } from "./build.ts"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The releases, oldest first: the version and the commit its listings are read from. */
export const releases: ReadonlyArray<{ readonly version: string; readonly commit: string }> = [
  { version: "0.1.0", commit: "7791918" },
  { version: "0.2.0", commit: "b6aa1be" }
]

/** `1.2.3` → [1, 2, 3]; anything else → undefined. */
const parseVersion = (text: string): ReadonlyArray<number> | undefined => {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(text)
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])]
}

const compare = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number =>
  (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0)

/**
 * The names of an API.md listing: `Namespace` for each `## Namespace` section, `Namespace.name` for each name
 * listed under it, and `name` for a name the package exports itself (under `## @rolecraft/<name>`).
 */
export const listed = (markdown: string): ReadonlySet<string> => {
  const names = new Set<string>()
  let section: string | undefined
  for (const line of markdown.split("\n")) {
    const heading = /^## (\S+)$/.exec(line)
    if (heading?.[1] !== undefined) {
      section = heading[1].startsWith("@") ? "" : heading[1]
      if (section !== "") names.add(section)
      continue
    }
    const item = /^- `([^`]+)`:/.exec(line)
    if (item?.[1] !== undefined && section !== undefined) names.add(section === "" ? item[1] : `${section}.${item[1]}`)
  }
  return names
}

/** The listing of `name` at each release (an empty set when the package did not exist then). */
const releaseListings = (
  name: string
): ReadonlyArray<{ readonly version: string; readonly names: ReadonlySet<string> }> =>
  releases.map(({ commit, version }) => {
    const shown = spawnSync("git", ["show", `${commit}:packages/${name}/API.md`], { cwd: root, encoding: "utf8" })
    if (shown.status === 0) return { version, names: listed(shown.stdout) }
    const known = spawnSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: root })
    if (known.status !== 0)
      throw new Error(
        `the ${version} release commit ${commit} is not in this clone (a shallow clone?): run git fetch --unshallow`
      )
    return { version, names: new Set<string>() }
  })

/** The tags of a docstring: `@since 0.1.0` → since: ["0.1.0"]. */
const tags = (doc: string): Map<string, Array<string>> => {
  const found = new Map<string, Array<string>>()
  for (const match of doc.matchAll(/^\s*\*?\s*@(\w+)\s*(.*?)\s*(?:\*\/)?$/gm)) {
    const all = found.get(match[1] ?? "") ?? []
    all.push(match[2] ?? "")
    found.set(match[1] ?? "", all)
  }
  return found
}

/** `packages/core/dist/Agent.d.ts` → `packages/core/src/Agent.ts`, with the line declaring `name`. */
const source = (declared: Declared, name: string): string => {
  const file = relative(root, declared.file)
    .replace(/\/dist\//, "/src/")
    .replace(/\.d\.ts$/, ".ts")
  if (!existsSync(join(root, file))) return file
  const keyword =
    declared.kind === "function"
      ? "(?:function|const|let)"
      : declared.kind === "namespace"
        ? "(?:namespace|module)"
        : declared.kind
  const pattern = new RegExp(
    `^export\\s+(?:declare\\s+)?(?:abstract\\s+)?${keyword}\\s+${name.replace(/\$/g, "\\$")}\\b`
  )
  const index = readFileSync(join(root, file), "utf8")
    .split("\n")
    .findIndex((line) => pattern.test(line))
  return index < 0 ? file : `${file}:${index + 1}`
}

/** What is wrong with the `@since` of a name, or undefined. */
export const sinceProblem = (
  sinces: ReadonlyArray<string> | undefined,
  expected: string | undefined,
  packageVersion: ReadonlyArray<number>,
  lastRelease: ReadonlyArray<number>
): string | undefined => {
  if (sinces === undefined || sinces.length === 0) return "no @since"
  if (sinces.length > 1) return `${sinces.length} @since tags`
  const since = sinces[0] ?? ""
  const version = parseVersion(since)
  if (version === undefined) return `@since "${since}" is not a version`
  if (expected !== undefined)
    return since === expected ? undefined : `@since ${since}, but it shipped in ${expected}: @since ${expected}`
  if (compare(version, packageVersion) > 0)
    return `@since ${since} is newer than the package (${packageVersion.join(".")})`
  if (compare(version, lastRelease) <= 0)
    return `@since ${since}, but it is in no release up to ${lastRelease.join(".")}: it is new, @since ${packageVersion.join(".")}`
  return undefined
}

/**
 * What is wrong with the docstring of one declaration: `expected` is the release it first shipped in (undefined
 * for a name in no release yet), `packageVersion` its package's version, `lastRelease` the newest release.
 */
export const docProblems = (
  doc: string | undefined,
  expected: string | undefined,
  packageVersion: ReadonlyArray<number>,
  lastRelease: ReadonlyArray<number>
): ReadonlyArray<string> => {
  if (doc === undefined) return ["no docstring (needs @since and @category)"]
  const docTags = tags(doc)
  return [
    sinceProblem(docTags.get("since"), expected, packageVersion, lastRelease),
    (docTags.get("category") ?? []).some((category) => category !== "") ? undefined : "no @category"
  ].filter((problem) => problem !== undefined)
}

let checked = 0

/**
 * One declaration per kind and file: the overloads of a function (tsc writes each on its own line, the docstring
 * above the first) are one declaration, checked by its docstring.
 */
const oneOfEach = (all: ReadonlyArray<Declared>): ReadonlyArray<Declared> => {
  const chosen = new Map<string, Declared>()
  for (const declared of all) {
    const key = `${declared.kind}\0${declared.file}`
    const before = chosen.get(key)
    if (before === undefined || (before.doc === undefined && declared.doc !== undefined)) chosen.set(key, declared)
  }
  return [...chosen.values()]
}

/** Every problem of one package's docstrings, one line each. */
export const problems = (name: string): ReadonlyArray<string> => {
  const entry = join(root, "packages", name, "dist", "index.d.ts")
  if (!existsSync(entry)) throw new Error(`packages/${name}/dist/index.d.ts is missing: run npm run build first`)
  const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8"))
  const packageVersion = parseVersion(manifest.version)
  if (packageVersion === undefined) return [`packages/${name}/package.json: version "${manifest.version}" is not x.y.z`]
  const history = releaseListings(name)
  const lastRelease = parseVersion(releases[releases.length - 1]?.version ?? "0.0.0") ?? [0, 0, 0]
  const expected = (key: string) => history.find((release) => release.names.has(key))?.version
  const found: Array<string> = []
  const checkName = (key: string, label: string, all: ReadonlyArray<Declared>) => {
    for (const declared of oneOfEach(all)) {
      checked += 1
      const where = `${source(declared, label.split(".").pop() ?? label)}: ${label} (${declared.kind})`
      const missing = docProblems(declared.doc, expected(key), packageVersion, lastRelease)
      if (missing.length > 0) found.push(`${where}: ${missing.join("; ")}`)
    }
  }
  const module = read(entry)
  for (const [exported, all] of module.docs) checkName(exported, exported, all)
  for (const [namespace, file] of module.namespaces) {
    const inner = read(file)
    // The header is read from the source: tsc drops it from a declaration file whose first import it elides.
    const header = relative(root, file)
      .replace(/\/dist\//, "/src/")
      .replace(/\.d\.ts$/, ".ts")
    const text = existsSync(join(root, header)) ? readFileSync(join(root, header), "utf8") : ""
    const opening = text.startsWith("/**") ? text.slice(0, text.indexOf("*/") + 2) : undefined
    const problems =
      opening === undefined
        ? ["no module header (a docstring opening the file, with @since and an example)"]
        : [
            sinceProblem(tags(opening).get("since"), expected(namespace), packageVersion, lastRelease),
            /^\s*\*\s*```(ts|typescript)\b/m.test(opening) ? undefined : "no example (a ```ts block)"
          ].filter((problem) => problem !== undefined)
    if (problems.length > 0) found.push(`${header}:1: ${namespace} (module header): ${problems.join("; ")}`)
    for (const [exported, all] of inner.docs) checkName(`${namespace}.${exported}`, `${namespace}.${exported}`, all)
    for (const nested of inner.namespaces.keys())
      found.push(`${header}: ${namespace}.${nested}: a nested namespace, which this check does not read yet`)
  }
  return found
}

const main = () => {
  let total = 0
  for (const name of packages) {
    const found = problems(name)
    total += found.length
    for (const line of found) console.log(line)
  }
  if (total === 0)
    console.log(`The ${checked} declarations exported by ${packages.length} packages have @since and @category.`)
  else {
    console.log(`${total} docstring problem(s) in the public exports.`)
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
