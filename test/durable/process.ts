// One process of the multi-process proofs (test/durable/kill-runner.test.ts, test/durable/faults.test.ts) and of
// bench/durable.ts, all on one Postgres database:
//
//   node --conditions=@rolecraft/source test/durable/process.ts runner URL PORT   runs turns; prints "ready PID"
//   node --conditions=@rolecraft/source test/durable/process.ts start URL N       starts N runs, waits until all pause
//   node --conditions=@rolecraft/source test/durable/process.ts approve URL N     approves every run, waits until done
//   node --conditions=@rolecraft/source test/durable/process.ts decide URL IDS VERDICT APPROVER
//        on "go" (stdin) decides call_1 of every run in IDS (comma-separated) at once, with VERDICT approve or
//        reject; prints each answer
//
// Every model call and every tool run is recorded in Postgres by the model and the tools themselves, with the process
// id and the database's clock (./agent.ts), so the test counts them across processes. Clients print one JSON line.
import { PgClient } from "@effect/sql-pg"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { DurableChat, type RunStore } from "@rolecraft/durable"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { WorkflowEngine } from "effect/workflow"
import { makeAgent, model, recordTables } from "./agent.ts"
import { shardingConfigOf } from "./harness.ts"

/** The shard settings every process uses; the lock settings come from the harness (harness.ts, `defaultLocks`). */
const shardingConfig = shardingConfigOf({
  expirationMs: Number(process.env.SHARD_LOCK_EXPIRATION_MS ?? 35_000),
  refreshMs: Number(process.env.SHARD_LOCK_REFRESH_MS ?? 10_000)
})

const turns = DurableChat.make("support")

const [mode = "", url = "", arg = "", verdict = "", approver = ""] = process.argv.slice(2)

const runIds = (n: number) => Array.from({ length: n }, (_, i) => `run-${i}`)

const countDone = (sql: SqlClient.SqlClient, state: string) =>
  Effect.map(
    sql<{ readonly n: string }>`SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = ${state}`,
    (rows) => Number(rows[0]?.n ?? 0)
  )

const waitUntil = (sql: SqlClient.SqlClient, state: string, n: number) =>
  countDone(sql, state).pipe(
    Effect.tap(() => Effect.sleep("100 millis")),
    Effect.repeat({ until: (count) => count >= n })
  )

const pg = PgClient.layer({ url: Redacted.make(url), maxConnections: 30 })

const runner = (port: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* recordTables(sql)
    const agent = yield* makeAgent(sql)
    yield* Layer.launch(
      turns.layer(agent).pipe(
        Layer.provide(model(sql)),
        Layer.provideMerge(DurableChat.layerCluster({ runner: { host: "127.0.0.1", port }, shardingConfig })),
        Layer.tap(() => Effect.sync(() => console.log(`ready ${process.pid}`)))
      )
    )
  }).pipe(Effect.scoped, Effect.provide(ApprovalStore.layerSql.pipe(Layer.provideMerge(pg))))

const client = (
  body: (
    sql: SqlClient.SqlClient
  ) => Effect.Effect<unknown, unknown, WorkflowEngine.WorkflowEngine | RunStore.RunStore | SqlClient.SqlClient>
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* recordTables(sql)
    const out = yield* body(sql)
    console.log(JSON.stringify(out))
  }).pipe(Effect.provide(DurableChat.layerCluster({ shardingConfig }).pipe(Layer.provideMerge(pg))))

const start = (n: number) =>
  client((sql) =>
    Effect.gen(function* () {
      const t0 = Date.now()
      yield* Effect.forEach(runIds(n), (id) => turns.start(id, id), { concurrency: 4, discard: true })
      const started = Date.now()
      yield* waitUntil(sql, "AwaitingApproval", n)
      return { started: n, startMs: started - t0, pausedMs: Date.now() - t0 }
    })
  )

/** Resolves on the first line on stdin: the test kills a runner, then says go. */
const go = Effect.callback<void>((resume) => {
  process.stdin.once("data", () => resume(Effect.void))
})

const approve = (n: number) =>
  client((sql) =>
    Effect.gen(function* () {
      console.log("ready")
      yield* go
      const t0 = Date.now()
      // Every run approved at once, as independent approvers would: a decision for a run the killed runner held waits
      // until the run has a new owner, and with a bounded pool those waits held back the survivor's own decisions.
      yield* Effect.forEach(
        runIds(n),
        (id) =>
          Effect.flatMap(turns.status(id), (status) =>
            status._tag === "AwaitingApproval"
              ? turns.decide(id, Object.fromEntries(status.pending.map((p) => [p.toolCallId, Chat.approve("alice")])))
              : Effect.void
          ),
        { concurrency: "unbounded", discard: true }
      )
      const decided = Date.now()
      yield* waitUntil(sql, "Done", n)
      return { approved: n, decideMs: decided - t0, doneMs: Date.now() - t0, t0 }
    })
  )

/** What one decision answered: "ok", or the failure's category and message. */
const answerOf = (exit: Exit.Exit<void, { readonly category: string; readonly message: string }>) =>
  Exit.isSuccess(exit)
    ? "ok"
    : Option.match(Exit.findErrorOption(exit), {
        onNone: () => `defect: ${Cause.pretty(exit.cause)}`,
        onSome: (error) => `${error.category}: ${error.message}`
      })

const decide = (ids: ReadonlyArray<string>, decision: Chat.Decision) =>
  client(() =>
    Effect.gen(function* () {
      console.log("ready")
      yield* go
      const answers = yield* Effect.forEach(
        ids,
        (id) => Effect.map(Effect.exit(turns.decide(id, { call_1: decision })), answerOf),
        { concurrency: "unbounded" }
      )
      return Object.fromEntries(ids.map((id, i) => [id, answers[i]]))
    })
  )

const main =
  mode === "runner"
    ? runner(Number(arg))
    : mode === "start"
      ? start(Number(arg))
      : mode === "approve"
        ? approve(Number(arg))
        : mode === "decide"
          ? decide(arg.split(","), verdict === "approve" ? Chat.approve(approver) : Chat.reject(approver, "no"))
          : Effect.die(`unknown mode ${mode}`)

Effect.runPromise(main as Effect.Effect<unknown, unknown>).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
