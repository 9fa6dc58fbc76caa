/**
 * llm actions over the real `openai` SDK, offline: the example starts a local
 * OpenAI-compatible endpoint (`ChatCompletionsServer`) with a small script and
 * points `OpenAiLanguageModel` at it. It runs a travel role's `packingTip` (an llm
 * action with temperature 0.3, here retried once after a 429), and the
 * `AssistantRole`'s `summarize` and `translate` from its two capabilities
 * (the ones of `capabilities.ts`).
 *
 * Against a real endpoint, replace the layer with
 * `OpenAiLanguageModel.layerConfig()` (reads OPENAI_API_KEY, OPENAI_BASE_URL
 * and OPENAI_MODEL).
 *
 * Run: node examples/llm-actions.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Console, Effect, Redacted, Schema } from "effect"
import { Summarizer, Translator } from "./capabilities.ts"

export const TravelRole = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    packingTip: Action.llm({
      description: "Write a two-sentence packing tip for the trip",
      parameters: { destination: Schema.String, month: Schema.String },
      temperature: 0.3
    }).pipe(Action.resilience({ retry: { maxAttempts: 2, initialDelay: "200 millis" } }))
  }
})

export const AssistantRole = Role.make({
  identity: { name: "assistant", goal: "Handle ad-hoc requests", domain: "general" },
  spec: { model: { name: "gpt-4.1-mini" } },
  capabilities: [Summarizer, Translator]
})

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion
})

const program = Effect.gen(function* () {
  const server = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.error(429, { message: "Rate limit reached", headers: { "retry-after-ms": "50" } }),
    ChatCompletionsServer.reply("Pack warm wool layers and a waterproof shell. Oslo in November is cold and wet.", {
      usage: usage(38, 17)
    }),
    ChatCompletionsServer.reply("Rolecraft builds AI agents from roles and actions in functional Effect code.", {
      usage: usage(52, 15)
    }),
    ChatCompletionsServer.reply("Bonjour tout le monde", { usage: usage(29, 5) })
  ])
  const ModelLayer = OpenAiLanguageModel.layer({
    model: "gpt-4.1-nano",
    apiKey: Redacted.make("sk-local-example"),
    baseURL: server.baseURL,
    timeout: "30 seconds"
  })

  const agent = yield* Agent.make({ id: "helper", roles: [TravelRole, AssistantRole] })
  const calls = [
    { action: "packingTip", params: { destination: "Oslo", month: "November" } },
    {
      action: "summarize",
      params: {
        text:
          "Rolecraft is a TypeScript library for building AI agents out of roles and actions, in functional code " +
          "on Effect 4, with one fixed pipeline and nine typed errors."
      }
    },
    { action: "translate", params: { text: "Hello world", targetLanguage: "French" } }
  ]
  for (const call of calls) {
    const response = yield* agent.execute(call).pipe(Effect.provide(ModelLayer))
    const tokens = response.usage === undefined ? "" : ` [${response.usage.totalTokens} tokens]`
    yield* Console.log(
      response.success
        ? `${call.action} -> ${JSON.stringify(response.value)}${tokens}`
        : `${call.action} failed: ${response.error.category}: ${response.error.message}`
    )
  }

  const requests = yield* server.requests
  yield* Console.log(`\nThe endpoint saw ${requests.length} requests (the 429 was retried by packingTip's policy).`)
  const last = requests[requests.length - 1]?.body as { model?: string; messages?: unknown } | undefined
  yield* Console.log(`translate was sent to model ${last?.model} with:\n${JSON.stringify(last?.messages, null, 2)}`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
