/**
 * Sibling and nested work in one chat turn (the scripted model, one model shared by every agent, answering by the
 * agent whose system message the request carries):
 *
 * - a message with two handoffs and another call, on a thread: the first handoff is carried out, the second answered
 *   as not carried out — in the history the model sees, the stored thread and the caller's events;
 * - a handoff beside a call that waits for an approval is answered as not carried out, and no HandedOff is told;
 * - an agent that always delegates to itself and a slow sibling, both under `maxTotalSteps: 12`: at most 12 model
 *   calls in the whole tree, the outermost turn's included; the turn ends with a result, and a refusal names the
 *   model calls of each agent that spent the bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Compose, type LanguageModel, type Prompt, Role, ThreadStore } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Schema, Stream } from "effect"

const toolMessages = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [[message.toolCallId, message.content]] : []))

const agentOf = (request: { readonly messages: ReadonlyArray<Prompt.Message> }) =>
  /You are the agent "([^"]+)"/.exec(String(request.messages[0]?.content))?.[1] ?? "?"

const desk = (name: string) =>
  Agent.make({ id: name, roles: [Role.make({ identity: { name, goal: `Answer ${name}`, domain: "support" } })] })

describe("handoffs not carried out are answered as not carried out", () => {
  it.effect(
    "two handoffs and a lookup in one message, on a thread: refunds answers; shipping is told as not taken",
    () =>
      Effect.gen(function* () {
        let lookups = 0
        const refunds = yield* desk("refunds")
        const shipping = yield* desk("shipping")
        const triage = yield* Agent.make({
          id: "triage",
          roles: [
            Role.make({
              identity: { name: "triage", goal: "Route customers", domain: "support" },
              actions: {
                lookup_order: Action.local({
                  description: "Look an order up",
                  parameters: { id: Schema.String },
                  run: ({ id }) => Effect.sync(() => ({ id, lookups: ++lookups }))
                }),
                transfer_to_refunds: Compose.handoff(refunds),
                transfer_to_shipping: Compose.handoff(shipping)
              }
            })
          ]
        })
        const asked: Array<string> = []
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([
            { id: "c1", name: "lookup_order", arguments: { id: "A-17" } },
            { id: "h1", name: "transfer_to_refunds" },
            { id: "h2", name: "transfer_to_shipping" }
          ]),
          ScriptedModel.respond((request) => {
            asked.push(agentOf(request))
            return ScriptedModel.reply("Refunds here: A-17 is being refunded.")
          })
        ])
        const events = Array.from(
          yield* Stream.runCollect(
            Stream.provide(triage.chatStream("Refund A-17", { thread: "customer-17" }), scripted.layer)
          )
        )
        const finished = events.at(-1)
        if (finished?._tag !== "TurnFinished" || finished.result._tag !== "Completed") return assert.fail("no result")
        assert.deepStrictEqual([finished.result.agent, asked, lookups], ["refunds", ["refunds"], 1])
        const notTaken =
          "Not transferred to shipping: only one handoff of a response is carried out, the first (to refunds)."
        const expected = [
          ["c1", '{"id":"A-17","lookups":1}'],
          ["h1", "Transferred to refunds."],
          ["h2", notTaken]
        ]
        assert.deepStrictEqual(toolMessages(finished.result.messages), expected)
        // The caller heard the same, and of one transfer only.
        assert.deepStrictEqual(
          events.flatMap((event) => (event._tag === "ToolCallAnswered" ? [[event.toolCallId, event.content]] : [])),
          expected
        )
        assert.deepStrictEqual(
          events.flatMap((event) => (event._tag === "HandedOff" ? [event.to] : [])),
          ["refunds"]
        )
        // The stored thread keeps no claim of a transfer to shipping.
        const kept = yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) =>
          store.read("customer-17")
        )
        assert.deepStrictEqual(toolMessages(kept.messages), expected)
      }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.effect("a handoff beside a call that waits for an approval: not carried out, answered so, no HandedOff", () =>
    Effect.gen(function* () {
      const refunds = yield* desk("refunds")
      const triage = yield* Agent.make({
        id: "triage",
        roles: [
          Role.make({
            identity: { name: "triage", goal: "Route customers", domain: "support" },
            actions: {
              refund: Action.local({
                description: "Refund an order",
                parameters: { order: Schema.String },
                run: ({ order }) => `refunded ${order}`
              }).pipe(Action.requireApproval({ reason: "Refunds move money" })),
              transfer_to_refunds: Compose.handoff(refunds)
            }
          })
        ]
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { id: "c1", name: "refund", arguments: { order: "A-17" } },
          { id: "h1", name: "transfer_to_refunds" }
        ])
      ])
      const events = Array.from(
        yield* Stream.runCollect(Stream.provide(triage.chatStream("Refund A-17"), scripted.layer))
      )
      const finished = events.at(-1)
      if (finished?._tag !== "TurnFinished" || finished.result._tag !== "AwaitingApproval")
        return assert.fail("no pause")
      const note =
        "Not transferred to refunds: a call of the same response waits for an approval, so no handoff is carried out; call it again once it is decided."
      assert.deepStrictEqual(toolMessages(finished.result.state.messages), [["h1", note]])
      assert.deepStrictEqual(
        events.flatMap((event) => (event._tag === "ToolCallAnswered" ? [[event.toolCallId, event.content]] : [])),
        [["h1", note]]
      )
      assert.isFalse(events.some((event) => event._tag === "HandedOff"))
    })
  )
})

describe("one bound over the whole turn tree", () => {
  it.live(
    "an always-delegating agent beside a slow sibling under maxTotalSteps 12: at most 12 model calls in all",
    () =>
      Effect.gen(function* () {
        let explore: Agent.Agent<any, LanguageModel.LanguageModel> | undefined
        const limits = { maxDepth: 3, maxTotalSteps: 12 }
        explore = yield* Agent.make({
          id: "explore",
          roles: [
            Role.make({
              identity: { name: "explore", goal: "Explore", domain: "code" },
              actions: {
                delegate: Compose.agent(() => explore as Agent.Agent<any, LanguageModel.LanguageModel>, {
                  description: "Ask another explorer",
                  ...limits
                })
              }
            })
          ]
        })
        const billing = yield* desk("billing")
        const deskAgent = yield* Agent.make({
          id: "desk",
          roles: [
            Role.make({
              identity: { name: "desk", goal: "Answer", domain: "support" },
              actions: {
                explore: Compose.agent(() => explore as Agent.Agent<any, LanguageModel.LanguageModel>, {
                  description: "Explore",
                  ...limits
                }),
                billing: Compose.agent(billing, { description: "Billing", ...limits })
              }
            })
          ]
        })
        const calls: Array<string> = []
        let billingCalls = 0
        let deskCalls = 0
        const answer = ScriptedModel.respond((request) => {
          const agent = agentOf(request)
          calls.push(agent)
          if (agent === "explore") return ScriptedModel.toolCalls([{ name: "delegate", arguments: { input: "more" } }])
          if (agent === "billing") {
            billingCalls++
            // billing's first model call is slow; it needs two.
            return billingCalls === 1
              ? ScriptedModel.delayed("50 millis", ScriptedModel.toolCalls([{ name: "noop", arguments: {} }]))
              : ScriptedModel.reply("billing: the invoice is paid")
          }
          deskCalls++
          return deskCalls === 1
            ? ScriptedModel.toolCalls([
                { name: "explore", arguments: { input: "why" } },
                { name: "billing", arguments: { input: "invoice" } }
              ])
            : ScriptedModel.reply("desk: done")
        })
        const scripted = yield* ScriptedModel.make(Array.from({ length: 40 }, () => answer))
        const result = yield* deskAgent.chat("help", { concurrency: 2 }).pipe(Effect.provide(scripted.layer))
        assert.isAtMost(calls.length, 12, calls.join(", "))
        if (result._tag === "AwaitingApproval") return assert.fail("the turn paused")
        console.log(`model calls in the tree: ${calls.length} (${calls.join(", ")})`)
        // billing came second to a spent bound: its answer says so, naming who spent it.
        const billed = toolMessages(result.messages).find(([, content]) => content?.includes("desk > billing") === true)
        assert.include(billed?.[1], "desk > billing could not make a model call")
        assert.include(billed?.[1], "model calls by agent: desk 1, desk > explore 1, desk > explore > explore 1")
        // A refusal the bound caused names who spent it, with their model calls.
        for (const [, content = ""] of toolMessages(result.messages)) {
          if (!content.includes("maxTotalSteps")) continue
          assert.include(content, "model calls by agent:")
          assert.include(content, "desk > explore")
        }
      }),
    { timeout: 20_000 }
  )
})
