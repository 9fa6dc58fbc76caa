import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { ExecutionFailure } from "../../../src/ActionError.ts"
import * as Reader from "../../../src/internal/model/streamReader.ts"
import type * as ModelResponse from "../../../src/ModelResponse.ts"

const joining = (chunks: ReadonlyArray<ModelResponse.ProviderChunk>, maxReplyCharacters?: number) =>
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
      const parts: Array<ModelResponse.StreamPart> = []
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
        const joined = joining([chunk as ModelResponse.ProviderChunk, { finishReason: "stop" }])
        const error = failureOf(yield* Effect.exit(Stream.runCollect(joined)))
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, `malformed chunk (chunk 1): ${field}`)
      }
    })
  )
})

describe("the stream reader, dialect by dialect", () => {
  const finished = (parts: ReadonlyArray<ModelResponse.StreamPart>) => {
    const last = parts.at(-1)
    assert.strictEqual(last?._tag, "Finished")
    return (last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>).response
  }

  it.effect("fragments without an index are matched by id; a new id starts a new call (Mistral)", () =>
    Effect.gen(function* () {
      const parts = yield* Stream.runCollect(
        joining([
          { toolCalls: [{ id: "a", name: "search", arguments: '{"q":' }] },
          { toolCalls: [{ id: "b", name: "nights", arguments: "{}" }] },
          { toolCalls: [{ id: "a", arguments: '"x"}' }] },
          { finishReason: "tool_calls" }
        ])
      )
      assert.deepStrictEqual(finished(parts).toolCalls, [
        { id: "a", name: "search", arguments: '{"q":"x"}' },
        { id: "b", name: "nights", arguments: "{}" }
      ])
    })
  )

  it.effect(
    "one index for calls with distinct ids is several calls; a later fragment with neither is the last call's",
    () =>
      Effect.gen(function* () {
        const parts = yield* Stream.runCollect(
          joining([
            { toolCalls: [{ index: 0, id: "a", name: "search", arguments: "{" }] },
            { toolCalls: [{ index: 0, arguments: "}" }] },
            { toolCalls: [{ index: 0, id: "b", name: "nights", arguments: "[" }] },
            { toolCalls: [{ arguments: "]" }] },
            { finishReason: "tool_calls" }
          ])
        )
        assert.deepStrictEqual(finished(parts).toolCalls, [
          { id: "a", name: "search", arguments: "{}" },
          { id: "b", name: "nights", arguments: "[]" }
        ])
      })
  )

  it.effect("an empty id or name on a later fragment never replaces the known one (Alibaba, vLLM)", () =>
    Effect.gen(function* () {
      const parts = yield* Stream.runCollect(
        joining([
          { toolCalls: [{ index: 0, id: "a", name: "search", arguments: "" }] },
          { toolCalls: [{ index: 0, id: "", name: "", arguments: '{"q":1}' }] },
          { finishReason: "tool_calls" }
        ])
      )
      assert.deepStrictEqual(finished(parts).toolCalls, [{ id: "a", name: "search", arguments: '{"q":1}' }])
    })
  )

  it.effect("reasoning is its own part, never text; the field it came in is kept; citations once each", () =>
    Effect.gen(function* () {
      const parts = yield* Stream.runCollect(
        joining([
          { reasoning: "Think", reasoningField: "reasoning_content" },
          { reasoning: "ing.", reasoningField: "reasoning_content", citations: ["https://a.example"] },
          { text: "Done", citations: ["https://a.example", "https://b.example"] },
          { finishReason: "stop", citations: [{ url: "https://a.example", title: "A", startIndex: 0, endIndex: 4 }] }
        ])
      )
      assert.deepStrictEqual(
        parts.filter((part) => part._tag !== "Finished"),
        [
          { _tag: "ReasoningDelta", delta: "Think" },
          { _tag: "ReasoningDelta", delta: "ing." },
          { _tag: "TextDelta", delta: "Done" }
        ]
      )
      const response = finished(parts)
      assert.strictEqual(response.text, "Done")
      assert.strictEqual(response.reasoning, "Thinking.")
      assert.strictEqual(response.reasoningField, "reasoning_content")
      assert.deepStrictEqual(response.citations, [
        { url: "https://a.example" },
        { url: "https://b.example" },
        { url: "https://a.example", title: "A", startIndex: 0, endIndex: 4 }
      ])
    })
  )

  it.effect("a reply past maxReplyCharacters fails EXECUTION naming the cap, in text, reasoning or arguments", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<ReadonlyArray<ModelResponse.ProviderChunk>> = [
        [{ text: "12345" }, { text: "678901" }],
        [{ reasoning: "1234567" }, { text: "8901" }],
        [{ toolCalls: [{ index: 0, id: "a", name: "n", arguments: "1234567890" }] }, { text: "1" }]
      ]
      for (const chunks of cases) {
        const parts: Array<ModelResponse.StreamPart> = []
        const exit = yield* Effect.exit(
          Stream.runForEach(joining([...chunks, { finishReason: "stop" }], 10), (part) =>
            Effect.sync(() => parts.push(part))
          )
        )
        const error = failureOf(exit)
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "larger than maxReplyCharacters (10 characters")
        assert.isFalse(parts.some((part) => part._tag === "Finished"))
      }
      // at the cap exactly, the reply is whole
      const whole = yield* Stream.runCollect(
        joining([{ text: "12345" }, { text: "67890" }, { finishReason: "stop" }], 10)
      )
      assert.strictEqual(finished(whole).text, "1234567890")
    })
  )

  it.effect("once expired, the reader fails with why at the next batch and at the end", () =>
    Effect.gen(function* () {
      const read = Reader.reader({ action: "ask" })
      read.expire(new ExecutionFailure({ action: "ask", message: "ask: cut off" }))
      const exit = yield* Effect.exit(Stream.runCollect(Reader.joined(read, "ask", Stream.make({ text: "late" }))))
      assert.strictEqual(failureOf(exit).message, "ask: cut off")
    })
  )
})
