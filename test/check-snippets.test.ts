/**
 * The documentation snippet check (scripts/check-snippets.ts): which blocks
 * it takes, and that a snippet that does not compile is reported at its
 * place in the Markdown file.
 */
import { assert, describe, it } from "@effect/vitest"
import { check, documentation, extract, extractDocstrings, sources } from "../scripts/check-snippets.ts"

const markdown = [
  "# Title", //  1
  "", //  2
  "```ts", //  3
  'import { Schema } from "effect"', //  4
  "const n: number = 1", //  5
  "```", //  6
  "", //  7
  "```sh", //  8
  "npm start", //  9
  "```", // 10
  "", // 11
  "~~~typescript", // 12
  "const s: string = 'x'", // 13
  "~~~", // 14
  "", // 15
  "````md", // 16
  "```ts", // 17
  "not code, an example of Markdown", // 18
  "```", // 19
  "````", // 20
  "```ts", // 21
  'const wrong: number = "one"', // 22
  "```" // 23
].join("\n")

describe("documentation snippets", () => {
  it("takes ts and typescript blocks with the line their code starts on, and nothing inside other blocks", () => {
    const snippets = extract("doc.md", markdown)
    assert.deepStrictEqual(
      snippets.map((snippet) => [snippet.line, snippet.code]),
      [
        [4, 'import { Schema } from "effect"\nconst n: number = 1\n'],
        [13, "const s: string = 'x'\n"],
        [22, 'const wrong: number = "one"\n']
      ]
    )
  })

  it("a snippet that does not compile is reported at its Markdown line and column; the others pass", () => {
    const snippets = extract("doc.md", markdown)
    const good = check(snippets.slice(0, 2), ".snippets-test")
    assert.isTrue(good.ok, good.report)
    const bad = check(snippets, ".snippets-test")
    assert.isFalse(bad.ok)
    assert.match(bad.report, /^doc\.md:22:7: error TS2322: Type 'string' is not assignable to type 'number'\./m)
    assert.notInclude(bad.report, "doc.md:4:")
  })

  it("a block opened with `ts run` is a program to run; the others are only type-checked", () => {
    const snippets = extract("doc.md", ["```ts run", "console.log(1)", "```", "```ts", "const a = 1", "```"].join("\n"))
    assert.deepStrictEqual(
      snippets.map((snippet) => [snippet.line, snippet.run]),
      [
        [2, true],
        [5, false]
      ]
    )
  })

  it("checks the README, every page under docs/ and every package's README", () => {
    const files = documentation()
    assert.strictEqual(files[0], "README.md")
    assert.isTrue(
      files.slice(1).every((file) => /^docs\/[^/]+\.md$|^packages\/[^/]+\/README\.md$/.test(file)),
      files.join(", ")
    )
    for (const name of ["core", "mcp", "openai", "effect-ai", "testing", "durable"]) {
      assert.include(files, `packages/${name}/README.md`)
    }
  })

  it("takes the ts blocks of docstrings, reported at their line in the source; a wrong example fails", () => {
    const source = [
      "/**", //  1
      " * Summary.", //  2
      " *", //  3
      " * @example", //  4
      " * ```ts", //  5
      ' * const wrong: number = "one"', //  6
      " * ```", //  7
      " */", //  8
      "export const a = 1", //  9
      "// ```ts not in a docstring", // 10
      "  /** An indented one. ```ts", // 11
      "   * ```ts", // 12
      "   * const ok: number = 1", // 13
      "   * ```", // 14
      "   */" // 15
    ].join("\n")
    const snippets = extractDocstrings("packages/x/src/A.ts", source)
    assert.deepStrictEqual(
      snippets.map((snippet) => [snippet.line, snippet.code]),
      [
        [6, 'const wrong: number = "one"\n'],
        [13, "const ok: number = 1\n"]
      ]
    )
    const report = check(snippets, ".snippets-test")
    assert.isFalse(report.ok)
    assert.match(report.report, /^packages\/x\/src\/A\.ts:6:7: error TS2322/m)
  })

  it("reads the docstrings of every source of packages/*/src, internal modules included", () => {
    const files = sources()
    assert.include(files, "packages/core/src/Agent.ts")
    assert.include(files, "packages/durable/src/DurableChat.ts")
    assert.isTrue(files.some((file) => file.includes("/internal/")))
    assert.isTrue(
      files.every((file) => /^packages\/[^/]+\/src\/.+\.ts$/.test(file)),
      files.join(", ")
    )
  })
})
