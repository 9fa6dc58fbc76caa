/**
 * C04, for its kind: a model reply cut off at its output token limit. A table of every variant — each finish
 * reason a provider sends for "cut" (OpenAI's `length`, Anthropic's and Bedrock's `max_tokens`, Gemini's and
 * Cohere's `MAX_TOKENS`, the Responses API's `max_output_tokens`, Mistral's `model_length`, Anthropic's
 * `model_context_window_exceeded`), and the cap reached while the reason says `tool_calls` (completion tokens
 * equal to the request's `maxTokens`) — crossed with the reply's calls (one cut call, a whole call then a cut
 * one, whole calls only) and with how the turn runs (`chat`, `chatStream`), through the real `openai` SDK
 * against a local endpoint. In every cell no tool runs, the turn fails EXECUTION naming `max_tokens`, and the
 * model is asked once (a retry policy is set, and not used). llm actions get the same table, with and without a
 * `success` schema. A reply whose reason says `tool_calls` but whose arguments do not parse is C02's case: the
 * call is answered VALIDATION, and its arguments never go back to the model.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import type { ActionError, Chat } from "@rolecraft/core"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Effect, Exit, Schema, Stream } from "effect"
import { fixture } from "../../packages/core/test/support/TravelRole.ts"
import { openAiOn } from "../support/openai.ts"

/** Every finish reason that means the reply was cut at its token limit, as providers send it. */
const cutReasons = [
  "length",
  "LENGTH",
  "max_tokens",
  "MAX_TOKENS",
  "max_output_tokens",
  "model_length",
  "model_context_window_exceeded"
] as const

/** The cap reached while the reason says `tool_calls`: completion tokens equal to the request's max tokens. */
const cap = 40

interface Variant {
  readonly name: string
  readonly finishReason: string
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
}

const variants: ReadonlyArray<Variant> = [
  ...cutReasons.map((finishReason) => ({ name: finishReason, finishReason })),
  {
    name: "tool_calls at the cap",
    finishReason: "tool_calls",
    usage: { prompt_tokens: 10, completion_tokens: cap, total_tokens: 10 + cap }
  }
]

const cutCall = { name: "nights", arguments: '{"checkIn":"2026-01-01","checkOut":"2026-0' }
const wholeAdd = { name: "add", arguments: { a: 1, b: 2 } }
const wholePing = { name: "ping", arguments: {} }

const shapes = [
  { name: "one cut call", calls: [cutCall] },
  { name: "a whole call, then a cut one", calls: [wholeAdd, cutCall] },
  { name: "whole calls only", calls: [wholeAdd, wholePing] }
] as const

const failureOf = (exit: Exit.Exit<unknown, unknown>): ActionError.ActionError => {
  assert.isTrue(Exit.isFailure(exit), "the turn should fail")
  const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(error?._tag, "Fail", String(error))
  return (error as { readonly error: ActionError.ActionError }).error
}

const ranNothing = (counts: ReturnType<typeof fixture>["counts"]) =>
  assert.deepStrictEqual([counts.nights, counts.add, counts.ping], [0, 0, 0], "no call of a cut reply runs")

/** A chat turn (or a streamed one) on `script`; what it ended with, the events it streamed, the wire requests. */
const run = (script: ReadonlyArray<Server.Step>, streaming: boolean, options: Chat.ChatOptions = {}) =>
  Effect.gen(function* () {
    const { travel, counts } = fixture()
    const server = yield* Server.make(script)
    const agent = yield* Agent.make({ id: "cut", roles: [travel] })
    const events: Array<Chat.ChatEvent> = []
    const turn = streaming
      ? Effect.asVoid(
          Stream.runForEach(agent.chatStream("Plan my trip", options), (event) => Effect.sync(() => events.push(event)))
        )
      : Effect.asVoid(agent.chat("Plan my trip", options))
    const exit = yield* Effect.exit(Effect.provide(turn, openAiOn(server)))
    return { exit, events, counts, requests: yield* server.requests }
  }).pipe(Effect.scoped)

describe("C04: a reply cut at its token limit runs none of its calls", () => {
  for (const streaming of [false, true]) {
    const how = streaming ? "chatStream" : "chat"
    for (const variant of variants) {
      for (const shape of shapes) {
        it.live(`${how}, ${variant.name}, ${shape.name}: EXECUTION naming max_tokens, nothing runs, asked once`, () =>
          Effect.gen(function* () {
            const { exit, events, counts, requests } = yield* run(
              [
                Server.toolCalls(shape.calls, {
                  finishReason: variant.finishReason,
                  ...(variant.usage === undefined ? {} : { usage: variant.usage })
                }),
                Server.reply("Done.")
              ],
              streaming,
              { maxTokens: cap, retry: { maxAttempts: 2, initialDelay: "1 millis" } }
            )
            const error = failureOf(exit)
            assert.strictEqual(error.category, "EXECUTION", error.message)
            assert.include(error.message, "max_tokens")
            ranNothing(counts)
            assert.strictEqual(requests.length, 1, "not retried, and no second model call")
            assert.deepStrictEqual(
              events.filter((event) => event._tag === "ToolCallReady" || event._tag === "ToolCallAnswered"),
              [],
              "no call is announced as ready or answered"
            )
            const body = requests[0]?.body as { readonly max_completion_tokens?: number }
            assert.strictEqual(body.max_completion_tokens, cap, "the cap is sent")
          })
        )
      }
    }
    it.live(`${how}: a content filter that stops a reply with calls runs none of them`, () =>
      Effect.gen(function* () {
        const { exit, counts, requests } = yield* run(
          [Server.toolCalls([wholeAdd, cutCall], { finishReason: "content_filter" }), Server.reply("Done.")],
          streaming
        )
        const error = failureOf(exit)
        assert.strictEqual(error.category, "EXECUTION", error.message)
        assert.include(error.message, "content filter")
        ranNothing(counts)
        assert.strictEqual(requests.length, 1)
      })
    )
    it.live(`${how}: one token under the cap with reason tool_calls runs the calls`, () =>
      Effect.gen(function* () {
        const { exit, counts } = yield* run(
          [
            Server.toolCalls([wholeAdd], {
              usage: { prompt_tokens: 10, completion_tokens: cap - 1, total_tokens: 10 + cap - 1 }
            }),
            Server.reply("Done.")
          ],
          streaming,
          { maxTokens: cap }
        )
        assert.isTrue(Exit.isSuccess(exit), String(exit))
        assert.strictEqual(counts.add, 1)
      })
    )
    it.live(`${how}: a structured answer cut at its limit is EXECUTION naming max_tokens, not VALIDATION`, () =>
      Effect.gen(function* () {
        const { exit } = yield* run([Server.reply('{"city":"Par', { finishReason: "max_tokens" })], streaming, {
          output: Schema.Struct({ city: Schema.String })
        })
        const error = failureOf(exit)
        assert.strictEqual(error.category, "EXECUTION", error.message)
        assert.include(error.message, "max_tokens")
      })
    )
  }

  for (const streaming of [false, true]) {
    it.live(
      `${streaming ? "chatStream" : "chat"}, C02 path: reason tool_calls, arguments that do not parse — VALIDATION, never sent back as they are`,
      () =>
        Effect.gen(function* () {
          const { exit, counts, requests } = yield* run(
            [Server.toolCalls([wholeAdd, cutCall]), Server.reply("Sorry, trying again later.")],
            streaming
          )
          assert.isTrue(Exit.isSuccess(exit), String(exit))
          assert.strictEqual(counts.add, 1, "the whole call runs")
          assert.strictEqual(counts.nights, 0, "the broken one does not")
          const second = requests[1]?.body as {
            readonly messages: ReadonlyArray<{
              readonly role: string
              readonly content: string | null
              readonly tool_calls?: ReadonlyArray<{
                readonly id: string
                readonly function: { readonly arguments: string }
              }>
            }>
          }
          const assistant = second.messages.find((message) => message.role === "assistant")
          const sent = (assistant?.tool_calls ?? []).map((call) => call.function.arguments)
          for (const args of sent) assert.doesNotThrow(() => JSON.parse(args), `sent back: ${args}`)
          assert.deepStrictEqual(sent, ['{"a":1,"b":2}', "{}"])
          const answer = second.messages.find(
            (message) => message.role === "tool" && message.content?.includes("VALIDATION")
          )
          assert.include(answer?.content ?? "", "not valid JSON", "the broken call is paired with its error")
        })
    )
  }
})

const summaries = Role.make({
  identity: { name: "writer", goal: "Summarise", domain: "text" },
  spec: { model: { maxTokens: cap } },
  actions: {
    summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } }),
    headline: Action.llm({
      description: "A headline for the text",
      parameters: { text: Schema.String },
      success: Schema.Struct({ title: Schema.String })
    }).pipe(Action.resilience({ retry: { maxAttempts: 2, initialDelay: "1 millis" } }))
  }
})

describe("C04: an llm action whose reply was cut fails EXECUTION naming max_tokens", () => {
  const llmVariants: ReadonlyArray<Variant> = [
    ...cutReasons.map((finishReason) => ({ name: finishReason, finishReason })),
    {
      name: "stop at the cap",
      finishReason: "stop",
      usage: { prompt_tokens: 10, completion_tokens: cap, total_tokens: 10 + cap }
    }
  ]
  for (const variant of llmVariants) {
    for (const action of ["summarize", "headline"] as const) {
      it.live(`${action}, ${variant.name}`, () =>
        Effect.gen(function* () {
          const server = yield* Server.make([
            Server.reply(action === "headline" ? '{"title":"Cut sho' : "The text says that", {
              finishReason: variant.finishReason,
              ...(variant.usage === undefined ? {} : { usage: variant.usage })
            })
          ])
          const agent = yield* Agent.make({ id: "writer", roles: [summaries] })
          const exit = yield* Effect.exit(
            Effect.provide(agent.executeAction(action, { text: "A long text." }), openAiOn(server))
          )
          const error = failureOf(exit)
          assert.strictEqual(error.category, "EXECUTION", error.message)
          assert.include(error.message, "max_tokens")
          const requests = yield* server.requests
          assert.strictEqual(requests.length, 1, "not retried")
          assert.strictEqual(
            (requests[0]?.body as { readonly max_completion_tokens?: number } | undefined)?.max_completion_tokens,
            cap
          )
        }).pipe(Effect.scoped)
      )
    }
  }
})
