// C84: two durable runs whose model numbers its calls alike (`call_1` in each) and sends the same arguments each get
// their own pending token: approving one run never answers or consumes the other's call, and each refund runs once.
// The tokens are scoped by the run and the call (what the store lists for each run), never by the call id alone.
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { Effect, Layer } from "effect"
import { DurableChat, type RunStore } from "../src/index.ts"
import { makeAgent, refundModel } from "./support/refunds.ts"

const waitFor = (turns: DurableChat.DurableChat, runId: string, until: (status: RunStore.RunStatus) => boolean) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("5 millis")),
    Effect.repeat({ until: (s) => until(s) || s._tag === "Done" || s._tag === "Failed" })
  )

const toolAnswer = (final: RunStore.RunStatus): string =>
  final._tag === "Done" && final.result._tag === "Completed"
    ? (final.result.messages.find((m) => m.role === "tool")?.content ?? "")
    : final._tag

describe("two durable runs with the same call ids (C84)", () => {
  it.live("each run's approved call runs once, with a token of its own scoped by the run", () =>
    Effect.gen(function* () {
      const refunds: Array<string> = []
      const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void refunds.push(order)) })
      const turns = DurableChat.make("support")
      const layer = turns
        .layer(agent)
        .pipe(Layer.provideMerge(DurableChat.layerTest), Layer.provide(refundModel(() => Effect.void)))
      const context = yield* Layer.build(layer)
      const run = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) => Effect.provide(effect, context)

      // Two customers asking the same thing: the same call id, the same arguments.
      yield* run(turns.start("run-1", "order-7"))
      yield* run(turns.start("run-2", "order-7"))
      const first = yield* run(waitFor(turns, "run-1", (s) => s._tag === "AwaitingApproval"))
      const second = yield* run(waitFor(turns, "run-2", (s) => s._tag === "AwaitingApproval"))
      assert.strictEqual(first._tag, "AwaitingApproval")
      assert.strictEqual(second._tag, "AwaitingApproval")
      if (first._tag !== "AwaitingApproval" || second._tag !== "AwaitingApproval") return
      const [one] = first.pending
      const [two] = second.pending
      assert.strictEqual(one?.toolCallId, "call_1")
      assert.strictEqual(two?.toolCallId, "call_1")
      assert.notStrictEqual(one?.pendingTokenId, two?.pendingTokenId)

      // The store lists one pending token per run, each scoped by its run and the call.
      for (const [runId, pending] of [
        ["run-1", one],
        ["run-2", two]
      ] as const) {
        const listed = yield* agent.approvals.list({ scope: { turn: runId } })
        assert.deepStrictEqual(
          listed.map((token) => ({ key: token.key, scope: token.scope, action: token.binding.action })),
          [
            {
              key: ApprovalStore.keyOf(pending?.pendingTokenId ?? ""),
              scope: { turn: runId, call: "call_1" },
              action: "refund"
            }
          ]
        )
      }

      yield* run(turns.decide("run-1", { call_1: Chat.approve("alice") }))
      const done1 = yield* run(turns.await("run-1", { pollInterval: "5 millis" }))
      assert.include(toolAnswer(done1), "refunded order-7")
      // Run 2 still waits: the decision on run 1 neither answered nor consumed its call.
      assert.strictEqual((yield* run(turns.status("run-2")))._tag, "AwaitingApproval")
      assert.deepStrictEqual(refunds, ["order-7"])

      yield* run(turns.decide("run-2", { call_1: Chat.approve("bob") }))
      const done2 = yield* run(turns.await("run-2", { pollInterval: "5 millis" }))
      assert.include(toolAnswer(done2), "refunded order-7")
      assert.notInclude(toolAnswer(done2), "already been used")
      assert.deepStrictEqual(refunds, ["order-7", "order-7"])
    }).pipe(Effect.scoped)
  )
})
