/**
 * The store boundary as one helper (C52, C53): text a store cannot hold is VALIDATION naming the field, a store
 * that fails (by failure or by defect) is TRANSIENT naming it, a row that does not decode is EXECUTION naming
 * the row and field, and each becomes the action error of its category.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Schema } from "effect"
import * as fc from "fast-check"
import { ExecutionFailure, TransientFailure, ValidationError } from "../src/ActionError.ts"
import * as StoreBoundary from "../src/StoreBoundary.ts"

const store = "the test store"

const failureOf = <A>(exit: Exit.Exit<A, StoreBoundary.StoreError>): StoreBoundary.StoreError =>
  Option.getOrThrow(Exit.findErrorOption(exit))

describe("StoreBoundary", () => {
  const problems: ReadonlyArray<readonly [string, string, number | undefined, string | undefined]> = [
    ["plain text", "alice", undefined, undefined],
    ["unicode and pairs", "Zoë 🚀 名前 \u00e9\u0301 \u2028", undefined, undefined],
    ["a NUL", "ali\u0000ce", undefined, "holds a NUL character (\\u0000) at index 3, which a store cannot keep"],
    [
      "a lone high surrogate",
      "s\uD800x",
      undefined,
      "holds a lone surrogate (\\uD800) at index 1, which UTF-8 cannot encode"
    ],
    [
      "a lone high surrogate last",
      "s\uDBFF",
      undefined,
      "holds a lone surrogate (\\uDBFF) at index 1, which UTF-8 cannot encode"
    ],
    [
      "a lone low surrogate",
      "\uDC00x",
      undefined,
      "holds a lone surrogate (\\uDC00) at index 0, which UTF-8 cannot encode"
    ],
    [
      "a reversed pair",
      "a\uDC00\uD800",
      undefined,
      "holds a lone surrogate (\\uDC00) at index 1, which UTF-8 cannot encode"
    ],
    ["a name at its cap", "x".repeat(1024), undefined, undefined],
    ["a name past its cap", "x".repeat(1025), undefined, "is 1025 characters long; a store takes at most 1024"],
    [
      "1 MB of text",
      "x".repeat(1 << 20),
      StoreBoundary.maxTextLength,
      "is 1048576 characters long; a store takes at most 65536"
    ]
  ]
  for (const [what, text, max, expected] of problems) {
    it(`textProblem: ${what}`, () => {
      assert.strictEqual(StoreBoundary.textProblem(text, max), expected)
    })
  }

  it("property: textProblem refuses exactly the text that does not survive UTF-8 or holds a NUL", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
        const survives = Buffer.from(text, "utf8").toString("utf8") === text && !text.includes("\u0000")
        assert.strictEqual(StoreBoundary.textProblem(text) === undefined, survives)
      }),
      { numRuns: 2000 }
    )
  })

  it.effect("checkText names the first field it cannot hold and never quotes the text", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        StoreBoundary.checkText(store, [
          { field: "runId", text: "run-1" },
          { field: "missing", text: undefined },
          { field: "approver", text: "se\u0000cret" },
          { field: "reason", text: "\uD800" }
        ])
      )
      assert.deepStrictEqual(
        [error.category, error.field, error.retryable, error.message],
        [
          "VALIDATION",
          "approver",
          false,
          "the test store: approver holds a NUL character (\\u0000) at index 2, which a store cannot keep"
        ]
      )
      assert.notInclude(error.message, "se\u0000cret")
      yield* StoreBoundary.checkText(store, [
        { field: "reason", text: "x".repeat(65_536), max: StoreBoundary.maxTextLength }
      ])
    })
  )

  it.effect("guard: a failure and a defect of the driver are TRANSIENT naming the store; a StoreError passes", () =>
    Effect.gen(function* () {
      const failed = failureOf(
        yield* Effect.exit(StoreBoundary.guard(store, "read a run", Effect.fail(new Error("Connection refused\nat …"))))
      )
      assert.deepStrictEqual(
        [failed.category, failed.retryable, failed.message],
        ["TRANSIENT", true, "the test store could not read a run: Connection refused"]
      )
      const died = failureOf(
        yield* Effect.exit(StoreBoundary.guard(store, "write a run", Effect.die(new Error("Connection closed"))))
      )
      assert.deepStrictEqual(
        [died.category, died.message],
        ["TRANSIENT", "the test store could not write a run: Connection closed"]
      )
      const row = new StoreBoundary.StoreError({ store, category: "EXECUTION", field: "status", message: "bad row" })
      assert.strictEqual(failureOf(yield* Effect.exit(StoreBoundary.guard(store, "read", Effect.fail(row)))), row)
    })
  )

  it.effect("guard: an interruption stays an interruption", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(StoreBoundary.guard(store, "wait", Effect.never))
      yield* Effect.yieldNow
      const exit = yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.isTrue(Option.isNone(Exit.findErrorOption(exit)))
    })
  )

  it.effect("decodeRow: a row that does not decode is EXECUTION naming the store, the row and the field", () =>
    Effect.gen(function* () {
      const Row = Schema.Struct({ run_id: Schema.String, state: Schema.Literals(["Running", "Done"]), at: Schema.Int })
      assert.deepStrictEqual(
        yield* StoreBoundary.decodeRow(store, "run r-1", Row, { run_id: "r-1", state: "Done", at: 5 }),
        { run_id: "r-1", state: "Done", at: 5 }
      )
      const error = yield* Effect.flip(
        StoreBoundary.decodeRow(store, "run r-1", Row, { run_id: "r-1", state: "Exploded", at: 5 })
      )
      assert.deepStrictEqual([error.category, error.field, error.retryable], ["EXECUTION", "state", false])
      assert.match(error.message, /^the test store: the stored run r-1 does not decode at state: /)
      const cut = yield* Effect.flip(StoreBoundary.decodeRow(store, "run r-2", Row, { run_id: "r-2" }))
      assert.strictEqual(cut.category, "EXECUTION")
      assert.include(cut.message, "the stored run r-2 does not decode")
    })
  )

  it("toActionError: each category becomes the action error of that category, naming the field", () => {
    const validation = StoreBoundary.toActionError(
      new StoreBoundary.StoreError({ store, category: "VALIDATION", field: "approver", message: "bad approver" }),
      "resume"
    )
    assert.instanceOf(validation, ValidationError)
    assert.deepStrictEqual((validation as ValidationError).issues, [{ path: "approver", message: "bad approver" }])
    assert.strictEqual(validation.message, "resume: bad approver")
    const transient = StoreBoundary.toActionError(new StoreBoundary.StoreError({ store, message: "down" }), "book")
    assert.instanceOf(transient, TransientFailure)
    assert.isTrue(transient.retryable)
    const execution = StoreBoundary.toActionError(
      new StoreBoundary.StoreError({ store, category: "EXECUTION", message: "bad row" }),
      "book"
    )
    assert.instanceOf(execution, ExecutionFailure)
  })
})
