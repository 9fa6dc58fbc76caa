/**
 * Two agents, two models, one turn: a cheap triage model in front of a strong specialist, each agent given its own
 * model (`Agent.make({ model })`). Offline: two local OpenAI-compatible endpoints (`ChatCompletionsServer`) play
 * the two models, over the real `openai` SDK.
 *
 * 1. A customer asks triage; triage (on `triage-mini`, endpoint A) asks the specialist, an agent used as an action
 *    (`Compose.agent`); the specialist answers on its own model (`specialist-large`, endpoint B); triage answers.
 * 2. A second question is handed off (`Compose.handoff`): the specialist answers the customer, on endpoint B.
 *
 * Neither agent needs a `LanguageModel` from its caller — the program's type says so: it needs nothing at all,
 * which is what `NodeRuntime.runMain` takes. Each endpoint's requests are printed with the model they named.
 *
 * Against real providers, give each agent `OpenAiLanguageModel.layer({ model, apiKey, baseURL })` of its own.
 *
 * Run: node examples/two-models.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Agent, type Chat, Compose, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Console, Effect, Redacted, Schema } from "effect"

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion
})

/** An OpenAI-compatible model at `baseURL`, named `model`. */
const modelAt = (model: string, baseURL: string) =>
  OpenAiLanguageModel.layer({ model, apiKey: Redacted.make("sk-local-example"), baseURL, timeout: "30 seconds" })

const program = Effect.gen(function* () {
  // Endpoint A plays the triage model: it asks the specialist, answers; then hands the second question over.
  const triageEndpoint = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.toolCalls(
      [{ name: "ask_specialist", arguments: { question: "Why was I charged twice for one booking?" } }],
      { usage: usage(60, 9) }
    ),
    ChatCompletionsServer.reply("The second charge is a card hold; it drops within three days.", {
      usage: usage(90, 14)
    }),
    ChatCompletionsServer.toolCalls([{ name: "transfer_to_specialist", arguments: {} }], { usage: usage(70, 6) })
  ])
  // Endpoint B plays the specialist's model: one answer to triage's question, one to the customer.
  const specialistEndpoint = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.reply("A pre-authorisation hold, released by the bank within 72 hours.", {
      usage: usage(140, 16)
    }),
    ChatCompletionsServer.reply("Your refund of 80 EUR was sent on Monday; banks take up to five days.", {
      usage: usage(160, 18)
    })
  ])

  const specialist = yield* Agent.make({
    id: "specialist",
    roles: [Role.make({ identity: { name: "billing", goal: "Explain charges and refunds", domain: "billing" } })],
    model: modelAt("specialist-large", specialistEndpoint.baseURL)
  })
  const triage = yield* Agent.make({
    id: "triage",
    roles: [
      Role.make({
        identity: { name: "triage", goal: "Answer customers, asking the billing specialist", domain: "support" },
        actions: {
          ask_specialist: Compose.agent(specialist, {
            description: "Ask the billing specialist a question",
            parameters: { question: Schema.String },
            prompt: ({ question }) => question
          }),
          transfer_to_specialist: Compose.handoff(specialist, { description: "Hand the customer to billing" })
        }
      })
    ],
    model: modelAt("triage-mini", triageEndpoint.baseURL)
  })

  const answered = (result: Chat.ChatResult) =>
    result._tag === "Completed" ? `${result.agent ?? triage.id} answered: ${result.text}` : result._tag
  yield* Console.log(`1. ${answered(yield* triage.chat("Why was I charged twice for one booking?"))}`)
  yield* Console.log(`2. ${answered(yield* triage.chat("Where is my refund?"))}`)

  for (const [name, endpoint] of [
    ["A (triage)", triageEndpoint],
    ["B (specialist)", specialistEndpoint]
  ] as const) {
    const models = (yield* endpoint.requests).map((request) => (request.body as { readonly model?: string }).model)
    yield* Console.log(`endpoint ${name}: ${models.length} requests, models ${[...new Set(models)].join(", ")}`)
  }
}).pipe(Effect.scoped)

// The program needs nothing: each agent brings its own model.
const needsNothing: Effect.Effect<void, unknown, never> = program

NodeRuntime.runMain(needsNothing)
