/**
 * Durable runs on Postgres (`@rolecraft/durable`), each proof on a Postgres of
 * its own (or on ROLECRAFT_PG_URL's server, in fresh databases, when set):
 *
 * - a durable turn: two model calls and one tool call, no approval, `start`
 *   → done, one runner (`layerSingle`, in this process), one turn at a time,
 *   against the same turn through `agent.chat` in memory; and an approval
 *   turn (start → paused → decide → done);
 * - turns per second: turns without approval started at once, on one runner
 *   process and on two;
 * - kill one of two runners (test/durable/harness.ts): paused turns, one
 *   runner killed with SIGKILL, every run approved; once killing the first
 *   runner started, once the second (whichever dies); takeover times;
 * - kill a runner while its tools run (test/durable/faults.ts), approved and
 *   not: side effects per key, executions per key, model calls per turn;
 * - Postgres restarted with turns in flight: paused, in a tool, in a model
 *   call; side effects per key, model calls, the answers of every client
 *   operation during the outage.
 *
 * Targets (issue 24): a durable turn p50 ≤ 15 ms; takeover p95 ≤ 5 s
 * whichever runner dies; side effects per key = 1 across a restart and a
 * kill; model calls exactly 2 per turn when a runner is killed. DURABLE_TURNS
 * overrides the number of paused turns of the kill proof (default 200).
 * Every process and Postgres it starts is stopped when it ends or is
 * interrupted (test/durable/cleanup.ts).
 *
 * Run: node --conditions=@rolecraft/source bench/durable.ts
 */
import { PgClient } from "@effect/sql-pg"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { DurableChat, RunStore } from "@rolecraft/durable"
import { Effect, Layer, Redacted } from "effect"
import { freshDatabase as freshDatabaseAt } from "../scripts/postgres.ts"
import { makeAgent, refundModel } from "../packages/durable/test/support/refunds.ts"
import { startPostgres, stopEverything } from "../test/durable/cleanup.ts"
import { cluster, killMidTool, restartWithTurnsInFlight, throughput } from "../test/durable/faults.ts"
import { defaultLocks, type Figures, killOneRunner, percentile } from "../test/durable/harness.ts"
import { isMain, printSection, type Section } from "./report.ts"

const turns = Number(process.env.DURABLE_TURNS ?? 200)
const sequential = 50
const burst = 100

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value >= 100 ? 0 : 1)} ms` : "—")

/** A turn in memory: chat (two model calls, one tool call, no approval); milliseconds per turn. */
const plainTurns = Effect.gen(function* () {
  const agent = yield* makeAgent({ onRefund: () => Effect.void, approval: false })
  const model = refundModel(() => Effect.void)
  const times: Array<number> = []
  for (let i = 0; i < sequential; i++) {
    const t0 = performance.now()
    const done = yield* agent.chat(`order-${i}`).pipe(Effect.provide(model))
    if (done._tag !== "Completed") return yield* Effect.die("the plain turn did not complete")
    times.push(performance.now() - t0)
  }
  return times
}).pipe(Effect.scoped)

/**
 * The same turn through DurableChat on Postgres (single-process layer): `start` → done, one at a time; and the
 * approval turn (start → paused → decide → done). `await` wakes when this process writes the final status.
 */
const durableTurns = (url: string) =>
  Effect.gen(function* () {
    const pg = PgClient.layer({ url: Redacted.make(url) })
    const base = yield* Layer.build(
      Layer.mergeAll(ApprovalStore.layerSql, DurableChat.layerSingle({ shardingConfig: { shardsPerGroup: 30 } })).pipe(
        Layer.provideMerge(pg)
      )
    )
    const plain = yield* makeAgent({ onRefund: () => Effect.void, approval: false }).pipe(Effect.provide(base))
    const gated = yield* makeAgent({ onRefund: () => Effect.void }).pipe(Effect.provide(base))
    const direct = DurableChat.make("bench")
    const approved = DurableChat.make("bench-approval")
    const model = refundModel(() => Effect.void)
    const engine = yield* Layer.build(
      Layer.mergeAll(direct.layer(plain), approved.layer(gated)).pipe(
        Layer.provide(model),
        Layer.provide(Layer.succeedContext(base))
      )
    )
    const provided = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) =>
      Effect.provide(effect, Layer.succeedContext(base).pipe(Layer.merge(Layer.succeedContext(engine))))
    const turn: Array<number> = []
    for (let i = 0; i < sequential; i++) {
      const t0 = performance.now()
      yield* provided(direct.start(`turn-${i}`, `order-${i}`))
      // The run ends on this process's runner: `await` wakes when its status is written, no polling needed.
      const final = yield* provided(direct.await(`turn-${i}`))
      if (final._tag !== "Done") return yield* Effect.die(`the durable turn ended ${final._tag}`)
      turn.push(performance.now() - t0)
    }
    const approval: Array<number> = []
    for (let i = 0; i < sequential / 2; i++) {
      const id = `approval-${i}`
      const t0 = performance.now()
      yield* provided(approved.start(id, `order-${i}`))
      yield* provided(
        approved.status(id).pipe(
          Effect.tap(() => Effect.sleep("5 millis")),
          Effect.repeat({ until: (s) => s._tag === "AwaitingApproval" || RunStore.isFinal(s) })
        )
      )
      yield* provided(approved.decide(id, { call_1: Chat.approve("alice") }))
      const final = yield* provided(approved.await(id))
      if (final._tag !== "Done") return yield* Effect.die(`the durable turn ended ${final._tag}`)
      approval.push(performance.now() - t0)
    }
    return { turn, approval }
  }).pipe(Effect.scoped)

/** A Postgres for a proof: a fresh database on ROLECRAFT_PG_URL's server, else a server of its own. */
const database = async (prefix: string): Promise<{ readonly url: string; readonly stop: () => void }> => {
  const given = process.env.ROLECRAFT_PG_URL
  if (given !== undefined && given !== "") return { url: await freshDatabaseAt(given, prefix), stop: () => {} }
  const pg = await startPostgres()
  return { url: await freshDatabaseAt(pg.url, prefix), stop: pg.stop }
}

const within = async <A>(prefix: string, body: (url: string) => Promise<A>): Promise<A> => {
  const db = await database(prefix)
  try {
    return await body(db.url)
  } finally {
    db.stop()
  }
}

const killRow = (name: string, proof: Figures) => [
  name,
  String(proof.completed),
  `${proof.modelCalls} (${proof.modelCallsBeforeKill})`,
  String(proof.toolRuns),
  String(proof.duplicateToolRuns),
  String(proof.takeoverMs.length),
  ms(Math.min(...proof.takeoverMs)),
  ms(percentile(proof.takeoverMs, 50)),
  ms(percentile(proof.takeoverMs, 95))
]

export const bench = async (): Promise<Section> => {
  try {
    const { turn, approval } = await within("bench_turn", (url) => Effect.runPromise(durableTurns(url)))
    const plain = await Effect.runPromise(plainTurns)
    const perSecond = await within("bench_burst", async (url) => {
      const one = await cluster(url, { runners: 1, env: { TOOL_MS: "0" } })
      const single = await throughput(one, burst).finally(() => one.close())
      return single
    })
    const perSecondTwo = await within("bench_burst_two", async (url) => {
      const two = await cluster(url, { runners: 2, env: { TOOL_MS: "0" } })
      return await throughput(two, burst).finally(() => two.close())
    })
    const first = await within("bench_kill_first", (url) => killOneRunner(url, turns, defaultLocks, 0))
    const second = await within("bench_kill_second", (url) => killOneRunner(url, turns, defaultLocks, 1))
    const midTool = await within("bench_kill_mid_tool", async (url) => {
      const c = await cluster(url, { runners: 2, env: { TOOL_MS: "5000" } })
      return await killMidTool(c, { plain: 20, approved: 20 }).finally(() => c.close())
    })
    const restart = await restartWithTurnsInFlight({
      paused: 20,
      inTool: 15,
      inModel: 15,
      outageMs: 6000,
      toolMs: 4000,
      modelMs: 4000
    })

    const turnP50 = percentile(turn, 50)
    const takeoverP95 = Math.max(percentile(first.takeoverMs, 95), percentile(second.takeoverMs, 95))
    const restartRuns = restart.runs
    const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)
    const restartModelCalls = sum(restartRuns.map((r) => r.modelCalls))
    const restartToolRuns = sum(restartRuns.map((r) => r.toolRuns))
    const restartEffectsOk = restartRuns.every((r) => r.effects === 1 && r.keys === 1)
    const midToolEffectsOk = midTool.runs.every((r) => r.effects === 1 && r.keys === 1)
    const midToolTaken = midTool.runs.filter((r) => r.firstToolPid === midTool.victim)
    const midToolModelOk = midTool.runs.every((r) => r.modelCalls === 2)
    const killOk = (proof: Figures) =>
      proof.completed === turns && proof.modelCalls === 2 * turns && proof.duplicateToolRuns === 0
    // The runs whose effects per key are not 1, named with their figures (none when the target is met).
    const offenders = (
      runs: ReadonlyArray<{ readonly runId: string; readonly effects: number; readonly keys: number }>
    ) =>
      runs
        .filter((r) => r.effects !== 1 || r.keys !== 1)
        .map((r) => `${r.runId}: ${r.effects} effects, ${r.keys} keys`)
        .join("; ")
    const outageTyped = restart.duringOutage.every(([, said]) => said.startsWith("TRANSIENT"))
    return {
      title: "Durable runs on Postgres",
      description:
        `A durable turn (two model calls and one tool call, no approval, start → done) through DurableChat on ` +
        `Postgres (layerSingle, in the bench's process), ${sequential} in sequence, against the same turn in memory; ` +
        `${burst} such turns started at once on one runner process and on two; ${turns} turns paused across two runner ` +
        "processes with one runner killed (SIGKILL), once the first started and once the second, every run approved " +
        "after the kill; 40 turns inside a 5 s tool (20 approved) when a runner is killed; 50 turns in flight (20 " +
        "paused, 15 in a 4 s tool, 15 in a 4 s model call) when Postgres stops for 6 s. The tools and the model " +
        "count their runs and keyed effects in tables of their own.",
      tables: [
        {
          title: "A durable turn",
          columns: ["what", "p50", "p95"],
          rows: [
            ["plain turn in memory (agent.chat)", ms(percentile(plain, 50)), ms(percentile(plain, 95))],
            ["durable turn on Postgres (start → done)", ms(turnP50), ms(percentile(turn, 95))],
            [
              "durable approval turn (start → paused → decide → done)",
              ms(percentile(approval, 50)),
              ms(percentile(approval, 95))
            ]
          ]
        },
        {
          title: "Turns per second",
          columns: ["runners", "turns", "turns/s"],
          rows: [
            ["1", String(burst), perSecond.toFixed(1)],
            ["2", String(burst), perSecondTwo.toFixed(1)]
          ]
        },
        {
          title: "Kill one of two runners (paused runs)",
          columns: [
            "killed",
            "completed",
            "model calls (before the kill)",
            "tool runs",
            "duplicate tool runs",
            "runs taken over",
            "first taken over",
            "takeover p50",
            "takeover p95"
          ],
          rows: [killRow("the first runner", first), killRow("the second runner", second)]
        },
        {
          title: "Kill a runner while its tools run",
          columns: ["turns", "completed", "model calls", "tool runs", "runs taken over", "effects per key", "answers"],
          rows: [
            [
              String(midTool.runs.length),
              String(midTool.runs.filter((r) => r.state === "Done").length),
              String(sum(midTool.runs.map((r) => r.modelCalls))),
              `${sum(midTool.runs.map((r) => r.toolRuns))} (${midToolTaken.length} run again)`,
              String(midToolTaken.length),
              midToolEffectsOk ? "1" : `not 1 (${offenders(midTool.runs)})`,
              midTool.runs.every((r) => r.toolAnswer.startsWith("refunded") || r.toolAnswer.startsWith("shipped"))
                ? "all done"
                : "some refused"
            ]
          ]
        },
        {
          title: "Postgres stopped for 6 s with turns in flight",
          columns: [
            "turns",
            "completed",
            "model calls",
            "tool runs",
            "effects per key",
            "recovered",
            "during the outage"
          ],
          rows: [
            [
              String(restartRuns.length),
              String(restartRuns.filter((r) => r.state === "Done").length),
              String(restartModelCalls),
              String(restartToolRuns),
              restartEffectsOk ? "1" : `not 1 (${offenders(restartRuns)})`,
              ms(restart.recoveredMs),
              outageTyped ? "every operation TRANSIENT" : restart.duringOutage.map(([n, s]) => `${n}: ${s}`).join("; ")
            ]
          ]
        }
      ],
      targets: [
        {
          name: "durable turn p50",
          limit: "≤ 15 ms (two model calls, one tool call, no approval, start → done, one runner)",
          measured: ms(turnP50),
          met: turnP50 <= 15
        },
        {
          name: "takeover p95",
          limit: "≤ 5 s whichever runner dies",
          measured: `${ms(percentile(first.takeoverMs, 95))} (first killed), ${ms(percentile(second.takeoverMs, 95))} (second killed)`,
          met: takeoverP95 <= 5_000
        },
        {
          name: "kill one runner",
          limit: `all ${turns} complete, model calls exactly ${2 * turns}, duplicate tool runs 0, either runner`,
          measured: [first, second]
            .map((p) => `${p.completed} complete, ${p.modelCalls} model calls, ${p.duplicateToolRuns} duplicates`)
            .join("; "),
          met: killOk(first) && killOk(second)
        },
        {
          name: "side effects per key across a restart and a kill",
          limit: "1 for every tool that uses the key",
          measured: `restart: ${restartEffectsOk ? 1 : "not 1"}, kill mid-tool: ${midToolEffectsOk ? 1 : "not 1"}`,
          met: restartEffectsOk && midToolEffectsOk && midToolModelOk
        },
        {
          name: "model calls across a Postgres restart",
          limit: "may repeat (reported)",
          measured: `${restartModelCalls} for ${restartRuns.length} turns (${restartModelCalls - 2 * restartRuns.length} repeated)`,
          met: undefined
        }
      ],
      notes: [
        "A durable turn's steps are recorded in the run store's journal (one INSERT per model call and per tool " +
          "call), not as engine activities; the engine owns the run (its runner, replays, wake-ups). `await` wakes at " +
          "once when the run ends on this process's runner (its 200 ms poll is for runs ending elsewhere); the " +
          "approval turn reads the status every 5 ms until it pauses.",
        "Turns per second on two runners share the bench machine's two cores with Postgres and the client: two " +
          "runners are not expected to be faster here.",
        "Every paused run is approved at once when the runner is killed, so a taken-over run's time from the kill to " +
          "its tool run includes waiting behind the other runs on the surviving runner.",
        "A tool that was running when its runner died runs again on the survivor, with the same idempotency key: " +
          "its effect is taken once (the tool deduplicates by the key), its execution counted twice. A step that " +
          "finished, even while Postgres was down, is recorded and never run again.",
        `Shard settings of every process: shardsPerGroup 30, lock expiration ${defaultLocks.expirationMs / 1000} s, ` +
          `refresh ${defaultLocks.refreshMs / 1000} s, message poll 1 s, assignment refresh 1 s, runner health ` +
          "check 1 s (Effect's defaults: 300, 35 s, 10 s, 10 s, 3 s, 1 min)."
      ]
    }
  } finally {
    stopEverything()
  }
}

if (isMain(import.meta)) await printSection(bench)
