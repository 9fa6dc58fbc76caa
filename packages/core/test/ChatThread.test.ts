/**
 * Chat turns kept in a thread (`agent.chat(input, { thread })`), on all three thread stores: the history loaded
 * and appended; a paused turn kept in the thread, resumed with the thread, a new message refused while it waits;
 * a failed turn appending nothing; ids unique across the whole thread, also across exchanges a budget leaves out;
 * two turns on one thread at once run one after the other; the input and the thread's caps.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { ScriptedModel } from "@rolecraft/testing"
import { Deferred, Effect, Exit, Fiber, Layer, Redacted, Stream } from "effect"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as ThreadStore from "../src/ThreadStore.ts"
import { fixture } from "./support/TravelRole.ts"

const tempDir = () => mkdtempSync(join(tmpdir(), "rolecraft-chat-threads-"))
const pg = () => PgClient.layer({ url: Redacted.make(postgresUrl()) })

const layers: ReadonlyArray<readonly [string, () => Layer.Layer<ThreadStore.ThreadStore, unknown>]> = [
  ["memory", () => ThreadStore.layerMemory],
  ["sqlite file", () => ThreadStore.layerSqlite({ filename: join(tempDir(), "threads.db") })],
  ["sql on postgres", () => Layer.provide(ThreadStore.layerSql, pg())]
]

const fresh = (name: string) => `${name}-${crypto.randomUUID()}`

/** The roles of each request's messages, one string per request (`s u a u` …). */
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
        const again = yield* Effect.flip(agent.resume(paused.state, decisions, { thread }))
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
        const error = yield* Effect.flip(agent.resume(second.state, { call_1: Chat.approve("ann") }, { thread: one }))
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
        // A budget so small that each turn sends no earlier exchange.
        const options = { thread: { id: thread, budget: { maxTokens: 1 } } }
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
        const options = { system, thread: { id: thread, budget: { maxTokens: 350 } } }
        for (let n = 1; n <= 6; n++) yield* agent.chat(`q${n}`, options).pipe(Effect.provide(scripted.layer))
        const requests = yield* scripted.requests
        // 5 + 5 (the new input) + 3 × 109 = 337 ≤ 350: three earlier exchanges at most.
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
