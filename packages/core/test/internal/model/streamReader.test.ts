import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import * as Reader from "../../../src/internal/model/streamReader.ts"

const joining = (chunks: ReadonlyArray<Reader.ProviderChunk>, maxReplyCharacters?: number) =>
  Reader.joined(Reader.reader({ action: "ask", maxReplyCharacters }), "ask", Stream.fromIterable(chunks))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  assert.isDefined(error)
  return (error as { readonly error: E }).error
}

describe("the stream reader", () => {
  it.effect(
    "joins fragments by index, takes ids and names from whichever fragment carries them and usage from the last chunk; calls in the order they began",
    () =>
      Effect.gen(function* () {
        const joined = joining([
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
        const parts = yield* Stream.runCollect(joined)
        assert.deepStrictEqual(parts, [
          { _tag: "TextDelta", delta: "Looking " },
          { _tag: "TextDelta", delta: "it up." },
          // the call at wire index 1 began first: it is the reply's first call
          { _tag: "ToolCallArgumentsStarted", index: 1, id: "c0", name: "search" },
          { _tag: "ToolCallArgumentsDelta", index: 1, id: "c0", delta: '{"city":' },
          { _tag: "ToolCallArgumentsStarted", index: 0, id: "c1", name: "nights" },
          // what arrived before the call's id is given when it starts
          { _tag: "ToolCallArgumentsDelta", index: 0, id: "c1", delta: '{"city":"Porto"}' },
          { _tag: "ToolCallArgumentsDelta", index: 1, id: "c0", delta: '"Lisbon"}' },
          {
            _tag: "Finished",
            response: {
              text: "Looking it up.",
              toolCalls: [
                { id: "c1", name: "nights", arguments: '{"city":"Porto"}' },
                { id: "c0", name: "search", arguments: '{"city":"Lisbon"}' }
              ],
              usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27 },
              finishReason: "tool_calls",
              model: "m-1"
            }
          }
        ])
      })
  )

  it.effect("a stream that ends before a finish reason is TRANSIENT (retryable)", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Stream.runCollect(joining([{ text: "Half an ans" }])))
      const error = failureOf(exit)
      assert.strictEqual(error.category, "TRANSIENT")
      assert.isTrue(error.retryable)
      assert.include(error.message, "ask: the model stream ended before the answer was finished (after 1 chunks)")
    })
  )

  it.effect("a tool call whose name never arrived is EXECUTION and is never returned", () =>
    Effect.gen(function* () {
      const joined = joining([
        { toolCalls: [{ index: 0, id: "c0", name: "search", arguments: "{}" }] },
        { toolCalls: [{ index: 1, id: "c1", arguments: '{"a":1}' }] },
        { finishReason: "tool_calls" }
      ])
      const parts: Array<Reader.StreamPart> = []
      const exit = yield* Effect.exit(Stream.runForEach(joined, (part) => Effect.sync(() => parts.push(part))))
      const error = failureOf(exit)
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "never completed the tool call at index 1: it has no name")
      assert.isFalse(parts.some((part) => part._tag === "Finished"))
      assert.isFalse(parts.some((part) => part._tag === "ToolCallArgumentsStarted" && part.index === 1))
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
        const joined = joining([chunk as Reader.ProviderChunk, { finishReason: "stop" }])
        const error = failureOf(yield* Effect.exit(Stream.runCollect(joined)))
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, `malformed chunk (chunk 1): ${field}`)
      }
    })
  )
})
