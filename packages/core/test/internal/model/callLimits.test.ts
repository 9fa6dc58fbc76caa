import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as LanguageModel from "../../../src/LanguageModel.ts"
import type * as ModelResponse from "../../../src/ModelResponse.ts"

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "q" }], action: "ask" }

/** A provider that sends `chunks`, one every `every` ms of the test clock, then waits until its signal aborts. */
const stalling =
  (chunks: ReadonlyArray<ModelResponse.ProviderChunk>) =>
  ({ signal }: LanguageModel.ProviderCall): AsyncIterable<ModelResponse.ProviderChunk> => ({
    async *[Symbol.asyncIterator]() {
      for (const chunk of chunks) yield chunk
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve()
        signal.addEventListener("abort", () => resolve(), { once: true })
      })
    }
  })

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", String(exit))
  return (reason as { readonly error: { readonly category: string; readonly message: string } }).error
}

describe("a model call's time limits", () => {
  it.effect("a stream that goes silent ends at the idle limit: TIMEOUT, its request aborted", () =>
    Effect.gen(function* () {
      let aborted = false
      const model = LanguageModel.make(
        {
          stream: (call) => {
            call.signal.addEventListener("abort", () => {
              aborted = true
            })
            return stalling([{ text: "Hel" }])(call)
          }
        },
        { idleTimeout: "30 seconds", timeout: "10 minutes" }
      )
      const fiber = yield* Effect.forkChild(Effect.exit(Stream.runCollect(model.stream(ask))))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(fiber.pollUnsafe(), "still running before the idle limit")
      yield* TestClock.adjust("2 seconds")
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error.category, "TIMEOUT")
      assert.include(error.message, "ask: the model stream sent nothing for 30s (idleTimeout)")
      assert.isTrue(aborted)
    })
  )

  it.effect("a stream that keeps sending ends at the whole-call deadline", () =>
    Effect.gen(function* () {
      const model = LanguageModel.make(
        { stream: () => Stream.fromEffectRepeat(Effect.as(Effect.sleep("1 second"), { text: "." })) },
        { idleTimeout: "5 seconds", timeout: "1 minute" }
      )
      const fiber = yield* Effect.forkChild(Effect.exit(Stream.runDrain(model.stream(ask))))
      yield* TestClock.adjust("61 seconds")
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error.category, "TIMEOUT")
      assert.include(error.message, "ask: the model call did not finish within 1m (timeout)")
    })
  )

  it.effect("a generated answer is cut off at the deadline", () =>
    Effect.gen(function* () {
      const model = LanguageModel.make(() => Effect.never, { timeout: "2 minutes" })
      const fiber = yield* Effect.forkChild(Effect.exit(model.generate(ask)))
      yield* TestClock.adjust("2 minutes")
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error.category, "TIMEOUT")
      assert.include(error.message, "did not finish within 2m (timeout)")
    })
  )
})
