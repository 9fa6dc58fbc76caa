import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as ModelResponse from "../src/ModelResponse.ts"

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "q" }], action: "ask" }

const streaming = (chunks: ReadonlyArray<ModelResponse.ProviderChunk>) =>
  LanguageModel.make({ stream: () => Stream.fromIterable(chunks) }, { name: "test" })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  assert.isDefined(error)
  return (error as { readonly error: E }).error
}

describe("LanguageModel stream", () => {
  it.effect("generate over a provider that only streams is the stream run to its end", () =>
    Effect.gen(function* () {
      const model = streaming([
        { text: "Looking " },
        { text: "it up." },
        // the second call's name comes first, its id later; the first call's id and name together
        { toolCalls: [{ index: 1, name: "nights", arguments: '{"ci' }] },
        { toolCalls: [{ index: 0, id: "c0", name: "search", arguments: '{"city":' }] },
        { toolCalls: [{ index: 1, id: "c1", arguments: 'ty":"Porto"}' }] },
        { toolCalls: [{ index: 0, arguments: '"Lisbon"}' }] },
        { finishReason: "tool_calls", usage: { inputTokens: 1, outputTokens: 1 } },
        { usage: { inputTokens: 20, outputTokens: 7 }, model: "m-1" }
      ])
      const parts = yield* Stream.runCollect(model.stream(ask))
      const generated = yield* model.generate(ask)
      const last = parts.at(-1)
      assert.deepStrictEqual(generated, last?._tag === "Finished" ? last.response : undefined)
      assert.deepStrictEqual(generated, {
        text: "Looking it up.",
        // in the order the calls began: the one at wire index 1 first
        toolCalls: [
          { id: "c1", name: "nights", arguments: '{"city":"Porto"}' },
          { id: "c0", name: "search", arguments: '{"city":"Lisbon"}' }
        ],
        usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27 },
        finishReason: "tool_calls",
        model: "m-1"
      })
    })
  )

  it.effect("a provider that cannot stream is driven through generate: one delta per step, then Finished", () =>
    Effect.gen(function* () {
      const model = LanguageModel.make(() => ({
        text: "Booking it.",
        toolCalls: [
          { id: "a", name: "book", arguments: '{"id":1}' },
          { id: "b", name: "pay", arguments: "" }
        ],
        usage: { inputTokens: 3, outputTokens: 2 }
      }))
      const parts = yield* Stream.runCollect(model.stream(ask))
      assert.deepStrictEqual(
        parts.map((part) => part._tag),
        ["TextDelta", "ToolCallArgumentsStarted", "ToolCallArgumentsDelta", "ToolCallArgumentsStarted", "Finished"]
      )
      assert.deepStrictEqual(parts[0], { _tag: "TextDelta", delta: "Booking it." })
      assert.deepStrictEqual(parts[3], { _tag: "ToolCallArgumentsStarted", index: 1, id: "b", name: "pay" })
    })
  )

  it.effect("usage is recorded into the UsageMeter once, when the stream finishes", () =>
    Effect.gen(function* () {
      const meter = yield* LanguageModel.makeUsageMeter
      const model = streaming([
        { text: "a" },
        { text: "b", finishReason: "stop" },
        { usage: { inputTokens: 4, outputTokens: 2 } }
      ])
      yield* Stream.runDrain(model.stream(ask)).pipe(Effect.provideService(LanguageModel.UsageMeter, meter))
      assert.deepStrictEqual(yield* meter.total, {
        usage: { inputTokens: 4, outputTokens: 2, totalTokens: 6 },
        calls: 1
      })
    })
  )

  it.effect("interrupting the stream, or no longer pulling it, aborts the provider's request", () =>
    Effect.gen(function* () {
      const signals: Array<AbortSignal> = []
      const model = LanguageModel.make({
        stream: ({ signal }) => {
          signals.push(signal)
          return Stream.concat(Stream.make({ text: "first " }, { text: "second" }), Stream.never)
        }
      })
      // the consumer stops pulling after one part
      const first = yield* Stream.runCollect(Stream.take(model.stream(ask), 1))
      assert.deepStrictEqual(first, [{ _tag: "TextDelta", delta: "first " }])
      assert.isTrue(signals[0]?.aborted)
      // the consuming fiber is interrupted while the provider stalls
      const fiber = yield* Effect.forkChild(Stream.runDrain(model.stream(ask)))
      yield* Effect.yieldNow
      assert.isFalse(signals[1]?.aborted)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(signals[1]?.aborted)
    })
  )

  it.effect("a stream the provider ended is not aborted: its request is over", () =>
    Effect.gen(function* () {
      const signals: Array<AbortSignal> = []
      const model = LanguageModel.make({
        stream: ({ signal }) => {
          signals.push(signal)
          return Stream.make({ text: "whole" }, { finishReason: "stop" })
        }
      })
      yield* Stream.runDrain(model.stream(ask))
      assert.strictEqual(signals.length, 1)
      assert.isFalse(signals[0]?.aborted)
    })
  )

  it.effect("fromChunks joins chunks as a stream would", () =>
    Effect.gen(function* () {
      const response = yield* LanguageModel.fromChunks([
        {
          toolCalls: [
            { index: 0, id: "x", name: "f", arguments: '{"a"' },
            { index: 0, arguments: ":1}" }
          ]
        },
        { finishReason: "tool_calls" }
      ])
      assert.deepStrictEqual(response.toolCalls, [{ id: "x", name: "f", arguments: '{"a":1}' }])
      const cut = yield* Effect.exit(LanguageModel.fromChunks([{ text: "x" }], "pack"))
      assert.strictEqual(failureOf(cut).category, "TRANSIENT")
    })
  )
})
