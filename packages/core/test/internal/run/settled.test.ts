import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { settled } from "../../../src/internal/run/settled.ts"

describe("settled", () => {
  it.effect("a success Exit gives its value; a failure Exit and any other effect run as usual", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* settled(Effect.succeed(1)), 1)
      assert.strictEqual(yield* settled(Effect.sync(() => 2)), 2)
      assert.strictEqual(yield* settled(Effect.as(Effect.sleep(0), 3)), 3)
      const failed = yield* Effect.exit(
        Effect.gen(function* () {
          return yield* settled(Effect.fail("boom"))
        })
      )
      assert.deepStrictEqual(failed, Exit.fail("boom"))
    })
  )

  it("a success Exit is an iterator that ends at once, so yield* does not suspend the generator", () => {
    const body = function* () {
      const value: number = yield* settled(Effect.succeed(41))
      return value + 1
    }
    const result = body().next()
    assert.deepStrictEqual([result.done, result.value], [true, 42])
  })
})
