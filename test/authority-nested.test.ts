/**
 * An outer agent's authority bounds the agents it uses (issue 40, item 6): a user who denies `wipe` expects it
 * denied everywhere in the turn — in an agent used as an action (`Compose.agent`) and in the agent a handoff
 * (`Compose.handoff`) gives the conversation to, at any depth — although those agents' own authority allows it.
 * Only denials are inherited (an allow-list names the outer agent's own actions), and only inside the turn: the
 * inner agent called on its own still runs `wipe`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Compose, Role } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"

const makeAgents = Effect.gen(function* () {
  const wiped: Array<string> = []
  const cleanerRole = (name: string) =>
    Role.make({
      identity: { name, goal: "Clean up", domain: "ops" },
      actions: {
        wipe: Action.local({
          description: "Wipe the disk",
          parameters: {},
          run: () => {
            wiped.push(name)
            return "wiped"
          }
        })
      }
    })
  const cleaner = yield* Agent.make({ id: "cleaner", roles: [cleanerRole("cleaner")] })
  // Two deep: the outer agent uses `middle`, which uses `deep`.
  const deep = yield* Agent.make({ id: "deep", roles: [cleanerRole("deep")] })
  const middle = yield* Agent.make({
    id: "middle",
    roles: [
      Role.make({
        identity: { name: "middle", goal: "Delegate", domain: "ops" },
        actions: { ask: Compose.agent(deep, { description: "Ask deep" }) }
      })
    ]
  })
  const outer = yield* Agent.make({
    id: "ops",
    authority: { deny: ["wipe"] },
    roles: [
      Role.make({
        identity: { name: "ops", goal: "Operate", domain: "ops" },
        actions: {
          clean: Compose.agent(cleaner, { description: "Ask the cleaner" }),
          delegate: Compose.agent(middle, { description: "Ask the middle desk" }),
          transfer_to_cleaner: Compose.handoff(cleaner)
        }
      })
    ]
  })
  return { outer, cleaner, wiped }
})

const toolMessages = (result: {
  readonly _tag: string
  readonly messages?: ReadonlyArray<{ role: string; content: string }>
}) => (result.messages ?? []).filter((message) => message.role === "tool").map((message) => message.content)

describe("an outer agent's authority bounds the agents it uses", () => {
  it.live("its deny holds in an agent used as an action, one two deep, and the agent a handoff goes to", () =>
    Effect.gen(function* () {
      const { outer, cleaner, wiped } = yield* makeAgents
      const asAction = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "o1", name: "clean", arguments: { input: "wipe it" } }]),
        ScriptedModel.toolCalls([{ id: "i1", name: "wipe", arguments: {} }]),
        ScriptedModel.reply("I could not wipe."),
        ScriptedModel.reply("The cleaner could not wipe.")
      ])
      const first = yield* outer.chat("wipe the disk").pipe(Effect.provide(asAction.layer))
      assert.strictEqual(first._tag, "Completed")
      assert.deepStrictEqual(wiped, [], "the agent used as an action did not wipe")

      const twoDeep = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "o1", name: "delegate", arguments: { input: "wipe it" } }]),
        ScriptedModel.toolCalls([{ id: "m1", name: "ask", arguments: { input: "wipe it" } }]),
        ScriptedModel.toolCalls([{ id: "d1", name: "wipe", arguments: {} }]),
        ScriptedModel.reply("deep could not wipe."),
        ScriptedModel.reply("middle could not wipe."),
        ScriptedModel.reply("Nobody could wipe.")
      ])
      yield* outer.chat("wipe the disk").pipe(Effect.provide(twoDeep.layer))
      assert.deepStrictEqual(wiped, [], "an agent two deep did not wipe")

      const handedOff = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "o1", name: "transfer_to_cleaner", arguments: {} }]),
        ScriptedModel.toolCalls([{ id: "c1", name: "wipe", arguments: {} }]),
        ScriptedModel.reply("I may not wipe.")
      ])
      const third = yield* outer.chat("wipe the disk").pipe(Effect.provide(handedOff.layer))
      assert.strictEqual(third._tag, "Completed")
      assert.deepStrictEqual(wiped, [], "the agent handed off to did not wipe")
      const refusals = toolMessages(third as never).filter((text) => text.includes("AUTHORITY"))
      assert.isAbove(refusals.length, 0, "the model is told the call was refused by authority")
      assert.isTrue(refusals.some((text) => text.includes("above")))

      // Outside the outer agent's turn, the cleaner's own authority holds: it wipes.
      const alone = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "a1", name: "wipe", arguments: {} }]),
        ScriptedModel.reply("Wiped.")
      ])
      yield* cleaner.chat("wipe the disk").pipe(Effect.provide(alone.layer))
      assert.deepStrictEqual(wiped, ["cleaner"])
    })
  )
})
