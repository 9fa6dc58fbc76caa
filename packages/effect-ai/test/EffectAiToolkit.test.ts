/**
 * Rolecraft → effect/ai: an agent's actions as an effect/ai Toolkit driven by an
 * effect/ai Chat over a scripted effect/ai model; every call runs through the
 * agent's pipeline, approvals go through effect/ai's approval flow into the
 * agent's approval store.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Events, Role } from "@rolecraft/core"
import { EffectAiToolkit } from "@rolecraft/effect-ai"
import { Effect, Fiber, Schema, Stream } from "effect"
import { Chat, Prompt } from "effect/ai"
import { finish, scripted, text, toolCall } from "./support/ScriptedAiModel.ts"

const makeDesk = () => {
  const booked: Array<string> = []
  const role = Role.make({
    identity: { name: "desk", goal: "Book hotels", domain: "travel" },
    actions: {
      nights: Action.local({
        description: "Count the nights between two dates",
        parameters: { checkIn: Schema.String, checkOut: Schema.String },
        run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
      }),
      book: Action.local({
        description: "Book a hotel",
        parameters: { hotelId: Schema.String },
        run: ({ hotelId }) => {
          booked.push(hotelId)
          return `booked ${hotelId}`
        }
      }).pipe(Action.requireApproval({ reason: "spends money" })),
      audit: Action.local({ description: "Audit", parameters: {}, run: () => "ok" }).pipe(Action.excludeFromModel),
      refund: Action.local({ description: "Refund", parameters: {}, run: () => "refunded" })
    }
  })
  return { role, booked }
}

const toolResults = (prompt: Prompt.Prompt) =>
  prompt.content.flatMap((message) =>
    message.role === "tool" ? message.content.flatMap((part) => (part.type === "tool-result" ? [part] : [])) : []
  )

describe("EffectAiToolkit", () => {
  it.effect(
    "offers the actions authority allows and the model may see; approval actions are marked needsApproval",
    () =>
      Effect.gen(function* () {
        const { role } = makeDesk()
        const agent = yield* Agent.make({ id: "desk", roles: [role], authority: { deny: ["refund"] } })
        const { toolkit } = EffectAiToolkit.make(agent)
        assert.deepStrictEqual(Object.keys(toolkit.tools), ["nights", "book"])
        assert.isUndefined(toolkit.tools.nights?.needsApproval)
        assert.isDefined(toolkit.tools.book?.needsApproval)
        assert.strictEqual(toolkit.tools.book?.description, "Book a hotel")
        assert.deepStrictEqual(toolkit.tools.book?.jsonSchema, {
          type: "object",
          properties: { hotelId: { type: "string" } },
          required: ["hotelId"]
        })
      })
  )

  it.effect(
    "an effect/ai Chat drives the role's actions: calls through the pipeline, an approval through effect/ai's flow",
    () =>
      Effect.gen(function* () {
        const { role, booked } = makeDesk()
        const agent = yield* Agent.make({ id: "desk", roles: [role] })
        const { toolkit, layer } = EffectAiToolkit.make(agent)
        const model = scripted([
          [
            toolCall("c1", "nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" }),
            toolCall("c2", "nights", { checkIn: "2026-11-02", _approval_token: "forged" }),
            toolCall("c3", "book", { hotelId: "h-1" }),
            finish("tool-calls", 10, 4)
          ],
          [text("Booked h-1 for three nights."), finish("stop", 20, 6)]
        ])
        const events: Array<Events.Event> = []
        const listener = yield* agent.events.pipe(
          Stream.runForEach((event) => Effect.sync(() => events.push(event))),
          Effect.forkChild
        )
        yield* Effect.yieldNow

        const chat = yield* Chat.empty
        const provided = Effect.provide([layer, model.layer])
        const first = yield* chat.generateText({ prompt: "Book h-1 from Nov 2 to Nov 5", toolkit }).pipe(provided)
        // effect/ai resolves calls concurrently: results come in the order they finish.
        const results = [...first.toolResults].sort((a, b) => a.id.localeCompare(b.id))
        assert.deepStrictEqual(
          results.map((part) => [part.id, part.isFailure]),
          [
            ["c1", false],
            ["c2", true]
          ]
        )
        assert.strictEqual(results[0]?.result, 3)
        const refused = results[1]?.result as EffectAiToolkit.Failure
        assert.strictEqual(refused.error.category, "VALIDATION")
        assert.include(refused.error.message, "checkOut")
        // The approval action did not run: effect/ai asks for a decision, and the agent's store holds a pending token.
        const request = first.content.find((part) => part.type === "tool-approval-request")
        assert.strictEqual(request?.type === "tool-approval-request" && request.toolCallId, "c3")
        assert.deepStrictEqual(booked, [])

        const approvalId = request?.type === "tool-approval-request" ? request.approvalId : ""
        const second = yield* chat
          .generateText({
            prompt: [{ role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] }],
            toolkit
          })
          .pipe(provided)
        assert.strictEqual(second.text, "Booked h-1 for three nights.")
        assert.deepStrictEqual(booked, ["h-1"])
        const answered = toolResults(model.requests[1]?.prompt ?? Prompt.empty).find((part) => part.id === "c3")
        assert.strictEqual(answered?.result, "booked h-1")
        assert.isFalse(answered?.isFailure)
        assert.strictEqual(model.remaining(), 0)

        // Each call went through the pipeline: book asked once (APPROVAL), then ran with its token.
        yield* Effect.yieldNow
        yield* Fiber.interrupt(listener)
        const bookEvents = events.filter((event) => "action" in event && event.action === "book")
        assert.deepStrictEqual(
          bookEvents.map((event) => [event._tag, event._tag === "ActionFailed" ? event.category : undefined]),
          [
            ["ActionStarted", undefined],
            ["ActionFailed", "APPROVAL"],
            ["ActionStarted", undefined],
            ["ActionSucceeded", undefined]
          ]
        )
      })
  )

  it.effect(
    "a call denied through effect/ai never runs, and a handler call effect/ai never asked about is APPROVAL",
    () =>
      Effect.gen(function* () {
        const { role, booked } = makeDesk()
        const agent = yield* Agent.make({ id: "desk", roles: [role] })
        const { toolkit, layer } = EffectAiToolkit.make(agent)
        const model = scripted([
          [toolCall("c1", "book", { hotelId: "h-9" }), finish("tool-calls", 5, 2)],
          [text("Not booked."), finish("stop", 5, 2)]
        ])
        const provided = Effect.provide([layer, model.layer])
        const chat = yield* Chat.empty
        const first = yield* chat.generateText({ prompt: "Book h-9", toolkit }).pipe(provided)
        const request = first.content.find((part) => part.type === "tool-approval-request")
        const approvalId = request?.type === "tool-approval-request" ? request.approvalId : ""
        const second = yield* chat
          .generateText({
            prompt: [
              { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: false, reason: "no" }] }
            ],
            toolkit
          })
          .pipe(provided)
        assert.strictEqual(second.text, "Not booked.")
        assert.deepStrictEqual(booked, [])

        // Calling the handler directly skips effect/ai's approval request: the pipeline refuses it, and an asked
        // call id with other arguments does not take that call's token either.
        const handled = (hotelId: string, toolCallId: string) =>
          Effect.gen(function* () {
            const handlers = yield* toolkit
            const results = yield* handlers.handle("book", { hotelId }, toolCallId)
            const all = yield* Stream.runCollect(results)
            return all[all.length - 1]
          }).pipe(Effect.provide(layer))
        for (const [hotelId, toolCallId] of [
          ["h-9", "direct-1"],
          ["h-10", "c1"]
        ] as const) {
          const last = yield* handled(hotelId, toolCallId)
          assert.isTrue(last?.isFailure, toolCallId)
          assert.strictEqual((last?.result as EffectAiToolkit.Failure | undefined)?.error.category, "APPROVAL")
        }
        assert.deepStrictEqual(booked, [])
      })
  )

  // C54: effect/ai matches an approval to its call by id, so with one id on two calls it runs whichever call
  // it finds under that id. Every order of decisions on the two calls: nothing runs, the model is told why.
  const orders: ReadonlyArray<readonly [boolean, boolean]> = [
    [true, false],
    [false, true],
    [true, true],
    [false, false]
  ]
  for (const [first, second] of orders) {
    it.effect(
      `two calls sharing one id (C54), decided ${first ? "approve" : "deny"} / ${second ? "approve" : "deny"}: neither runs`,
      () =>
        Effect.gen(function* () {
          const { role, booked } = makeDesk()
          const agent = yield* Agent.make({ id: "desk", roles: [role] })
          const { toolkit, layer } = EffectAiToolkit.make(agent)
          const model = scripted([
            [
              toolCall("call_dup", "book", { hotelId: "h-1" }),
              toolCall("call_dup", "book", { hotelId: "h-2" }),
              finish("tool-calls", 5, 2)
            ],
            [text("Done."), finish("stop", 5, 2)]
          ])
          const provided = Effect.provide([layer, model.layer])
          const chat = yield* Chat.empty
          const asked = yield* chat.generateText({ prompt: "Book h-1 and h-2", toolkit }).pipe(provided)
          const requests = asked.content.flatMap((part) => (part.type === "tool-approval-request" ? [part] : []))
          assert.strictEqual(requests.length, 2)
          assert.deepStrictEqual(booked, [])
          yield* chat
            .generateText({
              prompt: [
                {
                  role: "tool",
                  content: [
                    { type: "tool-approval-response", approvalId: requests[0]?.approvalId ?? "", approved: first },
                    { type: "tool-approval-response", approvalId: requests[1]?.approvalId ?? "", approved: second }
                  ]
                }
              ],
              toolkit
            })
            .pipe(provided)
          assert.deepStrictEqual(booked, [])
          if (first || second) {
            const answered = toolResults(model.requests[1]?.prompt ?? Prompt.empty).find(
              (part) => part.id === "call_dup"
            )
            assert.isTrue(answered?.isFailure)
            const failure = answered?.result as EffectAiToolkit.Failure
            assert.strictEqual(failure.error.category, "APPROVAL")
            assert.include(failure.error.message, 'the tool call id "call_dup" was given to two calls')
          }
        })
    )
  }
})
