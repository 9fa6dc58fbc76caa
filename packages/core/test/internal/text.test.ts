import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { cut, shorten } from "../../src/internal/text.ts"

describe("internal/text", () => {
  it("shorten keeps a short text, and cuts a long one to the length with … at the end", () => {
    assert.strictEqual(shorten("abc", 3), "abc")
    assert.strictEqual(shorten("abcd", 3), "ab…")
    assert.strictEqual(shorten("a😀b", 3), "a…", "the emoji's two halves go together")
    assert.strictEqual(cut("a😀b", 2), "a")
    assert.strictEqual(cut("abc", -1), "")
  })

  it("property: a cut is a prefix, at most the length, never ending in half a surrogate pair", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.integer({ min: 1, max: 50 }), (text, length) => {
        const short = shorten(text, length)
        assert.isAtMost(short.length, length)
        const head = short.endsWith("…") && short !== text ? short.slice(0, -1) : short
        assert.isTrue(text.startsWith(head))
        assert.isFalse(/[\uD800-\uDBFF]$/.test(head))
      })
    )
  })
})
