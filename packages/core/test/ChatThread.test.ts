/**
 * Chat turns kept in a thread (`agent.chat(input, { thread })`), on all three thread stores: the history loaded
 * and appended; a paused turn kept in the thread, resumed with the thread, a new message refused while it waits;
 * a failed turn appending nothing; ids unique across the whole thread, also across exchanges a budget leaves out;
 * two turns on one thread at once run one after the other; the input and the thread's caps.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Deferred, Effect, Fiber, Layer, Schema, Stream } from "effect"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import * as History from "../src/History.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as Role from "../src/Role.ts"
import * as ThreadStore from "../src/ThreadStore.ts"
import { fresh, threadStores } from "./support/Stores.ts"
import { fixture } from "./support/TravelRole.ts"

const layers = threadStores

/** The roles of each request's messages, one string per request (`s u a u` …). */
/** The estimated tokens of the tool schemas `agent` offers: what a thread's budget counts beside the messages. */
const toolTokens = (agent: Agent.Agent<any, LanguageModel.LanguageModel>) =>
  Effect.gen(function* () {
    const scripted = yield* ScriptedModel.make([ScriptedModel.reply("x")])
    yield* agent.chat("x").pipe(Effect.provide(scripted.layer))
    const [request] = yield* scripted.requests
    return History.estimateToolTokens(request?.tools ?? [])
  })

const shapes = (requests: ReadonlyArray<LanguageModel.Request>) =>
  requests.map((request) => request.messages.map((message) => message.role[0]).join(" "))

const contents = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.map((message) =>
    message.role === "tool" ? `tool ${message.toolCallId}: ${message.content}` : message.content
  )

function expectTag<T extends Chat.ChatResult["_tag"]>(
  result: Chat.ChatResult,
  tag: T
): asserts result is Extract<Chat.ChatResult, { readonly _tag: T }> {
  assert.strictEqual(result._tag, tag, JSON.stringify(result))
}

for (const [name, layer] of layers) {
  describe(`Chat on a thread (${name})`, () => {
    it.effect("each turn loads the thread's history and appends its exchange; the system message is never stored", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const thread = fresh("two-turns")
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.reply("Hello!"),
          ScriptedModel.toolCalls([{ name: "ping" }]),
          ScriptedModel.reply("It is up.")
        ])
        yield* agent.chat("Hi", { thread }).pipe(Effect.provide(scripted.layer))
        const second = yield* agent
          .chat("Is it up?", { thread, system: "Be brief." })
          .pipe(Effect.provide(scripted.layer))
        expectTag(second, "Completed")
        assert.deepStrictEqual(shapes(yield* scripted.requests), ["s u", "s u a u", "s u a u a t"])
        assert.deepStrictEqual(contents(second.messages), [
          "Be brief.",
          "Hi",
          "Hello!",
          "Is it up?",
          "",
          "tool call_1: pong",
          "It is up."
        ])
        const kept = yield* store.read(thread)
        assert.strictEqual(kept.exchanges, 2)
        assert.deepStrictEqual(kept.messages, second.messages.slice(1))
        yield* scripted.assertDone
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a paused turn is part of the thread: a new message is refused, resuming continues the thread", () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const thread = fresh("paused")
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "h-1" } }]),
          ScriptedModel.reply("Booked h-1."),
          ScriptedModel.reply("You are welcome.")
        ])
        const paused = yield* agent.chat("Book h-1", { thread }).pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        const kept = yield* store.read(thread)
        assert.deepStrictEqual(kept.paused, paused.state)
        assert.strictEqual(kept.exchanges, 1)

        // A new message while the turn waits: APPROVAL naming the call, before the model is asked anything.
        const refused = yield* Effect.flip(agent.chat("Thanks", { thread }).pipe(Effect.provide(scripted.layer)))
        assert.strictEqual(refused._tag, "ApprovalRequired")
        assert.strictEqual(refused.category, "APPROVAL")
        assert.strictEqual((refused as { readonly check?: string }).check, "pending")
        assert.strictEqual(
          (refused as { readonly pendingTokenId?: string }).pendingTokenId,
          paused.pending[0]?.pendingTokenId
        )
        assert.include(refused.message, "call_1 (book)")
        assert.strictEqual((yield* scripted.requests).length, 1)

        const decisions = { call_1: Chat.approve("ann") }
        const resumed = yield* agent.resume(paused.state, decisions, { thread }).pipe(Effect.provide(scripted.layer))
        expectTag(resumed, "Completed")
        assert.strictEqual(counts.book, 1)
        const after = yield* store.read(thread)
        assert.strictEqual(after.paused, undefined)
        assert.strictEqual(after.exchanges, 1)
        assert.deepStrictEqual(contents(after.messages), ["Book h-1", "", "tool call_1: booked h-1", "Booked h-1."])

        // Resumed again with the state it was resumed from: not the thread's paused turn any more.
        const again = yield* Effect.flip(
          agent.resume(paused.state, decisions, { thread }).pipe(Effect.provide(scripted.layer))
        )
        assert.strictEqual(again._tag, "ValidationError")
        assert.include(again.message, "has no paused turn")

        const next = yield* agent.chat("Thanks", { thread }).pipe(Effect.provide(scripted.layer))
        expectTag(next, "Completed")
        assert.deepStrictEqual(shapes(yield* scripted.requests).at(-1), "s u a t a u")
        assert.strictEqual(counts.book, 1)
        yield* scripted.assertDone
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a state that is not the thread's paused turn is refused, and the thread stays paused", () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const [one, two] = [fresh("one"), fresh("two")]
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "h-1" } }]),
          ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "h-2" } }])
        ])
        const first = yield* agent.chat("Book h-1", { thread: one }).pipe(Effect.provide(scripted.layer))
        const second = yield* agent.chat("Book h-2", { thread: two }).pipe(Effect.provide(scripted.layer))
        expectTag(first, "AwaitingApproval")
        expectTag(second, "AwaitingApproval")
        // The state of thread two resumed on thread one: another pending token.
        const error = yield* Effect.flip(
          agent
            .resume(second.state, { call_1: Chat.approve("ann") }, { thread: one })
            .pipe(Effect.provide(scripted.layer))
        )
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, "is not the paused turn of")
        assert.strictEqual(counts.book, 0)
        assert.deepStrictEqual((yield* store.read(one)).paused, first.state)
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a turn that fails appends nothing; the next turn sees the thread as it was", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const thread = fresh("fails")
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.reply("Hello!"),
          ScriptedModel.toolCalls([{ name: "ping" }]),
          ScriptedModel.fail(400),
          ScriptedModel.reply("Again.")
        ])
        yield* agent.chat("Hi", { thread }).pipe(Effect.provide(scripted.layer))
        const failed = yield* Effect.flip(agent.chat("Ping it", { thread }).pipe(Effect.provide(scripted.layer)))
        assert.strictEqual(failed.category, "EXECUTION")
        assert.strictEqual((yield* store.read(thread)).exchanges, 1)
        yield* agent.chat("Ping it", { thread }).pipe(Effect.provide(scripted.layer))
        assert.deepStrictEqual(shapes(yield* scripted.requests).at(-1), "s u a u")
      }).pipe(Effect.provide(layer()))
    )

    it.effect("tool call ids stay unique across the thread, also for exchanges the budget leaves out", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const thread = fresh("ids")
        // The model calls every tool call_1 in every turn (as some providers do).
        const turn = [ScriptedModel.toolCalls([{ id: "call_1", name: "ping" }]), ScriptedModel.reply("pong")]
        const scripted = yield* ScriptedModel.make([...turn, ...turn, ...turn])
        // A budget so small that each turn sends no earlier exchange (the tool schemas and the turn's own fit).
        const options = { thread: { id: thread, budget: { maxTokens: (yield* toolTokens(agent)) + 60 } } }
        for (const input of ["one", "two", "three"]) {
          yield* agent.chat(input, options).pipe(Effect.provide(scripted.layer))
        }
        const requests = yield* scripted.requests
        assert.deepStrictEqual(shapes(requests), ["s u", "s u a t", "s u", "s u a t", "s u", "s u a t"])
        const ids = (yield* store.read(thread)).messages.flatMap((message) =>
          message.role === "assistant" ? (message.toolCalls ?? []).map((call) => call.id) : []
        )
        assert.deepStrictEqual(ids, ["call_1", "call_1_1_0", "call_1_1_0_1"])
      }).pipe(Effect.provide(layer()))
    )

    it.effect("the budget drops the oldest whole exchanges: what the model gets fits, the system message first", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const thread = fresh("budget")
        const reply = "r".repeat(400) // 104 tokens
        const scripted = yield* ScriptedModel.make(Array.from({ length: 6 }, () => ScriptedModel.reply(reply)))
        const system = "s" // 5 tokens; each user message "qN" 5 tokens: an exchange is 109
        const options = { system, thread: { id: thread, budget: { maxTokens: (yield* toolTokens(agent)) + 350 } } }
        for (let n = 1; n <= 6; n++) yield* agent.chat(`q${n}`, options).pipe(Effect.provide(scripted.layer))
        const requests = yield* scripted.requests
        // The tool schemas + 5 + 5 (the new input) + 3 × 109 = 337 ≤ 350 + the tool schemas: three earlier exchanges.
        assert.deepStrictEqual(
          requests.map((request) =>
            request.messages.filter((message) => message.role === "user").map((m) => m.content)
          ),
          [
            ["q1"],
            ["q1", "q2"],
            ["q1", "q2", "q3"],
            ["q1", "q2", "q3", "q4"],
            ["q2", "q3", "q4", "q5"],
            ["q3", "q4", "q5", "q6"]
          ]
        )
        for (const request of requests) assert.strictEqual(request.messages[0]?.content, system)
      }).pipe(Effect.provide(layer()))
    )

    it.live("two turns on one thread at once run one after the other: the second sees the first's exchange", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        const thread = fresh("concurrent")
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // The first model call waits until the second turn has been started.
        const scripted = yield* ScriptedModel.make([ScriptedModel.reply("first"), ScriptedModel.reply("second")])
        const gated: LanguageModel.LanguageModel["Service"] = {
          ...scripted.model,
          generate: (request) =>
            Effect.andThen(
              Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)),
              scripted.model.generate(request)
            )
        }
        const first = yield* Effect.forkChild(
          agent.chat("one", { thread }).pipe(Effect.provideService(LanguageModel.LanguageModel, gated))
        )
        yield* Deferred.await(started)
        const second = yield* Effect.forkChild(
          agent.chat("two", { thread }).pipe(Effect.provideService(LanguageModel.LanguageModel, gated))
        )
        yield* Effect.sleep("50 millis")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        assert.deepStrictEqual(shapes(yield* scripted.requests), ["s u", "s u a u"])
        assert.deepStrictEqual(contents((yield* store.read(thread)).messages), ["one", "first", "two", "second"])
      }).pipe(Effect.provide(layer()))
    )
  })
}

describe("Chat on a thread: options, strategies, streams and refusals", () => {
  const summarizer = () => {
    const { travel, counts } = fixture()
    const memory = Role.make({
      identity: { name: "memory", goal: "Keep conversations short", domain: "memory" },
      actions: {
        summarize: Action.llm({
          description: "Summarise the conversation in one line",
          parameters: { conversation: Schema.String }
        }).pipe(Action.excludeFromModel)
      }
    })
    return { roles: [travel, memory] as const, counts }
  }

  it.effect("the summarising strategy folds the oldest exchanges into a summary kept in the thread", () =>
    Effect.gen(function* () {
      const { roles } = summarizer()
      const agent = yield* Agent.make({ id: "planner", roles })
      const store = yield* ThreadStore.ThreadStore
      const reply = "r".repeat(400) // an exchange "qN" + reply: 5 + 104 = 109 tokens
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.reply(reply),
        ScriptedModel.reply(reply),
        ScriptedModel.reply(reply),
        ScriptedModel.reply("S1", { usage: { inputTokens: 7, outputTokens: 2 } }),
        ScriptedModel.reply(reply, { usage: { inputTokens: 11, outputTokens: 3 } }),
        ScriptedModel.reply(reply),
        ScriptedModel.reply("S2"),
        ScriptedModel.reply(reply)
      ])
      const options = {
        system: "s",
        thread: {
          id: "summarised",
          budget: {
            maxTokens: (yield* toolTokens(agent)) + 250,
            strategy: History.summarize("summarize", { keepTokens: 125 })
          }
        }
      }
      const results: Array<Chat.ChatResult> = []
      for (let n = 1; n <= 6; n++) {
        results.push(yield* agent.chat(`q${n}`, options).pipe(Effect.provide(scripted.layer)))
      }
      const requests = yield* scripted.requests
      const turns = requests.filter((request) => request.action !== "summarize")
      const summaries = requests.filter((request) => request.action === "summarize")
      // 5 + 5 + 3 × 109 > 250 at the fourth turn: exchanges 1 and 2 are folded (what is left fits in 125).
      assert.deepStrictEqual(contents(turns[3]?.messages ?? []), [
        "s",
        "Summary of the earlier conversation:\nS1",
        "q3",
        reply,
        "q4"
      ])
      assert.strictEqual(summaries.length, 2)
      assert.include(summaries[0]?.messages.at(-1)?.content ?? "", `user: q1\nassistant: ${reply}\nuser: q2`)
      assert.notInclude(summaries[0]?.messages.at(-1)?.content ?? "", "q3")
      // The next summary starts from the one before it.
      assert.include(summaries[1]?.messages.at(-1)?.content ?? "", "Summary so far: S1\nuser: q3")
      assert.deepStrictEqual(contents(turns[5]?.messages ?? []), [
        "s",
        "Summary of the earlier conversation:\nS2",
        "q5",
        reply,
        "q6"
      ])
      // The summary's tokens are the turn's.
      const fourth = results[3]
      expectTag(fourth as Chat.ChatResult, "Completed")
      assert.deepStrictEqual((fourth as Chat.Completed).usage, { inputTokens: 18, outputTokens: 5, totalTokens: 23 })
      const kept = yield* store.read("summarised")
      assert.strictEqual(kept.summary, "S2")
      assert.strictEqual(kept.exchanges, 6)
      assert.strictEqual(kept.messages.length, 12)
      yield* scripted.assertDone
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.effect("a summarising action that fails fails the turn with its error; nothing is written", () =>
    Effect.gen(function* () {
      const { roles } = summarizer()
      const agent = yield* Agent.make({ id: "planner", roles })
      const store = yield* ThreadStore.ThreadStore
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.reply("r".repeat(400)),
        ScriptedModel.reply("r".repeat(400)),
        ScriptedModel.fail(503)
      ])
      const budget = {
        maxTokens: (yield* toolTokens(agent)) + 200,
        strategy: History.summarize("summarize", { keepTokens: 100 })
      }
      const options = { thread: { id: "t", budget } }
      yield* agent.chat("q1", options).pipe(Effect.provide(scripted.layer))
      yield* agent.chat("q2", options).pipe(Effect.provide(scripted.layer))
      const error = yield* Effect.flip(agent.chat("q3", options).pipe(Effect.provide(scripted.layer)))
      assert.strictEqual(error.category, "TRANSIENT")
      assert.strictEqual(error.action, "summarize")
      const kept = yield* store.read("t")
      assert.strictEqual(kept.exchanges, 2)
      assert.strictEqual(kept.summary, undefined)
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.effect("a streamed turn on a thread ends with TurnFinished once the exchange is written", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const store = yield* ThreadStore.ThreadStore
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "h-1" } }]),
        ScriptedModel.reply("Booked it.")
      ])
      const first = yield* Stream.runCollect(agent.chatStream("Book h-1", { thread: "s" })).pipe(
        Effect.provide(scripted.layer)
      )
      const finished = first.at(-1)
      assert.strictEqual(finished?._tag, "TurnFinished")
      if (finished?._tag !== "TurnFinished" || finished.result._tag !== "AwaitingApproval") return assert.fail()
      assert.deepStrictEqual((yield* store.read("s")).paused, finished.result.state)
      const second = yield* Stream.runCollect(
        agent.resumeStream(finished.result.state, { call_1: Chat.approve("ann") }, { thread: "s" })
      ).pipe(Effect.provide(scripted.layer))
      assert.deepStrictEqual(
        second.map((event) => event._tag),
        ["ToolCallReady", "ToolCallAnswered", "StepStarted", "TextDelta", "TextDelta", "StepFinished", "TurnFinished"]
      )
      assert.deepStrictEqual(contents((yield* store.read("s")).messages), [
        "Book h-1",
        "",
        "tool call_1: booked h-1",
        "Booked it."
      ])
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.live("a streamed turn stopped part-way writes nothing and lets go of the thread", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const store = yield* ThreadStore.ThreadStore
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.chunks([{ text: "Hel" }], { stall: true }),
        ScriptedModel.reply("Hello.")
      ])
      // The consumer takes the first text and stops.
      const taken = yield* Stream.runCollect(
        agent.chatStream("Hi", { thread: "stopped" }).pipe(
          Stream.filter((event) => event._tag === "TextDelta"),
          Stream.take(1)
        )
      ).pipe(Effect.provide(scripted.layer))
      assert.strictEqual(taken.length, 1)
      assert.strictEqual((yield* store.read("stopped")).exchanges, 0)
      const next = yield* agent
        .chat("Hi", { thread: { id: "stopped", wait: "1 second" } })
        .pipe(Effect.provide(scripted.layer))
      expectTag(next, "Completed")
      assert.deepStrictEqual(contents((yield* store.read("stopped")).messages), ["Hi", "Hello."])
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.live("a turn that waits past its wait for a thread fails TRANSIENT naming the thread, before it runs", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const store = yield* ThreadStore.ThreadStore
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        store.hold("busy", () => Effect.andThen(Deferred.succeed(holding, undefined), Deferred.await(release)))
      )
      yield* Deferred.await(holding)
      const scripted = yield* ScriptedModel.make([])
      const error = yield* Effect.flip(
        agent.chat("Hi", { thread: { id: "busy", wait: "20 millis" } }).pipe(Effect.provide(scripted.layer))
      )
      assert.strictEqual(error._tag, "TransientFailure")
      assert.isTrue(error.retryable)
      assert.include(error.message, 'thread "busy" is held by another turn; waited 20 ms')
      assert.strictEqual((yield* scripted.requests).length, 0)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  describe("refused before anything runs", () => {
    const refusals: ReadonlyArray<
      readonly [
        string,
        (agent: Agent.Agent) => Effect.Effect<unknown, { readonly message: string }, LanguageModel.LanguageModel>,
        string,
        string
      ]
    > = [
      [
        "an input list holding another role than user",
        (agent) => agent.chat([{ role: "assistant", content: "I said so" }], { thread: "r" }),
        "input[0].role",
        "the thread holds the history"
      ],
      ["an empty input list", (agent) => agent.chat([], { thread: "r" }), "input", "the input is empty"],
      [
        "an input past 1,000,000 characters",
        (agent) => agent.chat("x".repeat(1_000_001), { thread: "r" }),
        "input",
        "at most 1000000"
      ],
      ["a thread id with a NUL", (agent) => agent.chat("Hi", { thread: "a\u0000b" }), "thread", "NUL"],
      [
        "a thread id of 1,025 characters",
        (agent) => agent.chat("Hi", { thread: "t".repeat(1025) }),
        "thread",
        "at most 1024"
      ],
      [
        "a budget of 0 tokens",
        (agent) => agent.chat("Hi", { thread: { id: "r", budget: { maxTokens: 0 } } }),
        "thread.budget.maxTokens",
        "an integer >= 1"
      ],
      [
        "a summarising budget with no action",
        (agent) => agent.chat("Hi", { thread: { id: "r", budget: { maxTokens: 9, strategy: History.summarize("") } } }),
        "thread.budget.strategy.action",
        "needs an action"
      ],
      [
        "a negative wait",
        (agent) => agent.chat("Hi", { thread: { id: "r", wait: -1 } }),
        "thread.wait",
        "a duration >= 0"
      ],
      [
        "a thread that is not a string or options",
        (agent) => agent.chat("Hi", { thread: 42 as never }),
        "thread",
        "thread id"
      ]
    ]
    for (const [what, turn, path, text] of refusals) {
      it.effect(`${what}: VALIDATION at ${path}`, () =>
        Effect.gen(function* () {
          const { travel } = fixture()
          const agent = yield* Agent.make({ id: "planner", roles: [travel] })
          const scripted = yield* ScriptedModel.make([])
          const error = yield* Effect.flip(turn(agent as unknown as Agent.Agent).pipe(Effect.provide(scripted.layer)))
          assert.strictEqual((error as { readonly _tag?: string })._tag, "ValidationError", error.message)
          assert.strictEqual(
            (error as unknown as { readonly issues: ReadonlyArray<{ path: string }> }).issues[0]?.path,
            path
          )
          assert.include(error.message, text)
          assert.strictEqual((yield* scripted.requests).length, 0)
          assert.strictEqual((yield* (yield* ThreadStore.ThreadStore).read("r")).exchanges, 0)
        }).pipe(Effect.provide(ThreadStore.layerMemory))
      )
    }

    it.effect("a thread at its cap of exchanges: VALIDATION naming the thread", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make([ScriptedModel.reply("one"), ScriptedModel.reply("two")])
        for (const input of ["1", "2"])
          yield* agent.chat(input, { thread: "full" }).pipe(Effect.provide(scripted.layer))
        const error = yield* Effect.flip(agent.chat("3", { thread: "full" }).pipe(Effect.provide(scripted.layer)))
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, 'thread "full" holds 2 exchanges, the most a thread of this store may')
        yield* scripted.assertDone
      }).pipe(
        Effect.provide(
          Layer.succeed(ThreadStore.ThreadStore, ThreadStore.make(ThreadStore.memoryStorage(), { maxExchanges: 2 }))
        )
      )
    )

    it.effect("a thread whose stored history is not a valid conversation: EXECUTION naming the thread", () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const store = yield* ThreadStore.ThreadStore
        yield* store.hold("broken", (held) =>
          held.write({
            exchange: {
              seq: 1,
              messages: [
                { role: "user", content: "Hi" },
                { role: "assistant", content: "", toolCalls: [{ id: "c", name: "ping", arguments: "{}" }] }
              ]
            },
            summary: undefined,
            paused: undefined
          })
        )
        const scripted = yield* ScriptedModel.make([])
        const error = yield* Effect.flip(agent.chat("Again", { thread: "broken" }).pipe(Effect.provide(scripted.layer)))
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, 'the history of thread "broken" is not a valid conversation')
        assert.strictEqual((yield* scripted.requests).length, 0)
      }).pipe(Effect.provide(ThreadStore.layerMemory))
    )
  })

  it.effect("the store: the one provided to the call, else the one provided to Agent.make, else the agent's own", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const scripted = yield* ScriptedModel.make(Array.from({ length: 4 }, (_, n) => ScriptedModel.reply(`r${n}`)))
      const atMake = ThreadStore.makeMemory()
      const atCall = ThreadStore.makeMemory()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] }).pipe(
        Effect.provideService(ThreadStore.ThreadStore, atMake)
      )
      const own = yield* Agent.make({ id: "solo", roles: [travel] })
      yield* agent.chat("a", { thread: "t" }).pipe(Effect.provide(scripted.layer))
      yield* agent
        .chat("b", { thread: "t" })
        .pipe(Effect.provide(scripted.layer), Effect.provideService(ThreadStore.ThreadStore, atCall))
      yield* own.chat("c", { thread: "t" }).pipe(Effect.provide(scripted.layer))
      yield* own.chat("d", { thread: "t" }).pipe(Effect.provide(scripted.layer))
      assert.deepStrictEqual(contents((yield* atMake.read("t")).messages), ["a", "r0"])
      assert.deepStrictEqual(contents((yield* atCall.read("t")).messages), ["b", "r1"])
      // The agent's own store keeps its thread from one call to the next.
      assert.deepStrictEqual(shapes(yield* scripted.requests).at(-1), "s u a u")
    })
  )
})
