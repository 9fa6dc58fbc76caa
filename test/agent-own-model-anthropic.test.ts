/**
 * An agent on a model of its own beside one on the model in context: a host agent on chat completions (the
 * `openai` SDK against `ChatCompletionsServer`) uses, as an action and by a handoff, a planner agent made with
 * `model: AnthropicLanguageModel.layer(…)` (the `@anthropic-ai/sdk` against `MessagesServer`). Each agent's
 * requests go to its own endpoint, each in its own wire format; the planner's signed thinking goes back to Claude
 * only, and each agent's usage (cache reads and writes included) is its own in `Completed.agents`.
 */
import { assert, describe, it } from "@effect/vitest"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { Agent, type Chat, Compose, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer, MessagesServer } from "@rolecraft/testing"
import { Effect, Redacted } from "effect"
import { fixture } from "../packages/core/test/support/TravelRole.ts"

const signed = { thinking: "Count the nights first.", signature: "sig-own-model" }

const setup = Effect.gen(function* () {
  const { travel, counts } = fixture()
  const claude = yield* MessagesServer.make([
    MessagesServer.toolUse(
      [{ id: "toolu_n", name: "nights", input: { checkIn: "2026-05-12", checkOut: "2026-05-15" } }],
      {
        thinking: [signed],
        usage: { input_tokens: 30, cache_creation_input_tokens: 1200, output_tokens: 40 }
      }
    ),
    MessagesServer.reply("Three nights.", {
      usage: { input_tokens: 50, cache_read_input_tokens: 1200, output_tokens: 6 }
    })
  ])
  const planner = yield* Agent.make({
    id: "planner",
    roles: [travel],
    model: AnthropicLanguageModel.layer({
      model: "claude-planner",
      apiKey: Redacted.make("sk-ant-planner-key"),
      baseURL: claude.baseURL,
      thinking: { type: "enabled", budgetTokens: 1024 }
    })
  })
  return { claude, planner, counts }
})

const hostModel = (baseURL: string) =>
  OpenAiLanguageModel.layer({ model: "gpt-host", apiKey: Redacted.make("sk-host-key"), baseURL })

interface AnthropicBody {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }>
}

describe("an agent on Claude (its own model) beside an agent on chat completions", () => {
  it.live("used as an action: each agent's requests go to its own endpoint; usage is each agent's", () =>
    Effect.gen(function* () {
      const { claude, planner, counts } = yield* setup
      const completions = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.toolCalls([{ name: "ask_planner", arguments: { input: "Nights from 12 to 15 May?" } }], {
          usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 }
        }),
        ChatCompletionsServer.reply("The planner says three nights.", {
          usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 }
        })
      ])
      const host = yield* Agent.make({
        id: "host",
        roles: [
          Role.make({
            identity: { name: "host", goal: "Answer", domain: "travel" },
            actions: { ask_planner: Compose.agent(planner, { description: "Ask the planner" }) }
          })
        ]
      })
      const result = yield* host.chat("Nights?").pipe(Effect.provide(hostModel(completions.baseURL)))
      assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
      const completed = result as Chat.Completed
      assert.strictEqual(completed.text, "The planner says three nights.")
      assert.strictEqual(counts.nights, 1)
      const hostRequests = yield* completions.requests
      const claudeRequests = yield* claude.requests
      assert.deepStrictEqual(
        hostRequests.map((request) => request.path),
        ["/v1/chat/completions", "/v1/chat/completions"]
      )
      assert.deepStrictEqual(
        claudeRequests.map((request) => [request.path, (request.body as AnthropicBody).model]),
        [
          ["/v1/messages", "claude-planner"],
          ["/v1/messages", "claude-planner"]
        ]
      )
      assert.strictEqual(hostRequests[0]?.headers.authorization, "Bearer sk-host-key")
      assert.strictEqual(claudeRequests[0]?.headers.authorization, "Bearer sk-ant-planner-key")
      // The signed thinking went back to Claude, unchanged; the host's requests never carry it.
      const back = (claudeRequests[1]?.body as AnthropicBody | undefined)?.messages[1]
      assert.deepStrictEqual(back?.content[0], { type: "thinking", ...signed })
      assert.notInclude(JSON.stringify(hostRequests.map((request) => request.body)), "sig-own-model")
      assert.deepStrictEqual(completed.agents, {
        planner: {
          inputTokens: 30 + 1200 + 50 + 1200,
          outputTokens: 46,
          totalTokens: 2480 + 46,
          cachedInputTokens: 1200,
          cacheWriteInputTokens: 1200
        },
        host: { inputTokens: 60, outputTokens: 15, totalTokens: 75 }
      })
    }).pipe(Effect.scoped)
  )

  it.live("by a handoff: the conversation moves to the agent on Claude, which answers from its own endpoint", () =>
    Effect.gen(function* () {
      const { claude, planner } = yield* setup
      const completions = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.toolCalls([{ name: "transfer_to_planner", arguments: {} }])
      ])
      const host = yield* Agent.make({
        id: "host",
        roles: [
          Role.make({
            identity: { name: "host", goal: "Route", domain: "travel" },
            actions: { transfer_to_planner: Compose.handoff(planner) }
          })
        ]
      })
      const result = yield* host.chat("Nights from 12 to 15 May?").pipe(Effect.provide(hostModel(completions.baseURL)))
      assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
      assert.strictEqual((result as Chat.Completed).text, "Three nights.")
      assert.strictEqual((yield* completions.requests).length, 1)
      const claudeRequests = yield* claude.requests
      assert.strictEqual(claudeRequests.length, 2)
      const first = claudeRequests[0]?.body as AnthropicBody
      // The handed-off conversation reaches Claude in its own format: the user's words as a text block.
      assert.isTrue(
        first.messages.some(
          (message) =>
            message.role === "user" &&
            message.content.some((block) => block.type === "text" && block.text === "Nights from 12 to 15 May?")
        )
      )
    }).pipe(Effect.scoped)
  )
})
