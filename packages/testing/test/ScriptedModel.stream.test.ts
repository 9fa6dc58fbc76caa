import { assert, describe, it } from "@effect/vitest"
import type { LanguageModel, ModelResponse } from "@rolecraft/core"
import { Effect, Exit, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as ScriptedModel from "../src/ScriptedModel.ts"

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "q" }], action: "ask" }

describe("ScriptedModel streaming", () => {
  it.effect("a reply streams one word per delta; tool calls stream started with their arguments", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.reply("Three small words", { usage: { inputTokens: 2, outputTokens: 3 } }),
        ScriptedModel.toolCalls([{ name: "search", arguments: { city: "Oslo" } }])
      ])
      const first = yield* Stream.runCollect(scripted.model.stream(ask))
      assert.deepStrictEqual(
        first.flatMap((part) => (part._tag === "TextDelta" ? [part.delta] : [])),
        ["Three ", "small ", "words"]
      )
      const last = first.at(-1)
      assert.deepStrictEqual(last?._tag === "Finished" ? last.response.usage : undefined, {
        inputTokens: 2,
        outputTokens: 3,
        totalTokens: 5
      })
      const second = yield* Stream.runCollect(scripted.model.stream(ask))
      assert.deepStrictEqual(second.slice(0, 2), [
        { _tag: "ToolCallArgumentsStarted", index: 0, id: "call_1", name: "search" },
        { _tag: "ToolCallArgumentsDelta", index: 0, id: "call_1", delta: '{"city":"Oslo"}' }
      ])
      yield* scripted.assertDone
    })
  )

  it.effect("scripted chunks stream as given and are joined when asked to generate", () =>
    Effect.gen(function* () {
      const chunks: ReadonlyArray<ModelResponse.ProviderChunk> = [
        { text: "Ok" },
        { toolCalls: [{ index: 0, name: "book" }] },
        { toolCalls: [{ index: 0, id: "b1", arguments: "{}" }], finishReason: "tool_calls" }
      ]
      const scripted = yield* ScriptedModel.make([ScriptedModel.chunks(chunks), ScriptedModel.chunks(chunks)])
      const parts = yield* Stream.runCollect(scripted.model.stream(ask))
      assert.deepStrictEqual(
        parts.map((part) => part._tag),
        ["TextDelta", "ToolCallArgumentsStarted", "ToolCallArgumentsDelta", "Finished"]
      )
      const response = yield* scripted.model.generate(ask)
      assert.deepStrictEqual(response.toolCalls, [{ id: "b1", name: "book", arguments: "{}" }])
      assert.strictEqual(response.text, "Ok")
    })
  )

  it.effect("a stalled stream waits until interrupted; a delayed step waits on the clock", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.chunks([{ text: "Hal" }], { stall: true }),
        ScriptedModel.delayed("1 second", ScriptedModel.reply("late"))
      ])
      const seen: Array<string> = []
      const collect = (part: ModelResponse.StreamPart) =>
        Effect.sync(() => {
          if (part._tag === "TextDelta") seen.push(part.delta)
        })
      const stalled = yield* Effect.forkChild(Stream.runForEach(scripted.model.stream(ask), collect))
      yield* Effect.yieldNow
      assert.deepStrictEqual(seen, ["Hal"])
      yield* Fiber.interrupt(stalled)
      const delayed = yield* Effect.forkChild(Stream.runForEach(scripted.model.stream(ask), collect))
      yield* Effect.yieldNow
      assert.deepStrictEqual(seen, ["Hal"])
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.await(delayed)
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(seen, ["Hal", "late"])
    })
  )
})
