// The fault harness of durable runs, shared by test/durable/faults.test.ts (small, bounded for two shared cores) and
// bench/durable.ts (the long variants): runner processes (./process.ts) and the test's own cluster client on a
// Postgres of the harness's own (scripts/postgres.ts), restarted or left alone; runners killed with SIGKILL; two
// processes deciding the same calls at once. The tools and the model count what they do in tables of their own
// (./agent.ts); every figure comes from what Postgres recorded, every answer of a client operation is kept as
// "ok", its category and message, or "defect".
import { PgClient } from "@effect/sql-pg"
import { Chat } from "@rolecraft/core"
import { DurableChat, type RunStore } from "@rolecraft/durable"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Option, Redacted, Schedule } from "effect"
import type { SqlClient } from "effect/sql"
import * as Postgres from "../../scripts/postgres.ts"
import { startPostgres } from "./cleanup.ts"
import {
  defaultLocks,
  freePort,
  type LockSettings,
  type Proc,
  query,
  shardingConfigOf,
  spawnProcess
} from "./harness.ts"

export const turns = DurableChat.make("support")

/** What a client operation answered: "ok", "CATEGORY: message", or "defect: …". */
export const answerOf = (exit: Exit.Exit<unknown, { readonly category: string; readonly message: string }>): string =>
  Exit.isSuccess(exit)
    ? "ok"
    : Option.match(Exit.findErrorOption(exit), {
        onNone: () => `defect: ${Cause.pretty(exit.cause).split("\n")[0]}`,
        onSome: (error) => `${error.category}: ${error.message}`
      })

/** Runner processes and a client (this process) on one database. */
export interface Cluster {
  readonly url: string
  readonly runners: ReadonlyArray<Proc>
  /** Runs a client operation here (a cluster client of the same database), keeping its answer. */
  readonly call: <A, E extends { readonly category: string; readonly message: string }>(
    effect: Effect.Effect<A, E, DurableChat.Services>
  ) => Promise<Exit.Exit<A, E>>
  readonly spawn: (args: ReadonlyArray<string>) => Proc
  readonly logs: () => string
  readonly close: () => Promise<void>
}

/** Starts `runners` runner processes on `url` and a client here. `env` goes to every process (TOOL_MS, MODEL_MS). */
export const cluster = async (
  url: string,
  options: { readonly runners: number; readonly env?: Readonly<Record<string, string>>; readonly locks?: LockSettings }
): Promise<Cluster> => {
  const locks = options.locks ?? defaultLocks
  const procs: Array<Proc> = []
  const spawn = (args: ReadonlyArray<string>) => {
    const proc = spawnProcess(args, locks, options.env)
    procs.push(proc)
    return proc
  }
  const runners: Array<Proc> = []
  for (let i = 0; i < options.runners; i++) runners.push(spawn(["runner", url, String(await freePort())]))
  const close = async () => {
    for (const proc of procs) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL")
    }
    await Promise.all(procs.map((p) => p.exited))
  }
  try {
    await Promise.all(runners.map((r) => r.line(/^ready/)))
  } catch (error) {
    await close()
    throw error
  }
  const client = ManagedRuntime.make(
    DurableChat.layerCluster({ shardingConfig: shardingConfigOf(locks) }).pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) }))
    )
  )
  return {
    url,
    runners,
    // The layer's own build failure is the only other error: it fails every call, before any operation runs.
    call: <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) =>
      client.runPromiseExit(effect) as Promise<Exit.Exit<A, E>>,
    spawn,
    logs: () => procs.map((p) => p.output()).join("\n----\n"),
    close: async () => {
      await client.dispose().catch(() => undefined)
      await close()
    }
  }
}

const count = (sql: SqlClient.SqlClient, text: string) =>
  Effect.map(sql.unsafe<{ readonly n: string }>(text), (rows) => Number(rows[0]?.n ?? 0))

/** Waits (reading Postgres every 100 ms, at most `withinMs`) until `statement` counts `n` or more. */
export const waitCount = async (url: string, statement: string, n: number, withinMs = 60_000): Promise<number> =>
  query(url, (sql) =>
    count(sql, statement).pipe(
      Effect.retry(Schedule.spaced("200 millis")),
      Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (found) => found >= n }),
      Effect.timeoutOrElse({
        duration: withinMs,
        orElse: () =>
          Effect.flatMap(count(sql, statement), (found) =>
            Effect.fail(new Error(`waited ${withinMs} ms for ${n} of: ${statement} (found ${found})`))
          )
      })
    )
  )

/** Starts every run (run id = input), four at a time, from this process. */
export const startAll = async (c: Cluster, ids: ReadonlyArray<string>): Promise<void> => {
  const exit = await c.call(Effect.forEach(ids, (id) => turns.start(id, id), { concurrency: 4, discard: true }))
  if (Exit.isFailure(exit)) throw new Error(`start failed: ${answerOf(exit)}`)
}

/** Approves call_1 of every run, retrying a TRANSIENT answer (a database just back) for up to 30 s. */
export const approveAll = async (c: Cluster, ids: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const exits = await Promise.all(
    ids.map((id) =>
      c.call(
        turns.decide(id, { call_1: Chat.approve("alice") }).pipe(
          Effect.retry({
            while: (e) => e.category === "TRANSIENT",
            schedule: Schedule.spaced("250 millis"),
            times: 120
          })
        )
      )
    )
  )
  return exits.map(answerOf)
}

/** Per run: model calls, tool executions, distinct keys, effects, its status row's state and its tool answer. */
export interface RunFigures {
  readonly runId: string
  readonly modelCalls: number
  readonly toolRuns: number
  readonly keys: number
  readonly effects: number
  /** The process that ran its tool first. */
  readonly firstToolPid: number | undefined
  readonly state: string
  readonly toolAnswer: string
}

/** What Postgres recorded of every run in `ids`. */
export const figuresOf = (url: string, ids: ReadonlyArray<string>): Promise<ReadonlyArray<RunFigures>> =>
  query(url, (sql) =>
    Effect.forEach(ids, (id) =>
      Effect.gen(function* () {
        const n = (text: string) => count(sql, text)
        const literal = `'${id.replaceAll("'", "''")}'`
        const first = yield* sql.unsafe<{ readonly pid: number }>(
          `SELECT pid FROM harness_tool_runs WHERE run_id = ${literal} ORDER BY at LIMIT 1`
        )
        const row = yield* sql.unsafe<{ readonly state: string; readonly body: string }>(
          `SELECT state, body FROM rolecraft_durable_runs WHERE run_id = ${literal}`
        )
        const status = row[0] === undefined ? undefined : (JSON.parse(row[0].body) as RunStore.RunStatus)
        const toolAnswer =
          status?._tag === "Done" && status.result._tag !== "AwaitingApproval"
            ? (status.result.messages.find((m) => m.role === "tool")?.content ?? "")
            : ""
        return {
          runId: id,
          modelCalls: yield* n(`SELECT count(*) AS n FROM harness_model_calls WHERE run_id = ${literal}`),
          toolRuns: yield* n(`SELECT count(*) AS n FROM harness_tool_runs WHERE run_id = ${literal}`),
          keys: yield* n(
            `SELECT count(DISTINCT idempotency_key) AS n FROM harness_tool_runs WHERE run_id = ${literal}`
          ),
          effects: yield* n(`SELECT count(*) AS n FROM harness_effects WHERE run_id = ${literal}`),
          firstToolPid: first[0]?.pid,
          state: row[0]?.state ?? "missing",
          toolAnswer
        }
      })
    )
  )

const done = (ids: ReadonlyArray<string>) =>
  `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state IN ('Done', 'Failed', 'Cancelled') AND run_id IN (${ids
    .map((id) => `'${id}'`)
    .join(", ")})`

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

// ---------------------------------------------------------------------------------------------------------------
// Postgres restarted with turns in flight
// ---------------------------------------------------------------------------------------------------------------

export interface RestartFigures {
  readonly runs: ReadonlyArray<RunFigures>
  readonly paused: ReadonlyArray<string>
  readonly inTool: ReadonlyArray<string>
  readonly inModel: ReadonlyArray<string>
  /** Each client operation tried while Postgres was down, and its answer. */
  readonly duringOutage: ReadonlyArray<readonly [string, string]>
  readonly approvals: ReadonlyArray<string>
  /** From Postgres stopping to every run ended (ms). */
  readonly recoveredMs: number
  readonly logs: string
}

/**
 * Starts a Postgres of its own and two runners; `paused` runs pause for approval, `inTool` runs are inside a slow
 * tool, `inModel` runs inside a slow first model call; Postgres is stopped (fast shutdown: every connection closed)
 * for `outageMs`, and every client operation is tried meanwhile; it starts again, every paused run is approved, and
 * every run is waited for. Stops every process and the Postgres before it returns.
 */
export const restartWithTurnsInFlight = async (options: {
  readonly paused: number
  readonly inTool: number
  readonly inModel: number
  readonly outageMs: number
  readonly toolMs: number
  readonly modelMs: number
}): Promise<RestartFigures> => {
  const pg = await startPostgres()
  try {
    const c = await cluster(pg.url, {
      runners: 2,
      env: { TOOL_MS: String(options.toolMs), MODEL_MS: String(options.modelMs) }
    })
    try {
      const paused = ids("approve", options.paused)
      const inTool = ids("tool-slow", options.inTool)
      const inModel = ids("model-slow", options.inModel)
      await startAll(c, [...paused, ...inTool, ...inModel])
      const quoted = (list: ReadonlyArray<string>) => list.map((id) => `'${id}'`).join(", ")
      await waitCount(
        pg.url,
        `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'AwaitingApproval' AND run_id IN (${quoted(paused)})`,
        paused.length
      )
      await waitCount(
        pg.url,
        `SELECT count(*) AS n FROM harness_tool_runs WHERE run_id LIKE 'tool-slow:%'`,
        inTool.length
      )
      await waitCount(
        pg.url,
        `SELECT count(*) AS n FROM harness_model_calls WHERE run_id LIKE 'model-slow:%'`,
        inModel.length
      )
      const stopped = Date.now()
      Postgres.halt(pg)
      const first = paused[0] ?? "approve:0"
      const duringOutage: Array<readonly [string, string]> = []
      const tried = <A, E extends { readonly category: string; readonly message: string }>(
        name: string,
        effect: Effect.Effect<A, E, DurableChat.Services>
      ) => c.call(effect).then((exit) => void duringOutage.push([name, answerOf(exit)]))
      await tried("start", turns.start("late:0", "late:0"))
      await tried("status", turns.status(first))
      await tried("decide", turns.decide(first, { call_1: Chat.approve("alice") }))
      await tried("cancel", turns.cancel(first))
      await tried("await", turns.await(first))
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.outageMs - (Date.now() - stopped))))
      Postgres.restart(pg)
      const approvals = await approveAll(c, paused)
      const all = [...paused, ...inTool, ...inModel]
      await waitCount(pg.url, done(all), all.length, 120_000)
      const recoveredMs = Date.now() - stopped
      return {
        runs: await figuresOf(pg.url, all),
        paused,
        inTool,
        inModel,
        duringOutage,
        approvals,
        recoveredMs,
        logs: c.logs()
      }
    } finally {
      await c.close()
    }
  } finally {
    pg.stop()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// kill -9 of a runner while its tools run
// ---------------------------------------------------------------------------------------------------------------

export interface KillFigures {
  readonly runs: ReadonlyArray<RunFigures>
  readonly victim: number
  readonly approvals: ReadonlyArray<string>
  /** From the kill to every run ended (ms). */
  readonly recoveredMs: number
  readonly logs: string
}

/**
 * On cluster `c` (two runners): `approved` runs pause for approval and are approved, `plain` runs need none; both
 * kinds then sit in a slow tool, which has taken its effect; the first runner is killed with SIGKILL; every run is
 * waited for. The runs the dead runner held run their tool again on the other, with the same key.
 */
export const killMidTool = async (
  c: Cluster,
  options: { readonly plain: number; readonly approved: number }
): Promise<KillFigures> => {
  const approved = ids("approve-slow", options.approved)
  const plain = ids("tool-slow", options.plain)
  await startAll(c, approved)
  await waitCount(
    c.url,
    `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'AwaitingApproval' AND run_id LIKE 'approve-slow:%'`,
    approved.length
  )
  await startAll(c, plain)
  const approvals = await approveAll(c, approved)
  const all = [...approved, ...plain]
  await waitCount(
    c.url,
    `SELECT count(DISTINCT run_id) AS n FROM harness_tool_runs WHERE run_id LIKE '%-slow:%'`,
    all.length
  )
  const victim = c.runners[0]
  if (victim === undefined) throw new Error("no runner to kill")
  victim.child.kill("SIGKILL")
  const killed = Date.now()
  await waitCount(c.url, done(all), all.length, 120_000)
  return {
    runs: await figuresOf(c.url, all),
    victim: victim.child.pid ?? 0,
    approvals,
    recoveredMs: Date.now() - killed,
    logs: c.logs()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Two processes deciding the same calls at once
// ---------------------------------------------------------------------------------------------------------------

export interface DecideFigures {
  readonly runs: ReadonlyArray<RunFigures>
  /** Per run: what the approver (alice) and the rejecter (bob) were answered. */
  readonly answers: ReadonlyArray<readonly [string, string, string]>
}

/** On cluster `c`: `n` runs pause; one process approves every call as alice while another rejects it as bob. */
export const twoDeciders = async (c: Cluster, n: number): Promise<DecideFigures> => {
  const runs = ids("decide", n)
  await startAll(c, runs)
  await waitCount(
    c.url,
    `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'AwaitingApproval' AND run_id LIKE 'decide:%'`,
    n
  )
  const alice = c.spawn(["decide", c.url, runs.join(","), "approve", "alice"])
  const bob = c.spawn(["decide", c.url, runs.join(","), "reject", "bob"])
  await Promise.all([alice.line(/^ready/), bob.line(/^ready/)])
  alice.child.stdin?.write("go\n")
  bob.child.stdin?.write("go\n")
  const [a, b] = (await Promise.all([alice.line(/^\{/), bob.line(/^\{/)])).map(
    (line) => JSON.parse(line) as Record<string, string>
  )
  await waitCount(c.url, done(runs), n, 60_000)
  return {
    runs: await figuresOf(c.url, runs),
    answers: runs.map((id) => [id, a?.[id] ?? "none", b?.[id] ?? "none"] as const)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Throughput
// ---------------------------------------------------------------------------------------------------------------

/**
 * On cluster `c`: `n` turns without approval (two model calls and one tool call each, the tool taking no time)
 * started at once from this process; turns per second from the first start to the last run ended.
 */
export const throughput = async (c: Cluster, n: number): Promise<number> => {
  const runs = ids(`tool-slow:burst-${Date.now()}`, n)
  const started = Date.now()
  const exit = await c.call(Effect.forEach(runs, (id) => turns.start(id, id), { concurrency: 16, discard: true }))
  if (Exit.isFailure(exit)) throw new Error(`start failed: ${answerOf(exit)}`)
  await waitCount(c.url, done(runs), n, 180_000)
  return n / ((Date.now() - started) / 1000)
}
