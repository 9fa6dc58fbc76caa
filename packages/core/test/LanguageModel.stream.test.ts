import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import * as LanguageModel from "../src/LanguageModel.ts"

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "q" }], action: "ask" }

const streaming = (chunks: ReadonlyArray<LanguageModel.ProviderChunk>) =>
  LanguageModel.make({ stream: () => Stream.fromIterable(chunks) }, { name: "test" })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  assert.isDefined(error)
  return (error as { readonly error: E }).error
}

describe("LanguageModel stream", () => {
  it.effect(
    "joins fragments by index, takes ids and names from whichever fragment carries them and usage from the last chunk",
    () =>
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
        assert.deepStrictEqual(parts, [
          { _tag: "TextDelta", delta: "Looking " },
          { _tag: "TextDelta", delta: "it up." },
          { _tag: "ToolCallStarted", index: 0, id: "c0", name: "search" },
          { _tag: "ToolCallArgumentsDelta", index: 0, id: "c0", delta: '{"city":' },
          { _tag: "ToolCallStarted", index: 1, id: "c1", name: "nights" },
          // what arrived before the call's id is given when it starts
          { _tag: "ToolCallArgumentsDelta", index: 1, id: "c1", delta: '{"city":"Porto"}' },
          { _tag: "ToolCallArgumentsDelta", index: 0, id: "c0", delta: '"Lisbon"}' },
          {
            _tag: "Finished",
            response: {
              text: "Looking it up.",
              toolCalls: [
                { id: "c0", name: "search", arguments: '{"city":"Lisbon"}' },
                { id: "c1", name: "nights", arguments: '{"city":"Porto"}' }
              ],
              usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27 },
              finishReason: "tool_calls",
              model: "m-1"
            }
          }
        ])
        // generate over a provider that only streams is the stream run to its end
        const generated = yield* model.generate(ask)
        const last = parts.at(-1)
        assert.deepStrictEqual(generated, last?._tag === "Finished" ? last.response : undefined)
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
        ["TextDelta", "ToolCallStarted", "ToolCallArgumentsDelta", "ToolCallStarted", "Finished"]
      )
      assert.deepStrictEqual(parts[0], { _tag: "TextDelta", delta: "Booking it." })
      assert.deepStrictEqual(parts[3], { _tag: "ToolCallStarted", index: 1, id: "b", name: "pay" })
    })
  )

  it.effect("a stream that ends before a finish reason is TRANSIENT (retryable)", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Stream.runCollect(streaming([{ text: "Half an ans" }]).stream(ask)))
      const error = failureOf(exit)
      assert.strictEqual(error.category, "TRANSIENT")
      assert.isTrue(error.retryable)
      assert.include(error.message, "ask: the model stream ended before the answer was finished (after 1 chunks)")
    })
  )

  it.effect("a tool call whose name never arrived is EXECUTION and is never returned", () =>
    Effect.gen(function* () {
      const model = streaming([
        { toolCalls: [{ index: 0, id: "c0", name: "search", arguments: "{}" }] },
        { toolCalls: [{ index: 1, id: "c1", arguments: '{"a":1}' }] },
        { finishReason: "tool_calls" }
      ])
      const parts: Array<LanguageModel.StreamPart> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(model.stream(ask), (part) => Effect.sync(() => parts.push(part)))
      )
      const error = failureOf(exit)
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "never completed the tool call at index 1: it has no name")
      assert.isFalse(parts.some((part) => part._tag === "Finished"))
      assert.isFalse(parts.some((part) => part._tag === "ToolCallStarted" && part.index === 1))
    })
  )

  it.effect("a malformed chunk is EXECUTION naming the field", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ toolCalls: [{ index: -1 }] }, "toolCalls[0].index is not an integer >= 0"],
        [{ toolCalls: [{ index: 0, name: 7 }] }, "toolCalls[0].name is not a string"],
        [{ text: { nested: true } }, "text is not a string"],
        [{ toolCalls: "calls" }, "toolCalls is not an array"],
        [null, "the chunk is not an object"]
      ]
      for (const [chunk, field] of cases) {
        const model = streaming([chunk as LanguageModel.ProviderChunk, { finishReason: "stop" }])
        const error = failureOf(yield* Effect.exit(Stream.runCollect(model.stream(ask))))
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, `malformed chunk (chunk 1): ${field}`)
      }
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
