/**
 * The documentation's programs (every block opened with ```` ```ts run ````
 * in README.md, docs/*.md and the packages' READMEs) run to their end: each
 * is written to a file inside the repository and run with `node` on the
 * packages' sources (the `@rolecraft/source` condition), and must exit 0
 * within a minute printing every `// prints "…"` line it promises. The
 * consumer check runs the same programs against the packed tarballs.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { documentation, extract } from "../scripts/check-snippets.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const folder = join(root, ".snippets-run")

const programs = documentation()
  .flatMap((page) => extract(page, readFileSync(join(root, page), "utf8")))
  .filter((snippet) => snippet.run)

describe("the documentation's programs", () => {
  it("there are some: durable's first program, the agent of mcpServers only, an effect/ai model calling a tool", () => {
    const places = programs.map((program) => program.file)
    for (const page of ["docs/durable.md", "docs/mcp.md", "docs/effect-ai.md"]) assert.include(places, page)
  })

  for (const program of programs) {
    it(`${program.file}:${program.line} runs to its end and prints what it says`, () => {
      mkdirSync(folder, { recursive: true })
      const file = join(folder, `${program.file.replace(/\W/g, "_")}_${program.line}.ts`)
      writeFileSync(file, program.code)
      try {
        const run = spawnSync(process.execPath, ["--conditions=@rolecraft/source", file], {
          cwd: root,
          encoding: "utf8",
          timeout: 60_000
        })
        const output = `${run.stdout}${run.stderr}`
        assert.strictEqual(run.status, 0, `exit ${run.status} ${run.signal ?? ""}\n${output}`)
        const lines = run.stdout.split("\n")
        for (const [, promised] of program.code.matchAll(/\/\/ prints "([^"]+)"/g)) {
          assert.include(lines, promised, output)
        }
      } finally {
        rmSync(file, { force: true })
      }
    }, 90_000)
  }
})
