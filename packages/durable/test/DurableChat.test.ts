import { assert, describe, it } from "@effect/vitest"
import { Chat } from "@rolecraft/core"
import type { ApprovalRequired } from "@rolecraft/core/ActionError"
import { ConfigProvider, type Duration, Effect, Layer } from "effect"
import { DurableChat, type RunStore } from "../src/index.ts"
import * as Model from "@rolecraft/core/LanguageModel"
import { makeAgent, refundModel } from "./support/refunds.ts"

/** The path of a VALIDATION error's first issue (undefined for any other error). */
const pathOf = (error: { readonly _tag: string }): string | undefined =>
  error._tag === "ValidationError"
    ? (error as unknown as { issues: ReadonlyArray<{ path: string }> }).issues[0]?.path
    : undefined

const toolMessages = (status: RunStore.RunStatus) =>
  status._tag === "Done"
    ? status.result._tag === "AwaitingApproval"
      ? []
      : status.result.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []))
    : []

/** An in-memory engine, an agent, and counters of model calls and refunds. */
const setup = (options?: { readonly ttl?: Duration.Input }) =>
  Effect.gen(function* () {
    const counts = { model: 0, refunds: [] as Array<string>, keys: [] as Array<string | undefined> }
    const agent = yield* makeAgent({
      onRefund: (order, key) =>
        Effect.sync(() => {
          counts.refunds.push(order)
          counts.keys.push(key)
        }),
      ...(options?.ttl === undefined ? {} : { ttl: options.ttl })
    })
    const turns = DurableChat.make("support")
    const layer = turns
      .layer(agent)
      .pipe(
        Layer.provideMerge(DurableChat.layerTest),
        Layer.provide(refundModel(() => Effect.sync(() => void counts.model++)))
      )
    const context = yield* Layer.build(layer)
    const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer>>) => Effect.provide(effect, context)
    return { counts, turns, run, agent }
  })

describe("DurableChat on the in-memory engine", () => {
  it.live("a paused run shows its pending call; approving it finishes the turn: two model calls, one refund", () =>
    Effect.gen(function* () {
      const { counts, turns, run } = yield* setup()
      yield* run(turns.start("run-1", "order-42"))
      const paused = yield* run(waitFor(turns, "run-1", "AwaitingApproval"))
      assert.strictEqual(paused._tag, "AwaitingApproval")
      if (paused._tag !== "AwaitingApproval") return
      assert.deepStrictEqual(
        paused.pending.map((p) => [p.toolCallId, p.action, p.arguments]),
        [["call_1", "refund", { order: "order-42" }]]
      )
      assert.deepStrictEqual([counts.model, counts.refunds], [1, []])
      yield* run(turns.decide("run-1", { call_1: Chat.approve("alice") }))
      const final = yield* run(turns.await("run-1", { pollInterval: "10 millis" }))
      assert.strictEqual(final._tag, "Done")
      if (final._tag !== "Done" || final.result._tag !== "Completed") return assert.fail(JSON.stringify(final))
      assert.strictEqual(final.result.text, "Done: refunded order-42")
      assert.deepStrictEqual([counts.model, counts.refunds], [2, ["order-42"]])
      // The refund ran with an idempotency key made of the run id and the tool call id.
      assert.deepStrictEqual(counts.keys, ["run-1/call_1"])
      assert.deepStrictEqual(yield* run(turns.status("run-1")), final)
    }).pipe(Effect.scoped)
  )

  it.live("a rejected call never runs; the model is told APPROVAL rejected", () =>
    Effect.gen(function* () {
      const { counts, turns, run } = yield* setup()
      yield* run(turns.start("run-2", "order-7"))
      yield* run(waitFor(turns, "run-2", "AwaitingApproval"))
      yield* run(turns.decide("run-2", { call_1: Chat.reject("bob", "not eligible") }))
      const final = yield* run(turns.await("run-2", { pollInterval: "10 millis" }))
      const [content] = toolMessages(final)
      assert.include(content, '"category":"APPROVAL"')
      assert.include(content, "rejected by bob: not eligible")
      assert.deepStrictEqual([counts.model, counts.refunds], [2, []])
    }).pipe(Effect.scoped)
  )

  it.live(
    "an unknown run, a run not awaiting approval, an unknown call, a reused run id: VALIDATION naming the field",
    () =>
      Effect.gen(function* () {
        const { turns, run } = yield* setup()
        const unknown = yield* Effect.flip(run(turns.decide("nope", { call_1: Chat.approve("alice") })))
        assert.deepStrictEqual([unknown.category, pathOf(unknown)], ["VALIDATION", "runId"])
        assert.include(unknown.message, 'no run "nope"')
        assert.strictEqual((yield* Effect.flip(run(turns.status("nope")))).category, "VALIDATION")
        assert.strictEqual((yield* Effect.flip(run(turns.cancel("nope")))).category, "VALIDATION")
        yield* run(turns.start("run-3", "order-1"))
        yield* run(waitFor(turns, "run-3", "AwaitingApproval"))
        const call = yield* Effect.flip(run(turns.decide("run-3", { call_9: Chat.approve("alice") })))
        assert.deepStrictEqual([call.category, pathOf(call)], ["VALIDATION", "decisions.call_9"])
        const bad = yield* Effect.flip(run(turns.decide("run-3", { call_1: { _tag: "Maybe" } as never })))
        assert.deepStrictEqual([bad.category, pathOf(bad)], ["VALIDATION", "decisions.call_1"])
        const again = yield* Effect.flip(run(turns.start("run-3", "order-2")))
        assert.include(again.message, 'a run "run-3" already exists')
        const empty = yield* Effect.flip(run(turns.start("", "order-2")))
        assert.deepStrictEqual([empty.category, pathOf(empty)], ["VALIDATION", "runId"])
        yield* run(turns.decide("run-3", { call_1: Chat.approve("alice") }))
        yield* run(turns.await("run-3", { pollInterval: "10 millis" }))
        // The same decision again is that decision; another is refused, the run is done either way.
        yield* run(turns.decide("run-3", { call_1: Chat.approve("alice") }))
        const late = yield* Effect.flip(run(turns.decide("run-3", { call_1: Chat.reject("bob", "no") })))
        assert.deepStrictEqual(
          [late.category, late.message],
          ["APPROVAL", "decide: call_1 is already decided: approved by alice"]
        )
        const done = yield* Effect.flip(run(turns.decide("run-3", { call_2: Chat.approve("alice") })))
        assert.include(done.message, "is not awaiting approval (Done)")
        assert.include((yield* Effect.flip(run(turns.cancel("run-3")))).message, "has already ended (Done)")
      }).pipe(Effect.scoped)
  )

  it.live("a run cancelled while paused runs nothing more: no refund, no model call, decisions refused", () =>
    Effect.gen(function* () {
      const { counts, turns, run } = yield* setup()
      yield* run(turns.start("run-4", "order-9"))
      yield* run(waitFor(turns, "run-4", "AwaitingApproval"))
      yield* run(turns.cancel("run-4"))
      assert.deepStrictEqual(yield* run(turns.await("run-4")), { _tag: "Cancelled" })
      const refused = yield* Effect.flip(run(turns.decide("run-4", { call_1: Chat.approve("alice") })))
      assert.include(refused.message, "is not awaiting approval (Cancelled)")
      assert.deepStrictEqual([counts.model, counts.refunds], [1, []])
    }).pipe(Effect.scoped)
  )

  it.live("an approval that expires while paused ends that call APPROVAL expired, and the turn goes on", () =>
    Effect.gen(function* () {
      const { counts, turns, run, agent } = yield* setup({ ttl: "1 second" })
      yield* run(turns.start("run-5", "order-5"))
      const paused = yield* run(waitFor(turns, "run-5", "AwaitingApproval"))
      // No decision: the durable clock fires at the token's expiry and the turn resumes on its own.
      const final = yield* run(turns.await("run-5", { pollInterval: "50 millis" }))
      const [content] = toolMessages(final)
      assert.include(content, '"category":"APPROVAL"')
      assert.include(content, "the approval token has expired")
      assert.deepStrictEqual([counts.model, counts.refunds], [2, []])
      if (paused._tag !== "AwaitingApproval") return
      const token = yield* agent.approvals.get(paused.pending[0]?.pendingTokenId ?? "")
      assert.strictEqual(token._tag === "Some" ? token.value.status : "none", "pending")
    }).pipe(Effect.scoped)
  )

  it.live(
    "without the chat's layer in this process, start, decide and cancel fail VALIDATION at once, saying what to provide",
    () =>
      Effect.gen(function* () {
        const turns = DurableChat.make("support")
        // The engine and nothing else: no turns.layer(agent). A send would wait for a registration that never comes.
        const context = yield* Layer.build(DurableChat.layerTest)
        const refused = (
          effect: Effect.Effect<
            void,
            DurableChat.Failure | ApprovalRequired,
            Layer.Success<typeof DurableChat.layerTest>
          >
        ) =>
          effect.pipe(
            Effect.provide(context),
            Effect.flip,
            Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die(new Error("it hung")) })
          )
        for (const error of [
          yield* refused(turns.start("run-6", "order-6")),
          yield* refused(turns.decide("run-6", { call_1: Chat.approve("alice") })),
          yield* refused(turns.cancel("run-6"))
        ]) {
          assert.strictEqual(error._tag, "ValidationError")
          assert.include(error.message, 'the durable chat "support" does not run in this process')
          assert.include(error.message, "DurableChat.layerTest")
          assert.include(error.message, 'DurableChat.make("support").layer(agent)')
        }
        // status and await read the run store only, and need no registration.
        assert.include((yield* Effect.flip(Effect.provide(turns.status("run-6"), context))).message, 'no run "run-6"')
      }).pipe(Effect.scoped)
  )

  it.effect("layerPostgresConfig without its variable: VALIDATION naming the variable, before any connection", () =>
    Effect.gen(function* () {
      const build = (variables: Record<string, string>, variable?: string) =>
        Layer.build(
          DurableChat.layerPostgresConfig(variable === undefined ? {} : { variable }).pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(variables)))
          )
        ).pipe(Effect.scoped, Effect.flip)
      const missing = yield* build({})
      assert.strictEqual(missing._tag, "ValidationError")
      assert.include(missing.message, "DATABASE_URL is not set")
      if (missing._tag === "ValidationError")
        assert.deepStrictEqual(
          missing.issues.map((i) => i.path),
          ["DATABASE_URL"]
        )
      const named = yield* build({ DATABASE_URL: "postgres://somewhere/db" }, "AGENTS_PG_URL")
      assert.include(named.message, "AGENTS_PG_URL is not set")
    })
  )
})

describe("DurableChat and tool call ids", () => {
  // A durable run is a chat turn: its ids come from the same assignment. A model that reuses `call_1` in a later
  // step gets a fresh id there, so the later call waits for its own decision and the earlier one never applies.
  it.live(
    "a model that reuses an id in a later step: the later call gets a fresh id and waits for its own decision",
    () =>
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
        yield* run(turns.start("run-ids", "refund both"))
        const first = yield* run(waitFor(turns, "run-ids", "AwaitingApproval"))
        assert.deepStrictEqual(
          first._tag === "AwaitingApproval" ? first.pending.map((p) => [p.toolCallId, p.arguments]) : [],
          [["call_1", { order: "order-0" }]]
        )
        yield* run(turns.decide("run-ids", { call_1: Chat.approve("alice") }))
        const second = yield* run(
          turns.status("run-ids").pipe(
            Effect.tap(() => Effect.sleep("10 millis")),
            Effect.repeat({
              until: (s) =>
                (s._tag === "AwaitingApproval" && s.segment === 1) || s._tag === "Done" || s._tag === "Failed"
            })
          )
        )
        assert.deepStrictEqual(
          second._tag === "AwaitingApproval" ? second.pending.map((p) => [p.toolCallId, p.arguments]) : [second._tag],
          [["call_1_2_0", { order: "order-1" }]]
        )
        assert.deepStrictEqual(refunds, ["order-0"])
        yield* run(turns.decide("run-ids", { call_1_2_0: Chat.reject("alice", "not this one") }))
        const final = yield* run(turns.await("run-ids", { pollInterval: "10 millis" }))
        assert.strictEqual(final._tag, "Done")
        assert.deepStrictEqual(refunds, ["order-0"])
      }).pipe(Effect.scoped)
  )
})

/** Reads the status until it is `tag` (or final). */
const waitFor = (turns: DurableChat.DurableChat, runId: string, tag: RunStore.RunStatus["_tag"]) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("10 millis")),
    Effect.repeat({ until: (s) => s._tag === tag || s._tag === "Done" || s._tag === "Failed" })
  )
