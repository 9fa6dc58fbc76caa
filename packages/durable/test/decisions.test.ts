// A pending call of a durable run is decided once, ever (C55 b, c): the first decision recorded stands, the same
// decision again is that decision, any other — the loser of a race, a rejection sent after an approval returned, a
// decision after the run moved on — is APPROVAL "already decided: …", and the run goes on with the recorded one.
import { assert, describe, it } from "@effect/vitest"
import { Chat, Decision } from "@rolecraft/core"
import * as Model from "@rolecraft/core/LanguageModel"
import { Effect, Exit, Layer } from "effect"
import { DurableChat, type RunStore } from "../src/index.ts"
import { makeAgent, refundModel } from "./support/refunds.ts"

const setup = Effect.gen(function* () {
  const refunds: Array<string> = []
  const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void refunds.push(order)) })
  const turns = DurableChat.make("support")
  const layer = turns
    .layer(agent)
    .pipe(Layer.provideMerge(DurableChat.layerTest), Layer.provide(refundModel(() => Effect.void)))
  const context = yield* Layer.build(layer)
  const run = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) => Effect.provide(effect, context)
  return { refunds, turns, run }
})

const waitFor = (turns: DurableChat.DurableChat, runId: string, until: (status: RunStore.RunStatus) => boolean) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("5 millis")),
    Effect.repeat({ until: (s) => until(s) || s._tag === "Done" || s._tag === "Failed" })
  )

const paused = (s: RunStore.RunStatus) => s._tag === "AwaitingApproval"

/** What a decide answered: ok, or the category and message of its failure. */
const outcome = (exit: Exit.Exit<void, { readonly category: string; readonly message: string }>): string =>
  Exit.isSuccess(exit)
    ? "ok"
    : Exit.findErrorOption(exit)._tag === "Some"
      ? `${Exit.findErrorOption(exit).pipe((e) => (e._tag === "Some" ? `${e.value.category}: ${e.value.message}` : ""))}`
      : "defect"

const toolAnswer = (final: RunStore.RunStatus): string =>
  final._tag === "Done" && final.result._tag === "Completed"
    ? (final.result.messages.find((m) => m.role === "tool")?.content ?? "")
    : final._tag

// Every order of two decisions on one call: the same decision twice, another approver, the other verdict.
const orders: ReadonlyArray<readonly [string, Decision.Decision, Decision.Decision]> = [
  ["approve, the same approve", Chat.approve("alice"), Chat.approve("alice")],
  ["approve, another approver's approve", Chat.approve("alice"), Chat.approve("bob")],
  ["approve, reject", Chat.approve("alice"), Chat.reject("bob", "too much")],
  ["reject, approve", Chat.reject("bob", "too much"), Chat.approve("alice")],
  ["reject, the same reject", Chat.reject("bob", "too much"), Chat.reject("bob", "too much")],
  ["reject, another reason", Chat.reject("bob", "too much"), Chat.reject("bob", "not eligible")],
  ["reject, another approver's reject", Chat.reject("bob", "too much"), Chat.reject("carol", "too much")]
]

describe("a durable run's pending call is decided once", () => {
  for (const [name, first, second] of orders) {
    const expected = (decision: Decision.Decision, recorded: Decision.Decision) =>
      Decision.same(decision, recorded)
        ? "ok"
        : `APPROVAL: decide: call_1 (refund) is already decided: ${Decision.describe(recorded)}`

    it.live(`${name}, one after the other: the first stands, the second is it again or APPROVAL`, () =>
      Effect.gen(function* () {
        const { refunds, turns, run } = yield* setup
        yield* run(turns.start("r", "order-1"))
        yield* run(waitFor(turns, "r", paused))
        assert.strictEqual(outcome(yield* Effect.exit(run(turns.decide("r", { call_1: first })))), "ok")
        assert.strictEqual(
          outcome(yield* Effect.exit(run(turns.decide("r", { call_1: second })))),
          expected(second, first)
        )
        const final = yield* run(turns.await("r", { pollInterval: "5 millis" }))
        // Once the run is done, the rule still answers: the same decision is it, another is refused.
        const late = expected(second, first).replace("call_1 (refund)", "call_1")
        assert.strictEqual(outcome(yield* Effect.exit(run(turns.decide("r", { call_1: second })))), late)
        assert.deepStrictEqual(refunds, first._tag === "Approve" ? ["order-1"] : [])
        assert.include(
          toolAnswer(final),
          first._tag === "Approve" ? "refunded order-1" : `rejected by ${first.approver}`
        )
      }).pipe(Effect.scoped)
    )

    it.live(`${name}, at once: one is recorded, the other is it again or APPROVAL; the run follows the recorded`, () =>
      Effect.gen(function* () {
        const { refunds, turns, run } = yield* setup
        yield* run(turns.start("r", "order-1"))
        yield* run(waitFor(turns, "r", paused))
        const exits = yield* Effect.all(
          [first, second].map((decision) =>
            Effect.exit(Effect.andThen(Effect.yieldNow, run(turns.decide("r", { call_1: decision }))))
          ),
          { concurrency: "unbounded" }
        )
        const final = yield* run(turns.await("r", { pollInterval: "5 millis" }))
        const answer = toolAnswer(final)
        // Which was recorded shows in what the model was told.
        const recorded = answer.includes("refunded order-1")
          ? [first, second].find((d) => d._tag === "Approve")
          : [first, second].find(
              (d) => d._tag === "Reject" && answer.includes(`rejected by ${d.approver}: ${d.reason}`)
            )
        assert.isDefined(recorded, answer)
        if (recorded === undefined) return
        assert.deepStrictEqual(exits.map(outcome), [expected(first, recorded), expected(second, recorded)])
        assert.deepStrictEqual(refunds, recorded._tag === "Approve" ? ["order-1"] : [])
      }).pipe(Effect.scoped)
    )
  }

  it.live("twenty deciders at once on one call (ten approve, ten reject, each their own): one is recorded", () =>
    Effect.gen(function* () {
      const { refunds, turns, run } = yield* setup
      yield* run(turns.start("r", "order-1"))
      yield* run(waitFor(turns, "r", paused))
      const deciders = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? Chat.approve(`approver-${i}`) : Chat.reject(`approver-${i}`, `reason ${i}`)
      )
      const exits = yield* Effect.all(
        deciders.map((d) => Effect.exit(Effect.andThen(Effect.yieldNow, run(turns.decide("r", { call_1: d }))))),
        { concurrency: "unbounded" }
      )
      const answers = exits.map(outcome)
      assert.strictEqual(answers.filter((a) => a === "ok").length, 1, answers.join("\n"))
      const winner = deciders[answers.indexOf("ok")] as Decision.Decision
      for (const answer of answers.filter((a) => a !== "ok")) {
        assert.strictEqual(answer, `APPROVAL: decide: call_1 (refund) is already decided: ${Decision.describe(winner)}`)
      }
      yield* run(turns.await("r", { pollInterval: "5 millis" }))
      assert.deepStrictEqual(refunds, winner._tag === "Approve" ? ["order-1"] : [])
    }).pipe(Effect.scoped)
  )
})

describe("a decide that is refused records nothing", () => {
  // Every decision of one decide is checked before any is recorded: a call the run does not have makes the whole
  // decide VALIDATION, and the calls it named beside it stay undecided (before, the ones named first were recorded
  // and their run woken, then the decide failed).
  it.live("a known call beside an unknown one: VALIDATION at the unknown one, the known one still undecided", () =>
    Effect.gen(function* () {
      const { refunds, turns, run } = yield* setup
      yield* run(turns.start("r", "order-1"))
      yield* run(waitFor(turns, "r", paused))
      assert.strictEqual(
        outcome(
          yield* Effect.exit(run(turns.decide("r", { call_1: Chat.approve("alice"), call_9: Chat.approve("alice") })))
        ),
        'VALIDATION: decide: run "r" has no pending call call_9'
      )
      assert.strictEqual((yield* run(turns.status("r")))._tag, "AwaitingApproval")
      assert.strictEqual(
        outcome(yield* Effect.exit(run(turns.decide("r", { call_1: Chat.reject("bob", "no") })))),
        "ok"
      )
      const final = yield* run(turns.await("r", { pollInterval: "5 millis" }))
      assert.include(toolAnswer(final), "rejected by bob")
      assert.deepStrictEqual(refunds, [])
    }).pipe(Effect.scoped)
  )
})

describe("a decision belongs to the call it was made for", () => {
  // A model that reuses `call_1` in a later step: the later call gets a fresh id (ToolCallId), waits for its own
  // decision, and the decision recorded for the first call answers only for the first.
  it.live("a reused id in a later step is a new call: the earlier decision neither applies to it nor changes", () =>
    Effect.gen(function* () {
      const refunds: Array<string> = []
      const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void refunds.push(order)) })
      const model = Layer.succeed(
        Model.LanguageModel,
        Model.make(
          (call) =>
            Effect.sync(() => {
              const answered = call.request.messages.filter((m) => m.role === "tool").length
              return answered < 2
                ? {
                    toolCalls: [
                      { id: "call_1", name: "refund", arguments: JSON.stringify({ order: `order-${answered}` }) }
                    ],
                    finishReason: "tool_calls" as const,
                    usage: { inputTokens: 1, outputTokens: 1 }
                  }
                : { text: "Done.", finishReason: "stop" as const, usage: { inputTokens: 1, outputTokens: 1 } }
            }),
          { name: "reusing-ids" }
        )
      )
      const turns = DurableChat.make("reused-ids")
      const context = yield* Layer.build(
        turns.layer(agent).pipe(Layer.provideMerge(DurableChat.layerTest), Layer.provide(model))
      )
      const run = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) => Effect.provide(effect, context)
      yield* run(turns.start("r", "refund both"))
      yield* run(waitFor(turns, "r", paused))
      yield* run(turns.decide("r", { call_1: Chat.approve("alice") }))
      const second = yield* run(waitFor(turns, "r", (s) => s._tag === "AwaitingApproval" && s.segment === 1))
      assert.deepStrictEqual(
        second._tag === "AwaitingApproval" ? second.pending.map((p) => [p.toolCallId, p.arguments]) : [second._tag],
        [["call_1_2_0", { order: "order-1" }]]
      )
      // The first call's decision stands and answers as itself; it is not the new call's.
      assert.strictEqual(outcome(yield* Effect.exit(run(turns.decide("r", { call_1: Chat.approve("alice") })))), "ok")
      assert.strictEqual(
        outcome(yield* Effect.exit(run(turns.decide("r", { call_1: Chat.reject("bob", "no") })))),
        "APPROVAL: decide: call_1 is already decided: approved by alice"
      )
      assert.strictEqual((yield* run(turns.status("r")))._tag, "AwaitingApproval")
      assert.deepStrictEqual(refunds, ["order-0"])
      yield* run(turns.decide("r", { call_1_2_0: Chat.reject("alice", "not this one") }))
      const final = yield* run(turns.await("r", { pollInterval: "5 millis" }))
      assert.strictEqual(final._tag, "Done")
      assert.deepStrictEqual(refunds, ["order-0"])
    }).pipe(Effect.scoped)
  )
})
