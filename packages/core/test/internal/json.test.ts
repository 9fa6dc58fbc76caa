import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import * as Json from "../../src/internal/json.ts"

const written = (value: unknown): string => {
  const result = Json.write(value)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success
}

describe("Json.write", () => {
  it("writes plain JSON values as JSON.stringify does, flat (the native path) or nested", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assert.strictEqual(written(value), JSON.stringify(value))
      }),
      { numRuns: 500 }
    )
  })

  it("a flat value is written (natively) as the walk writes it inside a record, where the walk takes it", () => {
    const scalar = fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.integer())
    const flat = fc.oneof(scalar, fc.array(scalar), fc.dictionary(fc.string(), scalar))
    fc.assert(
      fc.property(flat, (value) => {
        // `{ nested: value }` is not flat: the writer walks it and writes `value` by its own rules.
        assert.strictEqual(written({ nested: [value] }), `{"nested":[${written(value)}]}`)
      }),
      { numRuns: 500 }
    )
  })

  it("a one-level record or array is written by the same rules as a nested one: toJSON, bigint, Map, Set, undefined", () => {
    assert.strictEqual(written({ at: new Date(0) }), '{"at":"1970-01-01T00:00:00.000Z"}')
    assert.strictEqual(written({ n: 10n }), '{"n":"10"}')
    assert.strictEqual(written([new Set([1])]), "[[1]]")
    assert.strictEqual(written({ m: new Map([["a", 1]]) }), '{"m":{"a":1}}')
    assert.strictEqual(written({ a: undefined, b: 1 }), '{"b":1}')
    assert.strictEqual(written([undefined, Number.NaN, -0]), "[null,null,0]")
    assert.strictEqual(written({ toJSON: () => "own" }), '"own"')
    assert.strictEqual(written(undefined), "null")
  })

  it("a sparse array's holes are null, as JSON.stringify writes them (a walked array as a flat one)", () => {
    const holed = Object.assign(new Array(3), { 0: 1, 2: 3 })
    assert.strictEqual(written(holed), JSON.stringify(holed))
    assert.strictEqual(written({ list: Object.assign(new Array(2), { 1: { a: 1 } }) }), '{"list":[null,{"a":1}]}')
  })

  it("with sortKeys, keys are sorted by code unit at every depth, Map entries included, flat records too", () => {
    const sorted = (value: unknown) => Result.getOrThrow(Json.write(value, { sortKeys: true }))
    assert.strictEqual(sorted({ b: 1, a: 2 }), '{"a":2,"b":1}')
    assert.strictEqual(
      sorted({ z: { y: 1, x: [{ d: 1, c: 2 }] }, 10: 0, 2: 0 }),
      '{"10":0,"2":0,"z":{"x":[{"c":2,"d":1}],"y":1}}'
    )
    assert.strictEqual(
      sorted(
        new Map([
          ["b", 1],
          ["a", 2]
        ])
      ),
      '{"a":2,"b":1}'
    )
    assert.strictEqual(sorted("text"), '"text"')
  })

  it("property: with sortKeys a record is written the same whatever the order of its keys", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse())
        assert.strictEqual(
          Result.getOrThrow(Json.write(record, { sortKeys: true })),
          Result.getOrThrow(Json.write(reversed, { sortKeys: true }))
        )
      })
    )
  })
})

describe("Json.parseJson", () => {
  // V8's message quotes about 20 characters around a bad token: for an echoed secret, a piece of its middle
  // that no redaction recognises (the callers quote the text themselves, redacted before they cut it).
  it("a parse failure's message quotes no piece of the text", () => {
    const secret = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz"
    const texts = [
      `{"memo": ${secret}}`,
      `{"a": "${"y".repeat(30)}", "b": ${secret}}`,
      `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ${secret} ]`,
      `${secret}`
    ]
    for (const text of texts) {
      const parsed = Json.parseJson(text)
      assert.isTrue(Result.isFailure(parsed), text)
      const message = Result.isFailure(parsed) ? parsed.failure : ""
      assert.match(message, /^Unexpected token '.' is not valid JSON$/, text)
      for (let start = 0; start + 4 <= secret.length; start++) {
        assert.notInclude(message, secret.slice(start, start + 4), text)
      }
    }
    // Messages that quote nothing are left as they are.
    const trailing = Json.parseJson('{"a":1} x')
    assert.deepStrictEqual(
      trailing,
      Result.fail("Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)")
    )
  })
})
