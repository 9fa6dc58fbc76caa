/**
 * Agents made of agents, over the real `openai` SDK, offline: a local
 * OpenAI-compatible endpoint (`ChatCompletionsServer`) plays the model.
 *
 * 1. A triage agent hands the conversation off to one of two specialists
 *    (`Compose.handoff`): billing answers, and the result says so.
 * 2. A research agent uses two agents as actions (`Compose.agent`): a scout
 *    that answers with a typed value (structured output), and a booker whose
 *    `book` action needs an approval. The booker's pending call surfaces in
 *    the research turn with the path of agents it came through; approving it
 *    resumes the booker where it paused, and `book` runs once.
 * 3. The research conversation is a thread kept in a SQLite file
 *    (`ThreadStore.layerSqlite`): the first run of the program does 1 and 2;
 *    a later run goes on with the same thread, and the model sees what was
 *    said before (the file is `ROLECRAFT_THREADS_DB`, else
 *    `rolecraft-agents.db` in the system's temporary folder).
 *
 * Against a real model, replace the layer with
 * `OpenAiLanguageModel.layerConfig()` and drop the endpoint.
 *
 * Run: node examples/agents.ts (twice)
 */
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Chat, Compose, Role, ThreadStore } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Console, Effect, Redacted, Schema } from "effect"

const threadFile = process.env.ROLECRAFT_THREADS_DB ?? join(tmpdir(), "rolecraft-agents.db")
const thread = "lisbon-trip"

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion
})

/** What the model says in the first run of the program. */
const firstRun = () => [
  // 1. triage → billing
  ChatCompletionsServer.toolCalls([{ name: "transfer_to_billing", arguments: {} }], { usage: usage(120, 9) }),
  ChatCompletionsServer.reply("The second charge is a hold; it drops within three days.", { usage: usage(90, 14) }),
  // 2. research → scout (a typed answer), then research → booker → book (an approval)
  ChatCompletionsServer.toolCalls([{ name: "scout", arguments: { city: "Lisbon" } }], { usage: usage(150, 12) }),
  ChatCompletionsServer.reply('{"hotel":"Avenida","pricePerNight":140}', { usage: usage(80, 11) }),
  ChatCompletionsServer.toolCalls([{ name: "reserve", arguments: { input: "Avenida, 2 nights from 2 March" } }], {
    usage: usage(200, 15)
  }),
  ChatCompletionsServer.toolCalls([{ name: "book", arguments: { hotel: "Avenida", nights: 2 } }], {
    usage: usage(70, 10)
  }),
  ChatCompletionsServer.reply("Booked: Avenida, 2 nights.", { usage: usage(95, 8) }),
  ChatCompletionsServer.reply("The Avenida at 140 a night; I booked 2 nights from 2 March.", { usage: usage(260, 19) })
]

/** What the model says in a later run: it answers from the thread's history. */
const laterRun = () => [
  ChatCompletionsServer.reply("2 nights at 140 a night: 280 for the stay at the Avenida.", { usage: usage(310, 16) })
]

/** A role with no actions: the agent answers from its own words. */
const desk = (name: string, goal: string) => Role.make({ identity: { name, goal, domain: "support" } })

const Hotel = Schema.Struct({ hotel: Schema.String, pricePerNight: Schema.Number })

/** The triage agent: hands off to two specialists. */
const triageAgent = Effect.gen(function* () {
  const billing = yield* Agent.make({ id: "billing", roles: [desk("billing", "Answer questions about charges")] })
  const technical = yield* Agent.make({ id: "technical", roles: [desk("technical", "Fix connection problems")] })
  return yield* Agent.make({
    id: "triage",
    roles: [
      Role.make({
        identity: { name: "triage", goal: "Send each customer to the right desk", domain: "support" },
        actions: {
          transfer_to_billing: Compose.handoff(billing, { filter: Compose.withoutTools }),
          transfer_to_technical: Compose.handoff(technical)
        }
      })
    ]
  })
})

/** The research agent: two agents as actions, the booker's `book` needing an approval. */
const researchAgent = (counts: { booked: number }) =>
  Effect.gen(function* () {
    const scout = yield* Agent.make({ id: "scout", roles: [desk("scout", "Find the best hotel in a city")] })
    const booker = yield* Agent.make({
      id: "booker",
      roles: [
        Role.make({
          identity: { name: "booker", goal: "Book hotels", domain: "travel" },
          actions: {
            book: Action.local({
              description: "Book a hotel",
              parameters: { hotel: Schema.String, nights: Schema.Int },
              run: ({ hotel, nights }) => {
                counts.booked++
                return `booked ${hotel} for ${nights} nights`
              }
            }).pipe(Action.requireApproval({ reason: "Bookings cost money" }))
          }
        })
      ]
    })
    return yield* Agent.make({
      id: "research",
      roles: [
        Role.make({
          identity: { name: "research", goal: "Find and book hotels", domain: "travel" },
          actions: {
            scout: Compose.agent(scout, {
              description: "Find the best hotel in a city",
              parameters: { city: Schema.String },
              prompt: ({ city }) => `The best hotel in ${city}, with its price per night`,
              output: Hotel
            }),
            reserve: Compose.agent(booker, { description: "Book a hotel" })
          }
        })
      ]
    })
  })

const program = Effect.gen(function* () {
  const store = yield* ThreadStore.ThreadStore
  const before = yield* store.read(thread)
  const first = before.exchanges === 0
  yield* Console.log(
    first ? `thread ${thread}: new` : `thread ${thread}: ${before.exchanges} exchange(s) kept from an earlier run`
  )
  const endpoint = yield* ChatCompletionsServer.make(first ? firstRun() : laterRun())
  const ModelLayer = OpenAiLanguageModel.layer({
    model: "gpt-4.1-mini",
    apiKey: Redacted.make("sk-local-example"),
    baseURL: endpoint.baseURL,
    timeout: "30 seconds"
  })
  const counts = { booked: 0 }
  const research = yield* researchAgent(counts)

  if (!first) {
    // 3. A later run: the thread's history is loaded, the turn appended.
    const next = yield* research.chat("How much will the stay cost?", { thread }).pipe(Effect.provide(ModelLayer))
    if (next._tag !== "Completed") return yield* Effect.die(new Error(`research ended with ${next._tag}`))
    const [request] = yield* endpoint.requests
    const seen = (request?.body as { messages?: ReadonlyArray<unknown> } | undefined)?.messages?.length ?? 0
    yield* Console.log(`research (later run) -> ${next.text}`)
    yield* Console.log(`the model saw ${seen} messages: the system message, the thread's, and the new question`)
    return
  }

  // 1. Triage hands off; the result says who answered.
  const triage = yield* triageAgent
  const routed = yield* triage.chat("I was charged twice for order 42.").pipe(Effect.provide(ModelLayer))
  if (routed._tag !== "Completed") return yield* Effect.die(new Error(`triage ended with ${routed._tag}`))
  yield* Console.log(`triage -> answered by ${routed.agent}: ${routed.text}`)

  // 2. Research on the thread: the booker's approval pauses the turn (the thread keeps the pause).
  const paused = yield* research
    .chat("Find me a hotel in Lisbon and book 2 nights from 2 March.", { thread })
    .pipe(Effect.provide(ModelLayer))
  if (paused._tag !== "AwaitingApproval") return yield* Effect.die(new Error(`research ended with ${paused._tag}`))
  for (const call of paused.pending) {
    yield* Console.log(
      `research paused: ${call.toolCallId} ${call.action}(${JSON.stringify(call.arguments)}) via ${(call.agents ?? []).join(" > ")}: ${call.reason}`
    )
  }
  const decisions = Object.fromEntries(paused.pending.map((call) => [call.toolCallId, Chat.approve("ann")]))
  const done = yield* research.resume(paused.state, decisions, { thread }).pipe(Effect.provide(ModelLayer))
  if (done._tag !== "Completed") return yield* Effect.die(new Error(`research ended with ${done._tag}`))
  yield* Console.log(`research -> ${done.text}`)
  yield* Console.log(`book ran ${counts.booked} time${counts.booked === 1 ? "" : "s"}`)
  const perAgent = Object.entries(done.agents ?? {})
    .map(([id, spent]) => `${id} ${spent.totalTokens}`)
    .join(", ")
  yield* Console.log(`tokens: ${done.usage.totalTokens} in all (${perAgent})`)
  const after = yield* store.read(thread)
  yield* Console.log(`thread ${thread}: ${after.exchanges} exchange(s) kept; run the program again to go on`)
}).pipe(Effect.scoped, Effect.provide([NodeHttpClient.layerUndici, ThreadStore.layerSqlite({ filename: threadFile })]))

NodeRuntime.runMain(program)
