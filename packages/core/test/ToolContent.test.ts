import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as ToolContent from "../src/ToolContent.ts"

const written = (value: unknown) => ToolContent.success(value, { action: "find" })

describe("ToolCallAnswered", () => {
  it("a success is a string as is, undefined as null, anything else as JSON", () => {
    assert.deepStrictEqual(written("Paris"), Result.succeed("Paris"))
    assert.deepStrictEqual(written(undefined), Result.succeed("null"))
    assert.deepStrictEqual(written(3), Result.succeed("3"))
    assert.deepStrictEqual(written({ nights: 3, city: "Oslo" }), Result.succeed('{"nights":3,"city":"Oslo"}'))
  })

  it("a bigint is its decimal string, a Date its ISO string, a Map an object, a Set an array", () => {
    assert.deepStrictEqual(written({ n: 12n }), Result.succeed('{"n":"12"}'))
    assert.deepStrictEqual(written(new Date("2026-11-02T15:00:00.000Z")), Result.succeed('"2026-11-02T15:00:00.000Z"'))
    assert.deepStrictEqual(
      written(
        new Map<unknown, unknown>([
          ["a", 1],
          [{ k: 1 }, 2]
        ])
      ),
      Result.succeed('{"a":1,"{\\"k\\":1}":2}')
    )
    assert.deepStrictEqual(written(new Set(["a", "b"])), Result.succeed('["a","b"]'))
  })

  it("a cycle is EXECUTION naming the action and the path where it closes", () => {
    const cyclic: Record<string, unknown> = { a: [1] }
    ;(cyclic.a as Array<unknown>).push(cyclic)
    const result = written(cyclic)
    assert.isTrue(Result.isFailure(result))
    if (Result.isSuccess(result)) return
    assert.strictEqual(result.failure._tag, "ExecutionFailure")
    assert.strictEqual(result.failure.category, "EXECUTION")
    assert.strictEqual(result.failure.action, "find")
    assert.strictEqual(
      result.failure.message,
      "find: the result cannot be serialised: the value refers to itself at $.a[1]"
    )
  })

  it("a failure is {error:{category,message}}; structured is a plain object or nothing", () => {
    assert.strictEqual(
      ToolContent.failure("NOT_FOUND", "no book"),
      '{"error":{"category":"NOT_FOUND","message":"no book"}}'
    )
    assert.deepStrictEqual(ToolContent.structured({ a: 1 }), { a: 1 })
    assert.strictEqual(ToolContent.structured([1]), undefined)
    assert.strictEqual(ToolContent.structured(new Map()), undefined)
  })
})
