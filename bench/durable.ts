/**
 * Durable runs on Postgres (`@rolecraft/durable`):
 *
 * - the multi-process proof with 200 turns (test/durable/harness.ts): two
 *   runner processes, every turn paused on an approval-gated tool, one
 *   runner killed with SIGKILL, every run approved from a client process;
 *   the takeover time (kill → the tool run of a run the dead runner held,
 *   on the survivor) p50/p95 and the throughput from the first decision to
 *   the last completion;
 * - a turn's overhead: one approval turn (chat → paused → approve → done)
 *   through `DurableChat` on Postgres (single-process layer), against the
 *   same turn through `agent.chat` and `agent.resume` in memory.
 *
 * Target (issues 14, 16): takeover p95 ≤ 10 s with the test's shard settings.
 * Starts its own Postgres 15 unless ROLECRAFT_PG_URL is set. DURABLE_TURNS,
 * DURABLE_LOCK_EXPIRATION_MS and DURABLE_LOCK_REFRESH_MS override the number of
 * turns and the shard lock settings.
 *
 * Run: node --conditions=@rolecraft/source bench/durable.ts
 */
import { PgClient } from "@effect/sql-pg"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { DurableChat, RunStore } from "@rolecraft/durable"
import { Effect, Layer, Redacted } from "effect"
import { freshDatabase as freshDatabaseAt, start, stop } from "../scripts/postgres.ts"
import { defaultLocks, killOneRunner, percentile } from "../test/durable/harness.ts"
import { makeAgent, refundModel } from "../packages/durable/test/support/refunds.ts"
import { isMain, printSection, type Section } from "./report.ts"

const turns = Number(process.env.DURABLE_TURNS ?? 200)
// The shard lock settings of the proof (see test/durable/harness.ts); override to compare, e.g. Effect's 35 s / 10 s.
const locks = {
  expirationMs: Number(process.env.DURABLE_LOCK_EXPIRATION_MS ?? defaultLocks.expirationMs),
  refreshMs: Number(process.env.DURABLE_LOCK_REFRESH_MS ?? defaultLocks.refreshMs)
}
const overheadTurns = 30

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value >= 100 ? 0 : 1)} ms` : "—")

/** One approval turn in memory: chat, resume; milliseconds per turn (median). */
const plainTurns = Effect.gen(function* () {
  const agent = yield* makeAgent({ onRefund: () => Effect.void })
  const model = refundModel(() => Effect.void)
  const times: Array<number> = []
  for (let i = 0; i < overheadTurns; i++) {
    const t0 = performance.now()
    const paused = yield* agent.chat(`order-${i}`).pipe(Effect.provide(model))
    if (paused._tag !== "AwaitingApproval") return yield* Effect.die("the plain turn did not pause")
    const done = yield* agent.resume(paused.state, { call_1: Chat.approve("alice") }).pipe(Effect.provide(model))
    if (done._tag !== "Completed") return yield* Effect.die("the plain turn did not complete")
    times.push(performance.now() - t0)
  }
  return times
}).pipe(Effect.scoped)

/** The same turn through DurableChat on Postgres (single-process layer), status read every 5 ms. */
const durableTurns = (url: string) =>
  Effect.gen(function* () {
    const pg = PgClient.layer({ url: Redacted.make(url) })
    const base = yield* Layer.build(
      Layer.mergeAll(ApprovalStore.layerSql, DurableChat.layerSingle({ shardingConfig: { shardsPerGroup: 30 } })).pipe(
        Layer.provideMerge(pg)
      )
    )
    const agent = yield* makeAgent({ onRefund: () => Effect.void }).pipe(Effect.provide(base))
    const support = DurableChat.make("bench")
    const engine = yield* Layer.build(
      support
        .layer(agent)
        .pipe(Layer.provide(refundModel(() => Effect.void)), Layer.provide(Layer.succeedContext(base)))
    )
    const times: Array<number> = []
    const poll = { pollInterval: "5 millis" } as const
    const provided = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) =>
      Effect.provide(effect, Layer.succeedContext(base).pipe(Layer.merge(Layer.succeedContext(engine))))
    for (let i = 0; i < overheadTurns; i++) {
      const id = `bench-${i}`
      const t0 = performance.now()
      yield* provided(support.start(id, `order-${i}`))
      yield* provided(
        support.status(id).pipe(
          Effect.tap(() => Effect.sleep("5 millis")),
          Effect.repeat({ until: (s) => s._tag === "AwaitingApproval" || RunStore.isFinal(s) })
        )
      )
      yield* provided(support.decide(id, { call_1: Chat.approve("alice") }))
      const final = yield* provided(support.await(id, poll))
      if (final._tag !== "Done") return yield* Effect.die(`the durable turn ended ${final._tag}`)
      times.push(performance.now() - t0)
    }
    return times
  }).pipe(Effect.scoped)

export const bench = async (): Promise<Section> => {
  const given = process.env.ROLECRAFT_PG_URL
  const pg = given === undefined || given === "" ? await start() : undefined
  const base = given ?? pg?.url ?? ""
  try {
    const proof = await killOneRunner(await freshDatabaseAt(base, "bench_kill"), turns, locks)
    const plain = await Effect.runPromise(plainTurns)
    const durable = await Effect.runPromise(
      Effect.flatMap(
        Effect.promise(() => freshDatabaseAt(base, "bench_turn")),
        durableTurns
      )
    )
    const takeoverP95 = percentile(proof.takeoverMs, 95)
    const plainP50 = percentile(plain, 50)
    const durableP50 = percentile(durable, 50)
    return {
      title: "Durable runs on Postgres",
      description:
        `${turns} turns paused on an approval-gated tool across two runner processes; one runner killed with SIGKILL ` +
        "while all were paused; every run approved from a client process. Takeover: from the kill to the tool run " +
        "of each run the dead runner held. Overhead: one approval turn through DurableChat on Postgres (single " +
        `process) against agent.chat + agent.resume in memory, ${overheadTurns} turns in sequence.`,
      tables: [
        {
          title: "Kill one of two runners",
          columns: [
            "turns",
            "completed",
            "model calls (before the kill)",
            "tool runs",
            "duplicate tool runs",
            "runs taken over"
          ],
          rows: [
            [
              String(proof.turns),
              String(proof.completed),
              `${proof.modelCalls} (${proof.modelCallsBeforeKill})`,
              String(proof.toolRuns),
              String(proof.duplicateToolRuns),
              String(proof.takeoverMs.length)
            ]
          ]
        },
        {
          title: "Times",
          columns: ["what", "p50", "p95"],
          rows: [
            ["first taken-over run done (kill → its tool run)", ms(Math.min(...proof.takeoverMs)), "—"],
            [
              "taken-over runs (kill → tool run on the survivor)",
              ms(percentile(proof.takeoverMs, 50)),
              ms(takeoverP95)
            ],
            [
              "survivor's own runs (decision → tool run)",
              ms(percentile(proof.survivorMs, 50)),
              ms(percentile(proof.survivorMs, 95))
            ],
            ["plain turn in memory (chat + resume)", ms(plainP50), ms(percentile(plain, 95))],
            ["durable turn on Postgres (start → paused → decide → done)", ms(durableP50), ms(percentile(durable, 95))]
          ]
        },
        {
          title: "Throughput",
          columns: ["what", "figure"],
          rows: [
            ["paused (start of all runs → all paused)", `${(turns / (proof.pausedMs / 1000)).toFixed(1)} turns/s`],
            ["approved (first decision → all done)", `${(turns / (proof.approvedToDoneMs / 1000)).toFixed(1)} turns/s`],
            ["overhead of a durable turn over a plain one", ms(durableP50 - plainP50)]
          ]
        }
      ],
      targets: [
        {
          name: "takeover p95",
          limit: "≤ 10 s with the test's shard settings",
          measured: `${ms(takeoverP95)} (lock expiration ${locks.expirationMs} ms, refresh ${locks.refreshMs} ms)`,
          met: takeoverP95 <= 10_000
        },
        {
          name: "kill one runner",
          limit: `all ${turns} complete, model calls exactly ${2 * turns}, duplicate tool runs 0`,
          measured: `${proof.completed} complete, ${proof.modelCalls} model calls, ${proof.duplicateToolRuns} duplicates`,
          met: proof.completed === turns && proof.modelCalls === 2 * turns && proof.duplicateToolRuns === 0
        }
      ],
      notes: [
        "Every run is approved at once when the runner is killed, so a run's time from the kill to its tool run " +
          "includes waiting behind the other runs on the one surviving runner: compare the taken-over runs with " +
          "the survivor's own, and see the first taken-over run for the takeover itself.",
        "Model calls before the kill above the number of turns are first model calls run twice while the runs " +
          "paused: on a loaded machine a runner's shard lock refresh can time out, and the runner then gives up " +
          "its shards and its in-flight activities run again elsewhere (at-least-once, by Effect's design).",
        "The durable turn's time includes reading the stored status every 5 ms until it pauses and until it is done.",
        `Shard settings of every process: shardsPerGroup 30, lock expiration ${locks.expirationMs / 1000} s, refresh ${locks.refreshMs / 1000} s, message poll 1 s, ` +
          "assignment refresh 1 s, runner health check 1 s (Effect's defaults: 300, 35 s, 10 s, 10 s, 3 s, 1 min).",
        "The takeover does not wait for the lock expiration: every runner pings the others each health check " +
          "(layerCluster's runner watch) and records the killed one unhealthy within seconds, and the kill has freed " +
          "its Postgres advisory locks. Decisions go out all at once: a decision for a run the killed runner held " +
          "returns only once the run has a new owner."
      ]
    }
  } finally {
    if (pg !== undefined) stop(pg.dir)
  }
}

if (isMain(import.meta)) await printSection(bench)
