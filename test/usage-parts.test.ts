/**
 * Every token counted (C72): a chat turn of two model calls through the real `openai` SDK against a local
 * endpoint, plain and streamed, whose usage carries `prompt_tokens_details.cached_tokens` and
 * `completion_tokens_details.reasoning_tokens`. Input, output and total stay the wire totals; cached input and
 * reasoning are parts of them, on `Completed.usage`, on the streamed `TurnFinished`, on each call's `chat` span
 * and the turn's `invoke_agent` span, and in the `rolecraft.client.token.usage.parts` metric — never added on top.
 */
import { assert, describe, it } from "@effect/vitest"
import { Agent, type Chat, Compose, Metrics, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server, Telemetry } from "@rolecraft/testing"
import { Effect, Metric, Redacted, Stream } from "effect"
import { fixture } from "../packages/core/test/support/TravelRole.ts"

const first = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920 },
  completion_tokens_details: { reasoning_tokens: 256 }
}
const second = {
  prompt_tokens: 2100,
  completion_tokens: 20,
  total_tokens: 2120,
  prompt_tokens_details: { cached_tokens: 2048 },
  completion_tokens_details: { reasoning_tokens: 0 }
}

const expected = {
  inputTokens: 4106,
  outputTokens: 320,
  totalTokens: 4426,
  cachedInputTokens: 3968,
  reasoningTokens: 256
}

const histogram = (attributes: Record<string, string>) =>
  Metric.value(Metric.withAttributes(Metrics.tokenUsageParts, attributes))

describe("C72: cached and reasoning tokens are reported as parts of the totals", () => {
  for (const streamed of [false, true]) {
    it.live(`${streamed ? "chatStream" : "chat"}: results, spans and metrics carry them`, () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const server = yield* Server.make([
          Server.toolCalls([{ name: "nights", arguments: { checkIn: "2026-05-12", checkOut: "2026-05-15" } }], {
            usage: first
          }),
          Server.reply("Three nights.", { usage: second })
        ])
        const agent = yield* Agent.make({ id: "counted", roles: [travel] })
        const { spans, tracer } = Telemetry.make()
        const events: Array<Chat.ChatEvent> = []
        const turn = streamed
          ? Effect.map(
              Stream.runForEach(agent.chatStream("Nights?"), (event) => Effect.sync(() => events.push(event))),
              () => (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result
            )
          : agent.chat("Nights?")
        const result = yield* Effect.withTracer(turn, tracer).pipe(
          Effect.provide(
            OpenAiLanguageModel.layer({
              model: "gpt-counted",
              apiKey: Redacted.make("sk-counted"),
              baseURL: server.baseURL
            })
          )
        )
        assert.strictEqual(result._tag, "Completed")
        assert.deepStrictEqual((result as Chat.Completed).usage, expected)
        const calls = spans.filter((span) => span.name === "chat gpt-counted")
        assert.strictEqual(calls.length, 2)
        assert.deepStrictEqual(
          calls.map((span) => [
            span.attributes.get("gen_ai.usage.input_tokens"),
            span.attributes.get("gen_ai.usage.output_tokens"),
            span.attributes.get("gen_ai.usage.cache_read.input_tokens"),
            span.attributes.get("gen_ai.usage.reasoning.output_tokens"),
            span.attributes.get("gen_ai.usage.cache_creation.input_tokens")
          ]),
          [
            [2006, 300, 1920, 256, undefined],
            [2100, 20, 2048, 0, undefined]
          ]
        )
        const invoke = spans.find((span) => span.name === "invoke_agent counted")
        assert.strictEqual(invoke?.attributes.get("gen_ai.usage.cache_read.input_tokens"), 3968)
        assert.strictEqual(invoke?.attributes.get("gen_ai.usage.reasoning.output_tokens"), 256)
        assert.strictEqual(invoke?.attributes.get("gen_ai.usage.input_tokens"), 4106)
        if (!streamed) {
          // The metric records generated calls (a streamed call's metrics are the span's).
          const model = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-counted"
          }
          const cached = yield* histogram({ ...model, "rolecraft.token.part": "cache_read" })
          const reasoning = yield* histogram({ ...model, "rolecraft.token.part": "reasoning" })
          const writes = yield* histogram({ ...model, "rolecraft.token.part": "cache_write" })
          assert.deepStrictEqual([cached.count, cached.sum], [2, 3968])
          assert.deepStrictEqual([reasoning.count, reasoning.sum], [2, 256])
          assert.strictEqual(writes.count, 0)
        }
      }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map()))
    )
  }
})

describe("C72 across agents: each agent's parts in Completed.agents, none counted twice", () => {
  it.live("an agent used as an action: its cached and reasoning tokens are its own, the turn's the sum", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const server = yield* Server.make([
        Server.toolCalls([{ name: "ask_planner", arguments: { input: "Nights from 12 to 15 May?" } }], {
          usage: first
        }),
        Server.toolCalls([{ name: "nights", arguments: { checkIn: "2026-05-12", checkOut: "2026-05-15" } }], {
          usage: second
        }),
        Server.reply("3", {
          usage: {
            prompt_tokens: 100,
            completion_tokens: 10,
            total_tokens: 110,
            prompt_tokens_details: { cached_tokens: 64 },
            completion_tokens_details: { reasoning_tokens: 4 }
          }
        }),
        Server.reply("Three nights.", { usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } })
      ])
      const planner = yield* Agent.make({ id: "planner", roles: [travel] })
      const host = yield* Agent.make({
        id: "host",
        roles: [
          Role.make({
            identity: { name: "host", goal: "Answer", domain: "travel" },
            actions: { ask_planner: Compose.agent(planner, { description: "Ask the planner" }) }
          })
        ]
      })
      const result = yield* host.chat("Nights?").pipe(
        Effect.provide(
          OpenAiLanguageModel.layer({
            model: "gpt-counted",
            apiKey: Redacted.make("sk-counted"),
            baseURL: server.baseURL
          })
        )
      )
      assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
      const completed = result as Chat.Completed
      assert.deepStrictEqual(completed.agents, {
        planner: {
          inputTokens: 2200,
          outputTokens: 30,
          totalTokens: 2230,
          cachedInputTokens: 2112,
          reasoningTokens: 4
        },
        host: { inputTokens: 2056, outputTokens: 305, totalTokens: 2361, cachedInputTokens: 1920, reasoningTokens: 256 }
      })
      assert.deepStrictEqual(completed.usage, {
        inputTokens: 4256,
        outputTokens: 335,
        totalTokens: 4591,
        cachedInputTokens: 4032,
        reasoningTokens: 260
      })
    }).pipe(Effect.scoped)
  )
})
