/**
 * A streamed turn on a thread that hands its conversation off, end to end: the triage agent's model looks an
 * order up (call `call_1`) and hands over to billing (whose handoff shows it no tool calls); billing's model,
 * numbering its calls per response, also says `call_1`. The caller sees `HandedOff` and billing's events as
 * `NestedEvent`s under the path `triage > billing`, then `TurnFinished` with billing's answer; the thread keeps the
 * exchange as the caller's conversation, and every tool call id in the thread is unique — within the turn (the
 * handed-off turn assigns its ids against the whole conversation, not only the part its filter showed it) and
 * across turns (a second turn's `call_1` is renamed too).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Compose, type Prompt, Role, ThreadStore } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Schema, Stream } from "effect"

const idsOf = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => [
    ...(message.role === "assistant" ? (message.toolCalls ?? []).map((call) => call.id) : []),
    ...(message.role === "tool" ? [message.toolCallId] : [])
  ])

const lookup = Action.local({
  description: "Look an order up",
  parameters: { order: Schema.String },
  run: ({ order }) => ({ order, status: "shipped", total: 42 })
})

describe("a streamed, threaded turn that hands off", () => {
  it.effect("shows HandedOff and the nested path, keeps the exchange, and keeps every call id unique", () =>
    Effect.gen(function* () {
      const billing = yield* Agent.make({
        id: "billing",
        roles: [
          Role.make({
            identity: { name: "billing", goal: "Answer billing questions", domain: "support" },
            actions: { refundStatus: Action.local({ description: "Refund status", parameters: {}, run: () => "none" }) }
          })
        ]
      })
      const triage = yield* Agent.make({
        id: "triage",
        roles: [
          Role.make({
            identity: { name: "triage", goal: "Route customers", domain: "support" },
            actions: { lookup, transfer_to_billing: Compose.handoff(billing, { filter: Compose.withoutTools }) }
          })
        ]
      })
      const scripted = yield* ScriptedModel.make([
        // triage: look the order up, then hand over
        ScriptedModel.toolCalls([{ id: "call_1", name: "lookup", arguments: { order: "A-7" } }]),
        ScriptedModel.toolCalls([{ id: "call_2", name: "transfer_to_billing" }]),
        // billing, which numbers its calls per response: `call_1` again
        ScriptedModel.toolCalls([{ id: "call_1", name: "refundStatus" }]),
        ScriptedModel.reply("No refund is open for A-7."),
        // the next turn: triage's model says `call_1` once more
        ScriptedModel.toolCalls([{ id: "call_1", name: "lookup", arguments: { order: "A-8" } }]),
        ScriptedModel.reply("A-8 has shipped.")
      ])
      const store = yield* ThreadStore.ThreadStore

      const events = Array.from(
        yield* Stream.runCollect(
          Stream.provide(triage.chatStream("Where is my refund for A-7?", { thread: "customer-1" }), scripted.layer)
        )
      )
      const handedOff = events.filter((event) => event._tag === "HandedOff")
      assert.deepStrictEqual(handedOff, [{ _tag: "HandedOff", from: "triage", to: "billing", toolCallId: "call_2" }])
      const nested = events.flatMap((event) => (event._tag === "NestedEvent" ? [event] : []))
      assert.isAbove(nested.length, 0)
      for (const event of nested) {
        assert.deepStrictEqual(event.agents, ["triage", "billing"])
        assert.strictEqual(event.toolCallId, "call_2")
      }
      const billingCall = nested.flatMap((event) =>
        event.event._tag === "ToolCallReady" && event.event.action === "refundStatus" ? [event.event.toolCallId] : []
      )
      assert.strictEqual(billingCall.length, 1)
      assert.notStrictEqual(billingCall[0], "call_1", "billing's call_1 is renamed: triage's lookup has that id")
      const last = events.at(-1)
      assert.strictEqual(last?._tag, "TurnFinished")
      if (last?._tag !== "TurnFinished") return
      const result = last.result
      assert.strictEqual(result._tag, "Completed")
      if (result._tag !== "Completed") return
      assert.deepStrictEqual([result.text, result.agent], ["No refund is open for A-7.", "billing"])

      // The thread keeps the exchange as the caller's conversation: triage's part up to the handoff, then billing's.
      const kept = yield* store.read("customer-1")
      assert.strictEqual(kept.exchanges, 1)
      assert.deepStrictEqual(kept.messages, result.messages.slice(1))
      assert.deepStrictEqual(
        kept.messages.map((message) => message.role),
        ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
      )
      const firstIds = idsOf(kept.messages)
      assert.strictEqual(new Set(firstIds).size, firstIds.length / 2, "each call id once, with its one answer")

      // A second turn on the thread: its `call_1` is renamed against the whole thread.
      const next = yield* triage.chat("And A-8?", { thread: "customer-1" }).pipe(Effect.provide(scripted.layer))
      assert.strictEqual(next._tag, "Completed")
      const all = idsOf((yield* store.read("customer-1")).messages)
      assert.strictEqual(new Set(all).size, all.length / 2)
      assert.strictEqual((yield* store.read("customer-1")).exchanges, 2)
      yield* scripted.assertDone
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )
})
