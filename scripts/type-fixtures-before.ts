/**
 * Runs the type fixtures of `test/types/` against an earlier commit, to show that each program a fixture says must
 * not compile did compile there: on the earlier build tsc reports every `@ts-expect-error` directive of a fixture
 * as unused (TS2578), which means the line below it type-checked.
 *
 * The earlier tree is read with `git archive` into a temporary folder (nothing in this checkout changes); its
 * workspace packages are its own, every other dependency is this checkout's `node_modules`. The fixtures are
 * copied in and compiled with the earlier tree's `tsconfig.base.json`.
 *
 * `node scripts/type-fixtures-before.ts [ref]` — `ref` defaults to 30e4820, the main branch before the types
 * said what a program needs. Prints one line per directive and exits 1 when one did not compile before.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const ref = process.argv[2] ?? "30e4820"
const fixtures = join(root, "test", "types")
const dir = mkdtempSync(join(tmpdir(), "rolecraft-type-fixtures-"))

try {
  const archive = execFileSync("git", ["-C", root, "archive", ref], { maxBuffer: 1 << 30 })
  execFileSync("tar", ["-x", "-C", dir], { input: archive })
  mkdirSync(join(dir, "node_modules", "@rolecraft"), { recursive: true })
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry !== "@rolecraft") symlinkSync(join(root, "node_modules", entry), join(dir, "node_modules", entry))
  }
  for (const folder of readdirSync(join(dir, "packages"))) {
    const manifest = JSON.parse(readFileSync(join(dir, "packages", folder, "package.json"), "utf8")) as {
      readonly name: string
    }
    symlinkSync(join(dir, "packages", folder), join(dir, "node_modules", manifest.name))
  }
  cpSync(fixtures, join(dir, "test", "types"), { recursive: true })
  writeFileSync(
    join(dir, "tsconfig.fixtures.json"),
    JSON.stringify({ extends: "./tsconfig.base.json", include: ["test/types"] })
  )
  const tsc = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.fixtures.json", "--noEmit"], {
    cwd: dir,
    encoding: "utf8"
  })
  const output = `${tsc.stdout}${tsc.stderr}`
  let failed = 0
  let count = 0
  for (const file of readdirSync(fixtures).filter((name) => name.endsWith(".ts"))) {
    const lines = readFileSync(join(fixtures, file), "utf8").split("\n")
    lines.forEach((line, index) => {
      const directive = line.indexOf("// @ts-expect-error")
      if (directive === -1) return
      count++
      const at = `test/types/${file}(${index + 1},`
      const unused = output.split("\n").some((message) => message.startsWith(at) && message.includes("TS2578"))
      const reason = line.slice(directive + "// @ts-expect-error".length).trim()
      if (!unused) failed++
      console.log(`${unused ? "compiled before" : "DID NOT compile before"}: ${file}:${index + 1} ${reason}`)
    })
  }
  console.log(`${count - failed} of ${count} fixtures compiled on ${ref}`)
  process.exitCode = failed === 0 && count > 0 ? 0 : 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
