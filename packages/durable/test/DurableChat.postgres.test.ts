import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { freshDatabase } from "../../../test/setup/postgresUrl.ts"
import { DurableChat, RunStore } from "../src/index.ts"
import { makeAgent, refundModel } from "./support/refunds.ts"

// Lowered so a test waits seconds, not minutes (Effect's defaults suit production: 10 s polls, 35 s locks).
const shardingConfig = {
  shardsPerGroup: 30,
  entityMessagePollInterval: "500 millis",
  shardLockRefreshInterval: "1 second",
  shardLockExpiration: "5 seconds"
} as const

/** One "process": its own Postgres pool, approval store, agent and single-runner engine, closed with the scope. */
const process = (url: string, counts: { model: number; refunds: Array<string> }) =>
  Effect.gen(function* () {
    const pg = PgClient.layer({ url: Redacted.make(url) })
    const base = Layer.mergeAll(ApprovalStore.layerSql, DurableChat.layerSingle({ shardingConfig })).pipe(
      Layer.provideMerge(pg)
    )
    const context = yield* Layer.build(base)
    const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void counts.refunds.push(order)) }).pipe(
      Effect.provide(context)
    )
    const turns = DurableChat.make("support")
    const full = yield* Layer.build(
      turns
        .layer(agent)
        .pipe(
          Layer.provide(refundModel(() => Effect.sync(() => void counts.model++))),
          Layer.provide(Layer.succeedContext(context))
        )
    )
    return <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof base>>) =>
      Effect.provide(effect, Layer.succeedContext(context).pipe(Layer.merge(Layer.succeedContext(full))))
  })

const waitFor = (turns: DurableChat.DurableChat, runId: string, tag: RunStore.RunStatus["_tag"]) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("20 millis")),
    Effect.repeat({ until: (s) => s._tag === tag || RunStore.isFinal(s) })
  )

describe("DurableChat on Postgres (single-process layer)", () => {
  it.live(
    "a run paused in one process is decided and finished in the next, without running its finished model call again",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("durable_single")
        const turns = DurableChat.make("support")
        const counts = { model: 0, refunds: [] as Array<string> }
        const paused = yield* Effect.scoped(
          Effect.gen(function* () {
            const run = yield* process(url, counts)
            yield* run(turns.start("run-a", "order-1"))
            return yield* run(waitFor(turns, "run-a", "AwaitingApproval"))
          })
        )
        assert.strictEqual(paused._tag, "AwaitingApproval")
        assert.deepStrictEqual([counts.model, counts.refunds], [1, []])
        // The first process is gone (its pool, engine and agent closed); a second one picks the run up.
        const final = yield* Effect.scoped(
          Effect.gen(function* () {
            const run = yield* process(url, counts)
            assert.deepStrictEqual(yield* run(turns.status("run-a")), paused)
            yield* run(turns.decide("run-a", { call_1: Chat.approve("alice") }))
            return yield* run(turns.await("run-a", { pollInterval: "50 millis" }))
          })
        )
        if (final._tag !== "Done" || final.result._tag !== "Completed") return assert.fail(JSON.stringify(final))
        assert.strictEqual(final.result.text, "Done: refunded order-1")
        assert.deepStrictEqual([counts.model, counts.refunds], [2, ["order-1"]])
      }),
    60_000
  )

  it.live(
    "an approver process with layerSingle and no agent layer is refused at once (VALIDATION saying what to provide), not left hanging",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("durable_approver")
        const turns = DurableChat.make("support")
        const counts = { model: 0, refunds: [] as Array<string> }
        yield* Effect.scoped(
          Effect.gen(function* () {
            const run = yield* process(url, counts)
            yield* run(turns.start("run-b", "order-2"))
            yield* run(waitFor(turns, "run-b", "AwaitingApproval"))
          })
        )
        // The approver: the same database (its URL read from DATABASE_URL) and engine layer, but not the chat's
        // layer (no agent, no model).
        const error = yield* Effect.scoped(
          Effect.gen(function* () {
            const approver = yield* Layer.build(
              DurableChat.layerSingle({ shardingConfig }).pipe(
                Layer.provideMerge(DurableChat.layerPostgresConfig()),
                Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: url })))
              )
            )
            assert.strictEqual((yield* Effect.provide(turns.status("run-b"), approver))._tag, "AwaitingApproval")
            return yield* turns
              .decide("run-b", { call_1: Chat.approve("alice") })
              .pipe(
                Effect.provide(approver),
                Effect.flip,
                Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.die(new Error("decide hung")) })
              )
          })
        )
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, 'the durable chat "support" does not run in this process')
        assert.include(error.message, "DurableChat.layerSingle")
        assert.deepStrictEqual([counts.model, counts.refunds], [1, []])
      }),
    60_000
  )
})
