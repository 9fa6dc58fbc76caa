/**
 * The docstring check of the public exports (scripts/check-docs.ts): what a docstring must say, how a release
 * listing is read, and that the walk over the built declarations finds each export's docstring.
 */
import { assert, describe, it } from "@effect/vitest"
import { docProblems, listed, problems } from "../scripts/check-docs.ts"

const doc = (...lines: ReadonlyArray<string>) =>
  ["/**", " * Summary.", " *", ...lines.map((l) => ` * ${l}`), " */"].join("\n")
const v = (text: string) => text.split(".").map(Number)

describe("docstrings of the public exports", () => {
  it("needs a docstring, @since and @category", () => {
    assert.deepStrictEqual(docProblems(undefined, "0.1.0", v("0.2.0"), v("0.1.0")), [
      "no docstring (needs @since and @category)"
    ])
    assert.deepStrictEqual(docProblems(doc("@since 0.1.0"), "0.1.0", v("0.2.0"), v("0.1.0")), ["no @category"])
    assert.deepStrictEqual(docProblems(doc("@category models"), "0.1.0", v("0.2.0"), v("0.1.0")), ["no @since"])
    assert.deepStrictEqual(docProblems(doc("@category models", "@since 0.1.0"), "0.1.0", v("0.2.0"), v("0.1.0")), [])
  })

  it("wants the release a name first shipped in, and for a new name one after the last release and not after the package", () => {
    const shipped = docProblems(doc("@category models", "@since 0.2.0"), "0.1.0", v("0.2.0"), v("0.1.0"))
    assert.deepStrictEqual(shipped, ["@since 0.2.0, but it shipped in 0.1.0: @since 0.1.0"])
    const fresh = docProblems(doc("@category models", "@since 0.1.0"), undefined, v("0.2.0"), v("0.1.0"))
    assert.deepStrictEqual(fresh, ["@since 0.1.0, but it is in no release up to 0.1.0: it is new, @since 0.2.0"])
    const future = docProblems(doc("@category models", "@since 0.3.0"), undefined, v("0.2.0"), v("0.1.0"))
    assert.deepStrictEqual(future, ["@since 0.3.0 is newer than the package (0.2.0)"])
    assert.deepStrictEqual(docProblems(doc("@category models", "@since 0.2.0"), undefined, v("0.2.0"), v("0.1.0")), [])
    assert.deepStrictEqual(docProblems(doc("@category models", "@since next"), undefined, v("0.2.0"), v("0.1.0")), [
      '@since "next" is not a version'
    ])
  })

  it("reads a listing's namespaces, their names and the package's own names", () => {
    const names = listed(
      [
        "# @rolecraft/x: public exports",
        "",
        "## @rolecraft/x",
        "",
        "- `top`: const",
        "",
        "## Agent",
        "",
        "- `make`: function"
      ].join("\n")
    )
    assert.deepStrictEqual([...names].sort(), ["Agent", "Agent.make", "top"])
  })

  it("finds no problem in the built packages (run after npm run build)", () => {
    assert.deepStrictEqual(problems("durable"), [])
  })
})
