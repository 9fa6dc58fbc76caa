/**
 * A pending approval belongs to its turn (C84): two turns of one agent whose model numbers its calls alike
 * (`call_1` in each) and sends the same arguments each get a token of their own, scoped by the turn's id and
 * the call's, and each approved call runs once — in a plain turn, a streamed one, a thread's, and on every
 * approval store. The store lists each turn's pending call under its scope, with what a person is shown.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, type Layer, Stream } from "effect"
import * as Agent from "../src/Agent.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Chat from "../src/Chat.ts"
import type * as LanguageModel from "../src/LanguageModel.ts"
import { approvalStores } from "./support/Stores.ts"
import { fixture } from "./support/TravelRole.ts"

/** The same call in both turns (a provider that numbers its calls per response says `call_1` each time), then the answers. */
const script = () => [
  ScriptedModel.toolCalls([{ id: "call_1", name: "book", arguments: { hotel: "Ritz" } }]),
  ScriptedModel.toolCalls([{ id: "call_1", name: "book", arguments: { hotel: "Ritz" } }]),
  ScriptedModel.reply("Booked."),
  ScriptedModel.reply("Booked.")
]

type Kind = "chat" | "chatStream" | "thread"

/** One turn of `kind`, paused; its resumption with `decisions`. */
const turnOf = (
  agent: Chat.Turns<LanguageModel.LanguageModel>,
  kind: Kind,
  thread: string,
  model: Layer.Layer<LanguageModel.LanguageModel>
) => ({
  start: () =>
    Effect.provide(
      kind === "chatStream"
        ? Effect.flatMap(Stream.runLast(agent.chatStream("Book the Ritz")), (last) =>
            last._tag === "Some" && last.value._tag === "TurnFinished"
              ? Effect.succeed(last.value.result)
              : Effect.die(new Error("the stream ended without TurnFinished"))
          )
        : agent.chat("Book the Ritz", kind === "thread" ? { thread } : {}),
      model
    ),
  resume: (state: Chat.PausedState, decisions: Chat.Decisions) =>
    Effect.provide(agent.resume(state, decisions, kind === "thread" ? { thread } : {}), model)
})

const cases: ReadonlyArray<readonly [Kind, string]> = [
  ["chat", "memory"],
  ["chat", "sqlite file"],
  ["chat", "sql on postgres"],
  ["chatStream", "memory"],
  ["thread", "memory"],
  ["thread", "sqlite file"]
]

describe("two turns whose model numbers its calls alike (C84)", () => {
  for (const [kind, storeName] of cases) {
    const store = approvalStores.find(([name]) => name === storeName)?.[1] ?? (() => ApprovalStore.layerMemory)
    it.effect(`${kind} on ${storeName}: each turn's call gets its own token and runs once`, () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make(script())
        const one = turnOf(agent, kind, "thread-1", scripted.layer)
        const two = turnOf(agent, kind, "thread-2", scripted.layer)
        const first = yield* one.start()
        const second = yield* two.start()
        assert.strictEqual(first._tag, "AwaitingApproval")
        assert.strictEqual(second._tag, "AwaitingApproval")
        if (first._tag !== "AwaitingApproval" || second._tag !== "AwaitingApproval") return
        const [a] = first.pending
        const [b] = second.pending
        assert.deepStrictEqual([a?.toolCallId, b?.toolCallId], ["call_1", "call_1"])
        assert.notStrictEqual(a?.pendingTokenId, b?.pendingTokenId)
        const turnA = first.state.turnId ?? ""
        const turnB = second.state.turnId ?? ""
        assert.notStrictEqual(turnA, turnB)

        // Each turn's pending call is listed under its own scope, with what a person is shown.
        const store = yield* ApprovalStore.ApprovalStore
        for (const [turn, pending] of [
          [turnA, a],
          [turnB, b]
        ] as const) {
          const listed = yield* store.list({ scope: { turn } })
          assert.deepStrictEqual(
            listed.map(({ key, scope, agents, arguments: shown, reason, binding }) => ({
              key,
              scope,
              agents,
              shown,
              reason,
              action: binding.action
            })),
            [
              {
                key: ApprovalStore.keyOf(pending?.pendingTokenId ?? ""),
                scope: { turn, call: "call_1" },
                agents: ["planner"],
                shown: '{"hotel":"Ritz"}',
                reason: "Bookings cost money",
                action: "book"
              }
            ]
          )
        }

        const done = yield* one.resume(first.state, { call_1: Chat.approve("ann") })
        assert.strictEqual(done._tag, "Completed")
        assert.strictEqual(counts.book, 1)
        const again = yield* two.resume(second.state, { call_1: Chat.approve("bob") })
        assert.strictEqual(again._tag, "Completed")
        if (again._tag !== "Completed") return
        const answer = again.messages.find((m) => m.role === "tool" && m.toolCallId === "call_1")
        assert.strictEqual(answer?.content, "booked Ritz")
        assert.strictEqual(counts.book, 2)
        // Both decided and used: neither turn has a pending call left (the store may be shared with other tests).
        assert.deepStrictEqual(yield* store.list({ scope: { turn: turnA } }), [])
        assert.deepStrictEqual(yield* store.list({ scope: { turn: turnB } }), [])
        yield* scripted.assertDone
      }).pipe(Effect.provide(store()))
    )
  }
})
