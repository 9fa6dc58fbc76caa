/**
 * History budgets: the token estimate pinned, and the kind of failure peers report — a history trimmed by count
 * that leaves a tool answer without its call (openai-agents-python #4322, agno #9372, nanobot, openclaw) — made a
 * property over random conversations, twice: `History.trim` on random histories (system messages, exchanges with
 * tool calls answered in any order, a last exchange paused with calls unanswered), and random chat turns on a
 * thread with a random budget, checking every request the model gets. After trimming: every tool message still
 * follows its assistant call, no call lacks its answer, the budget holds (or only what is never dropped remains),
 * the system message stays first, and no more was dropped than needed.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import * as History from "../src/History.ts"
import { checkHistory } from "../src/internal/chat/messages.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as ThreadStore from "../src/ThreadStore.ts"
import { fixture } from "./support/TravelRole.ts"

describe("History: the token estimate", () => {
  const table: ReadonlyArray<readonly [string, Prompt.Message, number]> = [
    ["an empty user message: the framing only", { role: "user", content: "" }, 4],
    ["four characters: one token", { role: "user", content: "abcd" }, 5],
    ["five characters: two", { role: "system", content: "abcde" }, 6],
    [
      "an assistant's calls count their id, name and arguments",
      { role: "assistant", content: "ok", toolCalls: [{ id: "c1", name: "ping", arguments: "{}" }] },
      7
    ],
    ["a tool message counts the id it answers", { role: "tool", toolCallId: "c1", content: "pong" }, 6],
    ["an emoji is two UTF-16 characters", { role: "user", content: "😀😀" }, 5]
  ]
  for (const [what, message, tokens] of table) {
    it(what, () => assert.strictEqual(History.estimateTokens(message), tokens))
  }
})

describe("History.trim", () => {
  const user = (content: string): Prompt.Message => ({ role: "user", content })
  const answer = (content: string): Prompt.Message => ({ role: "assistant", content })

  it("a history that fits, or has one exchange, is returned as it is", () => {
    const messages = [{ role: "system" as const, content: "s" }, user("a".repeat(400)), answer("b".repeat(400))]
    assert.strictEqual(History.trim(messages, { maxTokens: 1 }), messages)
    const two = [...messages, user("c")]
    assert.strictEqual(History.trim(two, { maxTokens: 10_000 }), two)
  })

  it("drops the oldest whole exchanges, keeping the system message and the newest exchange", () => {
    const messages: ReadonlyArray<Prompt.Message> = [
      { role: "system", content: "s" },
      user("one"),
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ping", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", content: "pong" },
      answer("up"),
      user("two"),
      answer("x".repeat(40)),
      user("three")
    ]
    // 5 (system) + 6 (three) + 5 + 14 (two and its answer) = 30: exchange one (5 + 6 + 6 + 5 = 22) must go.
    assert.deepStrictEqual(History.trim(messages, { maxTokens: 30 }), [
      { role: "system", content: "s" },
      user("two"),
      answer("x".repeat(40)),
      user("three")
    ])
    assert.deepStrictEqual(History.trim(messages, { maxTokens: 29 }), [{ role: "system", content: "s" }, user("three")])
  })
})

// =============================================================================
// Random conversations
// =============================================================================

interface StepSpec {
  readonly text: string
  readonly calls: ReadonlyArray<{ readonly name: string; readonly arguments: string; readonly answer: string }>
  readonly reversed: boolean
}

interface ExchangeSpec {
  readonly user: string
  readonly steps: ReadonlyArray<StepSpec>
  readonly final: string | null
}

const text = (max: number) => fc.string({ maxLength: max, unit: "grapheme" })

const stepArbitrary: fc.Arbitrary<StepSpec> = fc.record({
  text: text(40),
  calls: fc.array(fc.record({ name: fc.constantFrom("ping", "add", "book"), arguments: text(30), answer: text(200) }), {
    minLength: 1,
    maxLength: 3
  }),
  reversed: fc.boolean()
})

const exchangeArbitrary: fc.Arbitrary<ExchangeSpec> = fc.record({
  user: text(200),
  steps: fc.array(stepArbitrary, { maxLength: 3 }),
  final: fc.option(text(200), { nil: null })
})

/** The messages of random exchanges (ids unique); the last may be paused: its last step's calls unanswered. */
const build = (
  system: ReadonlyArray<string>,
  exchanges: ReadonlyArray<ExchangeSpec>,
  paused: boolean
): { readonly messages: ReadonlyArray<Prompt.Message>; readonly open: ReadonlySet<string> } => {
  const messages: Array<Prompt.Message> = system.map((content) => ({ role: "system", content }))
  let id = 0
  const open = new Set<string>()
  exchanges.forEach((exchange, e) => {
    messages.push({ role: "user", content: exchange.user })
    exchange.steps.forEach((step, s) => {
      const calls = step.calls.map((call) => ({ ...call, id: `c${++id}` }))
      messages.push({
        role: "assistant",
        content: step.text,
        toolCalls: calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }))
      })
      const last = paused && e === exchanges.length - 1 && s === exchange.steps.length - 1
      if (last) {
        for (const call of calls) open.add(call.id)
        return
      }
      for (const call of step.reversed ? [...calls].reverse() : calls) {
        messages.push({ role: "tool", toolCallId: call.id, content: call.answer })
      }
    })
    const pausedHere = paused && e === exchanges.length - 1 && exchange.steps.length > 0
    if (exchange.final !== null && !pausedHere) messages.push({ role: "assistant", content: exchange.final })
  })
  return { messages, open }
}

const conversationArbitrary = fc.record({
  system: fc.array(text(100), { minLength: 1, maxLength: 2 }),
  exchanges: fc.array(exchangeArbitrary, { minLength: 1, maxLength: 8 }),
  paused: fc.boolean(),
  maxTokens: fc.integer({ min: 1, max: 1_500 })
})

describe("History.trim: property over random conversations", () => {
  it("never separates a call from its answer, keeps the system message and the newest exchange, holds the budget, drops no more than needed", () => {
    fc.assert(
      fc.property(conversationArbitrary, ({ system, exchanges, paused, maxTokens }) => {
        const { messages, open } = build(system, exchanges, paused)
        assert.isUndefined(checkHistory("test", messages, open), "the generator builds valid conversations")
        const trimmed = History.trim(messages, { maxTokens })

        // Every tool message follows its assistant call; no call lacks its answer (but the paused ones).
        const problem = checkHistory("test", trimmed, open)
        assert.isUndefined(problem, problem?.message)
        // The system messages stay first, as they were.
        assert.deepStrictEqual(
          trimmed.slice(0, system.length).map((message) => message.content),
          system
        )
        // What is kept is the newest whole exchanges, in order.
        const all = History.exchangesOf(messages).exchanges
        const kept = History.exchangesOf(trimmed).exchanges
        assert.isAtLeast(kept.length, 1)
        assert.deepStrictEqual(kept, all.slice(all.length - kept.length))
        // The budget holds, unless only what is never dropped remains.
        const total = History.estimateAll(trimmed)
        if (kept.length > 1) assert.isAtMost(total, maxTokens)
        // No more was dropped than needed: one more exchange would not fit.
        if (kept.length < all.length) {
          const next = all[all.length - kept.length - 1] as ReadonlyArray<Prompt.Message>
          assert.isAbove(total + History.estimateAll(next), maxTokens)
        }
      }),
      { numRuns: Number(process.env.FAULTS_RUNS ?? 500) }
    )
  })
})

// =============================================================================
// Random turns on a thread
// =============================================================================

interface TurnSpec {
  readonly input: string
  readonly steps: ReadonlyArray<ReadonlyArray<ScriptedModel.ScriptedToolCall>>
  readonly reply: string
}

const callArbitrary: fc.Arbitrary<ScriptedModel.ScriptedToolCall> = fc.oneof(
  fc.record({ name: fc.constant("ping") }),
  fc.record({ name: fc.constant("add"), arguments: fc.record({ a: fc.integer(), b: fc.integer() }) }),
  fc.record({ name: fc.constant("book"), arguments: fc.record({ hotel: text(30) }) }),
  fc.record({ id: fc.constant("call_1"), name: fc.constant("ping") })
)

const turnArbitrary: fc.Arbitrary<TurnSpec> = fc.record({
  input: text(300),
  steps: fc.array(fc.array(callArbitrary, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
  reply: text(400)
})

describe("History on a thread: property over random turns", () => {
  it("every request a thread's turns send holds whole exchanges within the budget, the system message first", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turnArbitrary, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 2_400 }),
        async (turns, maxTokens) => {
          await Effect.runPromise(
            Effect.gen(function* () {
              const { travel } = fixture()
              const agent = yield* Agent.make({ id: "planner", roles: [travel] })
              const script = turns.flatMap((turn) => [
                ...turn.steps.map((calls) => ScriptedModel.toolCalls(calls)),
                ScriptedModel.reply(turn.reply)
              ])
              const scripted = yield* ScriptedModel.make(script)
              const options = { system: "Be brief.", thread: { id: "t", budget: { maxTokens } } }
              const newTurns: Array<number> = []
              let refused = 0
              for (const turn of turns) {
                const before = (yield* scripted.requests).length
                newTurns.push(before)
                const withModel = <A, E>(effect: Effect.Effect<A, E, LanguageModel.LanguageModel>) =>
                  Effect.provideService(effect, LanguageModel.LanguageModel, scripted.model)
                const started = yield* Effect.result(withModel(agent.chat(turn.input, options)))
                if (started._tag === "Failure") {
                  // A budget smaller than what every request sends (system, tool schemas, input): VALIDATION, nothing sent.
                  const error = started.failure
                  assert.strictEqual(error.category, "VALIDATION", error.message)
                  assert.strictEqual(
                    error._tag === "ValidationError" ? error.issues[0]?.path : "",
                    "thread.budget.maxTokens"
                  )
                  assert.strictEqual((yield* scripted.requests).length, before)
                  refused++
                  continue
                }
                let result = started.success
                // A booking waits for an approval: approve it and go on.
                while (result._tag === "AwaitingApproval") {
                  const decisions = Object.fromEntries(
                    result.pending.map((call) => [call.toolCallId, Chat.approve("ann")])
                  )
                  result = yield* withModel(agent.resume(result.state, decisions, options))
                }
              }
              const requests = yield* scripted.requests
              for (const [i, request] of requests.entries()) {
                const problem = checkHistory("test", request.messages, new Set())
                assert.isUndefined(problem, problem?.message)
                assert.deepStrictEqual(request.messages[0], { role: "system", content: "Be brief." })
                // A turn's first request: the history it loaded is within the budget, or none was loaded.
                if (newTurns.includes(i)) {
                  const loaded = request.messages.length > 2
                  const sent = History.estimateAll(request.messages) + History.estimateToolTokens(request.tools ?? [])
                  if (loaded) assert.isAtMost(sent, maxTokens)
                }
              }
              // Nothing is lost from the thread itself: every turn's messages are kept.
              const thread = yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read("t"))
              assert.strictEqual(thread.exchanges, turns.length - refused)
              if (refused === 0) {
                assert.deepStrictEqual(
                  thread.messages.filter((message) => message.role === "user").map((message) => message.content),
                  turns.map((turn) => turn.input)
                )
              }
              const ids = thread.messages.flatMap((message) =>
                message.role === "assistant" ? (message.toolCalls ?? []).map((call) => call.id) : []
              )
              assert.strictEqual(new Set(ids).size, ids.length, `ids unique across the thread: ${ids.join(" ")}`)
            }).pipe(Effect.scoped, Effect.provide(ThreadStore.layerMemory))
          )
        }
      ),
      { numRuns: Math.max(100, Math.floor(Number(process.env.FAULTS_RUNS ?? 100) / 10)) }
    )
  })
})
