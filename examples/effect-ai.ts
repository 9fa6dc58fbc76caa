/**
 * Rolecraft and Effect's AI modules in both directions, offline. The model is
 * an effect/ai `LanguageModel` made with effect/ai's own `LanguageModel.make`
 * over a small rule-based function (a provider package's layer would go in
 * its place): it calls `nights` and `book` when asked, and answers from the
 * tool results.
 *
 * 1. effect/ai → Rolecraft: `EffectAiModel.layer()` makes that model
 *    Rolecraft's, and one `agent.chat` turn runs its tool calls through the
 *    agent's pipeline (`book` needs an approval: the turn pauses, a person
 *    approves, `agent.resume` finishes it).
 * 2. Rolecraft → effect/ai: `EffectAiToolkit.make(agent)` gives the same
 *    role's actions to an effect/ai `Chat`; effect/ai resolves the calls,
 *    each through the agent's pipeline, and asks for `book`'s approval with a
 *    `tool-approval-request`.
 *
 * Run: node examples/effect-ai.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Chat as RolecraftChat, Role } from "@rolecraft/core"
import { EffectAiModel, EffectAiToolkit } from "@rolecraft/effect-ai"
import { Console, Effect, Layer, Schema, Stream } from "effect"
import { Chat, LanguageModel, type Prompt, type Response } from "effect/ai"

const booked: Array<string> = []

const travel = Role.make({
  identity: { name: "travel", goal: "Plan and book trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates (YYYY-MM-DD)",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
    }),
    book: Action.local({
      description: "Book a hotel",
      parameters: { hotelId: Schema.String, nights: Schema.Int },
      run: ({ hotelId, nights }) => {
        booked.push(hotelId)
        return `booked ${hotelId} for ${nights} nights`
      }
    }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" }))
  }
})

// -----------------------------------------------------------------------------
// The model: effect/ai's LanguageModel.make over a rule-based function
// -----------------------------------------------------------------------------

const finish = (reason: Response.FinishReason): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: { total: 40 }, outputTokens: { total: 12 } }
})

const resultsOf = (prompt: Prompt.Prompt): ReadonlyArray<unknown> =>
  prompt.content.flatMap((message) =>
    message.role === "tool" ? message.content.flatMap((part) => (part.type === "tool-result" ? [part.result] : [])) : []
  )

/** Calls nights and book for a new request; answers once every call is answered. */
const reply = (prompt: Prompt.Prompt): ReadonlyArray<Response.PartEncoded> => {
  const results = resultsOf(prompt)
  if (results.length === 0) {
    return [
      { type: "tool-call", id: "call_1", name: "nights", params: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
      { type: "tool-call", id: "call_2", name: "book", params: { hotelId: "h-42", nights: 3 } },
      finish("tool-calls")
    ]
  }
  return [
    { type: "text", text: `Done: ${results.map((result) => JSON.stringify(result)).join("; ")}.` },
    finish("stop")
  ]
}

const RuleBasedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) => Effect.succeed([...reply(options.prompt)]),
    streamText: () => Stream.empty
  })
)

// -----------------------------------------------------------------------------
// 1. effect/ai → Rolecraft
// -----------------------------------------------------------------------------

const rolecraftTurn = Effect.gen(function* () {
  yield* Console.log("1. An effect/ai model runs a Rolecraft chat turn")
  const agent = yield* Agent.make({ id: "planner", roles: [travel] })
  const paused = yield* agent.chat("Book h-42 from 2 to 5 November 2026.")
  if (paused._tag !== "AwaitingApproval") return yield* Console.log(`unexpected: ${paused._tag}`)
  for (const call of paused.pending) {
    yield* Console.log(`  ${call.action}(${JSON.stringify(call.arguments)}) waits for approval: ${call.reason}`)
  }
  const decisions = Object.fromEntries(paused.pending.map((call) => [call.toolCallId, RolecraftChat.approve("alice")]))
  const done = yield* agent.resume(paused.state, decisions)
  if (done._tag !== "Completed") return yield* Console.log(`unexpected: ${done._tag}`)
  yield* Console.log(`  answer: ${done.text}`)
  yield* Console.log(
    `  ${done.steps} model call${done.steps === 1 ? "" : "s"}, ${done.usage.totalTokens} tokens; booked: ${booked.join(", ")}`
  )
}).pipe(Effect.scoped, Effect.provide(EffectAiModel.layer({ name: "rule-based" }).pipe(Layer.provide(RuleBasedModel))))

// -----------------------------------------------------------------------------
// 2. Rolecraft → effect/ai
// -----------------------------------------------------------------------------

const effectAiChat = Effect.gen(function* () {
  yield* Console.log("2. An effect/ai Chat drives the role's actions")
  booked.length = 0
  const agent = yield* Agent.make({ id: "planner", roles: [travel] })
  const { toolkit, layer } = EffectAiToolkit.make(agent)
  yield* Console.log(`  toolkit: ${Object.keys(toolkit.tools).join(", ")}`)
  const chat = yield* Chat.empty
  const first = yield* chat
    .generateText({ prompt: "Book h-42 from 2 to 5 November 2026.", toolkit })
    .pipe(Effect.provide(layer))
  for (const result of first.toolResults) {
    yield* Console.log(`  ${result.name} -> ${JSON.stringify(result.result)}`)
  }
  const requests = first.content.filter((part) => part.type === "tool-approval-request")
  yield* Console.log(`  approval requested for ${requests.map((part) => part.toolCallId).join(", ")}; booked: none`)
  const second = yield* chat
    .generateText({
      prompt: [
        {
          role: "tool",
          content: requests.map((part) => ({
            type: "tool-approval-response" as const,
            approvalId: part.approvalId,
            approved: true
          }))
        }
      ],
      toolkit
    })
    .pipe(Effect.provide(layer))
  yield* Console.log(`  approved -> answer: ${second.text}`)
  yield* Console.log(`  booked: ${booked.join(", ")}`)
}).pipe(Effect.scoped, Effect.provide(RuleBasedModel))

const main = Effect.gen(function* () {
  yield* rolecraftTurn
  yield* effectAiChat
})

NodeRuntime.runMain(main)
