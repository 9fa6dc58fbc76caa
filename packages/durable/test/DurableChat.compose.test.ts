// A durable run whose tool call runs another agent (Compose.agent) that pauses twice: each pause of the inner
// turn pauses the run with the inner call's path, each decision resumes it where it paused (the resumed call is
// a fresh activity of the workflow each time, not the replay of the last one), and each protected tool runs once.
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Chat, Compose, Role } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Layer, Schema } from "effect"
import { DurableChat, type RunStore } from "../src/index.ts"

const waitFor = (turns: DurableChat.DurableChat, runId: string, done: (status: RunStore.RunStatus) => boolean) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("10 millis")),
    Effect.repeat({ until: (s) => done(s) || s._tag === "Done" || s._tag === "Failed" })
  )

describe("DurableChat with an agent used as an action", () => {
  it.live("two nested pauses in one call: each decided once, each protected tool run once, the run completes", () =>
    Effect.gen(function* () {
      const counts = { book: 0, pay: 0 }
      const protectedAction = (name: "book" | "pay") =>
        Action.local({
          description: `${name} the hotel`,
          parameters: { hotel: Schema.String },
          run: ({ hotel }) => {
            counts[name]++
            return `${name} ${hotel}: ok`
          }
        }).pipe(Action.requireApproval({ reason: `${name} moves money` }))
      const clerk = yield* Agent.make({
        id: "clerk",
        roles: [
          Role.make({
            identity: { name: "clerk", goal: "Book and pay", domain: "travel" },
            actions: { book: protectedAction("book"), pay: protectedAction("pay") }
          })
        ]
      })
      const lead = yield* Agent.make({
        id: "lead",
        roles: [
          Role.make({
            identity: { name: "lead", goal: "Delegate", domain: "travel" },
            actions: { reserve: Compose.agent(clerk, { description: "Book and pay a hotel" }) }
          })
        ]
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "reserve", arguments: { input: "the Ritz" } }]),
        ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "Ritz" } }]),
        ScriptedModel.toolCalls([{ name: "pay", arguments: { hotel: "Ritz" } }]),
        ScriptedModel.reply("Booked and paid."),
        ScriptedModel.reply("All done.")
      ])
      const turns = DurableChat.make("compose")
      const layer = turns.layer(lead).pipe(Layer.provideMerge(DurableChat.layerTest), Layer.provide(scripted.layer))
      const context = yield* Layer.build(layer)
      const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer>>) => Effect.provide(effect, context)

      yield* run(turns.start("run-1", "Reserve the Ritz"))
      const first = yield* run(waitFor(turns, "run-1", (s) => s._tag === "AwaitingApproval" && s.segment === 0))
      if (first._tag !== "AwaitingApproval") return assert.fail(`${JSON.stringify(counts)} ${JSON.stringify(first)}`)
      assert.deepStrictEqual(
        first.pending.map((p) => [p.toolCallId, p.action, p.agents]),
        [["call_1/call_2", "book", ["lead", "clerk"]]]
      )
      yield* run(turns.decide("run-1", { "call_1/call_2": Chat.approve("ann") }))
      const second = yield* run(waitFor(turns, "run-1", (s) => s._tag === "AwaitingApproval" && s.segment === 1))
      if (second._tag !== "AwaitingApproval") return assert.fail(`${JSON.stringify(counts)} ${JSON.stringify(second)}`)
      assert.deepStrictEqual(
        second.pending.map((p) => [p.toolCallId, p.action, p.agents]),
        [["call_1/call_3", "pay", ["lead", "clerk"]]]
      )
      assert.deepStrictEqual(counts, { book: 1, pay: 0 })
      yield* run(turns.decide("run-1", { "call_1/call_3": Chat.approve("ann") }))
      const final = yield* run(turns.await("run-1", { pollInterval: "10 millis" }))
      if (final._tag !== "Done" || final.result._tag !== "Completed") return assert.fail(JSON.stringify(final))
      assert.strictEqual(final.result.text, "All done.")
      assert.deepStrictEqual(counts, { book: 1, pay: 1 })
      yield* scripted.assertDone
    }).pipe(Effect.scoped)
  )
})
