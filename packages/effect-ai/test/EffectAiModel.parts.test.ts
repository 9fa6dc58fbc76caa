/**
 * effect/ai → Rolecraft, part by part: every part effect/ai's own providers emit (the shapes
 * @effect/ai-openai and @effect/ai-anthropic build: reasoning, with a redacted block's empty text; sources of
 * URLs and of documents; files; the model id; the finish; error
 * events) reaches Rolecraft's answer, generated or streamed, or is left out on purpose; reasoning goes back as
 * a reasoning part; and the bridge's stream ends when its call's limits pass, like any provider's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Agent, type LanguageModel, Role } from "@rolecraft/core"
import { EffectAiModel } from "@rolecraft/effect-ai"
import { Effect, Exit, Layer, Stream } from "effect"
import { LanguageModel as AiLanguageModel, type Response } from "effect/ai"
import { finish, scripted, text } from "./support/ScriptedAiModel.ts"

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "hi" }], action: "ask" }

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", String(exit))
  return (reason as { readonly error: { readonly category: string; readonly message: string } }).error
}

const everyPart: ReadonlyArray<Response.PartEncoded> = [
  { type: "response-metadata", modelId: "claude-x" },
  { type: "reasoning", text: "The user wants the weather. " },
  // Anthropic's redacted thinking: no text, its data in the part's metadata.
  { type: "reasoning", text: "" },
  { type: "reasoning", text: "Search first." },
  { type: "source", sourceType: "url", id: "s1", url: "https://example.com/weather", title: "Weather today" },
  { type: "source", sourceType: "document", id: "s2", mediaType: "text/plain", title: "notes.txt" },
  { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=" },
  text("Sunny, "),
  text("22 degrees."),
  finish("stop", 12, 30)
]

describe("EffectAiModel reads every part effect/ai's providers emit", () => {
  it.effect("a generated answer: text, reasoning, citations, the model; a redacted block and files carry nothing", () =>
    Effect.gen(function* () {
      const model = scripted([everyPart])
      const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
      const response = yield* rolecraft.generate(ask)
      assert.deepStrictEqual(response, {
        text: "Sunny, 22 degrees.",
        toolCalls: [],
        usage: { inputTokens: 12, outputTokens: 30, totalTokens: 42 },
        finishReason: "stop",
        model: "claude-x",
        reasoning: "The user wants the weather. Search first.",
        reasoningField: "reasoning",
        citations: [{ url: "https://example.com/weather", title: "Weather today" }, { title: "notes.txt" }]
      })
    })
  )

  it.effect("a streamed answer: reasoning and text deltas apart, citations, and the same response", () =>
    Effect.gen(function* () {
      const model = scripted(
        [],
        [
          [
            { type: "response-metadata", modelId: "claude-x" },
            { type: "reasoning-start", id: "0" },
            { type: "reasoning-delta", id: "0", delta: "The user wants " },
            { type: "reasoning-delta", id: "0", delta: "the weather." },
            // Anthropic's signature arrives as an empty delta.
            { type: "reasoning-delta", id: "0", delta: "" },
            { type: "reasoning-end", id: "0" },
            { type: "source", sourceType: "url", id: "s1", url: "https://example.com/weather", title: "Weather today" },
            { type: "text-start", id: "1" },
            { type: "text-delta", id: "1", delta: "Sunny." },
            { type: "text-end", id: "1" },
            finish("stop", 5, 9) as Response.StreamPartEncoded
          ]
        ]
      )
      const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
      const parts = yield* Stream.runCollect(rolecraft.stream(ask))
      assert.deepStrictEqual(
        parts.filter((part) => part._tag === "ReasoningDelta" || part._tag === "TextDelta"),
        [
          { _tag: "ReasoningDelta", delta: "The user wants " },
          { _tag: "ReasoningDelta", delta: "the weather." },
          { _tag: "TextDelta", delta: "Sunny." }
        ]
      )
      const last = parts.at(-1)
      assert.deepStrictEqual(last?._tag === "Finished" ? last.response : undefined, {
        text: "Sunny.",
        toolCalls: [],
        usage: { inputTokens: 5, outputTokens: 9, totalTokens: 14 },
        finishReason: "stop",
        model: "claude-x",
        reasoning: "The user wants the weather.",
        reasoningField: "reasoning",
        citations: [{ url: "https://example.com/weather", title: "Weather today" }]
      })
    })
  )

  it.effect("an error part in a stream ends it: overloaded and server errors TRANSIENT, others EXECUTION", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        // Anthropic's error event
        [{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "TRANSIENT"],
        // OpenAI Responses' error event
        [{ type: "error", code: "server_error", message: "The server had an error" }, "TRANSIENT"],
        [{ type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } }, "EXECUTION"]
      ]
      const model = scripted(
        [],
        cases.map(([error]) => [
          { type: "text-delta", id: "t", delta: "Half" },
          { type: "error", error }
        ])
      )
      const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
      for (const [error, category] of cases) {
        const failure = failureOf(yield* Effect.exit(Stream.runCollect(rolecraft.stream(ask))))
        assert.strictEqual(failure.category, category, failure.message)
        const inner = error as { readonly error?: { readonly message: string }; readonly message?: string }
        assert.include(failure.message, inner.error?.message ?? inner.message ?? "")
      }
    })
  )

  it.effect("reasoning kept on the assistant message goes back to effect/ai as a reasoning part, before its text", () =>
    Effect.gen(function* () {
      const model = scripted([[text("ok"), finish("stop", 1, 1)]])
      const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
      yield* rolecraft.generate({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "Hello.", reasoning: "Greet back.", reasoningField: "reasoning" },
          { role: "user", content: "again" }
        ]
      })
      const assistant = model.requests[0]?.prompt.content.find((message) => message.role === "assistant")
      assert.deepStrictEqual(
        assistant?.content.map((part) => [part.type, "text" in part ? part.text : undefined]),
        [
          ["reasoning", "Greet back."],
          ["text", "Hello."]
        ]
      )
    })
  )
})

describe("EffectAiModel's stream is bounded like any provider's", () => {
  it.live("an effect/ai stream that goes silent ends at the idle limit as TIMEOUT, in a chat turn", () =>
    Effect.gen(function* () {
      const silent = Layer.effect(
        AiLanguageModel.LanguageModel,
        AiLanguageModel.make({
          generateText: () => Effect.never,
          streamText: () =>
            Stream.concat(Stream.make({ type: "text-delta", id: "t", delta: "Hel" } as const), Stream.never)
        })
      )
      const role = Role.make({ identity: { name: "desk", goal: "Answer", domain: "desk" } })
      const agent = yield* Agent.make({ id: "bounded", roles: [role] })
      const exit = yield* Effect.exit(
        Stream.runDrain(agent.chatStream("Hi")).pipe(
          Effect.provide(EffectAiModel.layer({ idleTimeout: "300 millis" }).pipe(Layer.provide(silent))),
          Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.die(new Error("still running")) })
        )
      )
      const failure = failureOf(exit)
      assert.strictEqual(failure.category, "TIMEOUT")
      assert.include(failure.message, "(idleTimeout)")
    })
  )
})
