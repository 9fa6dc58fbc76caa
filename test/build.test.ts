/**
 * The package build (scripts/build.ts) skips a package whose `dist/` is up to
 * date, judged by content: run twice, the second run does not rebuild; an
 * edited source, a deleted output file or a hand-edited output does rebuild;
 * touching a file without changing it does not.
 *
 * It builds `@rolecraft/core` in a copy of the repository's build inputs under
 * a temporary folder, whose `node_modules` is a real folder of links to the
 * repository's packages, so the build's stamps (in `node_modules/.cache`) and
 * its `dist/` are the copy's own and nothing here touches the real ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

const copyOfRepository = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "rolecraft-build-"))
  for (const file of ["tsconfig.base.json", "package-lock.json", "package.json"])
    cpSync(join(root, file), join(dir, file))
  cpSync(join(root, "scripts", "build.ts"), join(dir, "scripts", "build.ts"))
  for (const file of ["src", "package.json", "tsconfig.build.json"])
    cpSync(join(root, "packages", "core", file), join(dir, "packages", "core", file), { recursive: true })
  mkdirSync(join(dir, "node_modules"))
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry === ".cache" || entry === ".bin") continue
    symlinkSync(join(root, "node_modules", entry), join(dir, "node_modules", entry))
  }
  return dir
}

const build = (dir: string) => {
  const run = spawnSync(process.execPath, [join(dir, "scripts", "build.ts"), "core"], { cwd: dir, encoding: "utf8" })
  assert.strictEqual(run.status, 0, `${run.stdout}${run.stderr}`)
  return { skipped: /up to date, not rebuilt: @rolecraft\/core/.test(run.stdout), output: run.stdout }
}

describe("scripts/build.ts", () => {
  it("skips a package whose dist is up to date, and rebuilds it when a source or an output changes", () => {
    const dir = copyOfRepository()
    try {
      const dist = join(dir, "packages", "core", "dist")
      const index = join(dist, "index.js")
      assert.isFalse(build(dir).skipped, "the first build builds")
      assert.isTrue(existsSync(index))
      const builtAt = statSync(index).mtimeMs

      assert.isTrue(build(dir).skipped, "the second build is skipped")
      assert.strictEqual(statSync(index).mtimeMs, builtAt, "and leaves dist alone")

      // Touched, not changed: still up to date (content decides, not timestamps).
      const source = join(dir, "packages", "core", "src", "index.ts")
      const later = new Date(Date.now() + 60_000)
      utimesSync(source, later, later)
      assert.isTrue(build(dir).skipped, "a touched source does not rebuild")

      appendFileSync(source, "\n// edited\n")
      assert.isFalse(build(dir).skipped, "an edited source rebuilds")
      assert.isTrue(build(dir).skipped)

      rmSync(index)
      assert.isFalse(build(dir).skipped, "a deleted output file rebuilds")
      assert.isTrue(existsSync(index))

      writeFileSync(index, "export {}\n")
      assert.isFalse(build(dir).skipped, "a hand-edited output rebuilds")

      rmSync(dist, { recursive: true })
      assert.isFalse(build(dir).skipped, "a deleted dist rebuilds")
      assert.isTrue(existsSync(index))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
