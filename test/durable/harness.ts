// The multi-process proof, shared by test/durable/kill-runner.test.ts and bench/durable.ts: two runner processes and
// client processes (test/durable/process.ts) on one Postgres database; N turns pause on an approval-gated tool; one
// runner is killed with SIGKILL; a client approves every run; the figures come from what Postgres recorded.
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Redacted } from "effect"
import { trackProcess } from "./cleanup.ts"
import { SqlClient } from "effect/sql"

const script = fileURLToPath(new URL("./process.ts", import.meta.url))

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

export interface Proc {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the first stdout line matching `pattern`; rejects if the process exits first. */
  readonly line: (pattern: RegExp) => Promise<string>
  readonly exited: Promise<number | null>
}

/** The shard lock settings of every process (milliseconds). */
export interface LockSettings {
  readonly expirationMs: number
  readonly refreshMs: number
}

/**
 * What the test and the bench use: Effect's own 35 s / 10 s. A takeover does not wait for them: every runner pings the
 * others each second (layerCluster's runner watch) and a kill -9 frees the dead runner's Postgres advisory locks at
 * once. The refresh interval also bounds every lock refresh round, and a round that does not finish in time makes a
 * runner give up all its shards (its running activities then run again): on a loaded machine 1 s rounds time out, and
 * 5 s rounds did too in a loaded 200-turn pass.
 */
export const defaultLocks: LockSettings = { expirationMs: 35_000, refreshMs: 10_000 }

/** The shard settings of every process of the proofs (the lock settings from `locks`). */
export const shardingConfigOf = (locks: LockSettings) =>
  ({
    shardsPerGroup: 30,
    shardLockExpiration: Duration.millis(locks.expirationMs),
    shardLockRefreshInterval: Duration.millis(locks.refreshMs),
    entityMessagePollInterval: "1 second",
    refreshAssignmentsInterval: "1 second",
    runnerHealthCheckInterval: "1 second"
  }) as const

/** Starts one process of the proofs (./process.ts) with `args`; `env` adds variables (TOOL_MS, MODEL_MS). */
export const spawnProcess = (
  args: ReadonlyArray<string>,
  locks: LockSettings,
  env: Readonly<Record<string, string>> = {}
): Proc => {
  const child = spawn(process.execPath, ["--conditions=@rolecraft/source", script, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      ...env,
      SHARD_LOCK_EXPIRATION_MS: String(locks.expirationMs),
      SHARD_LOCK_REFRESH_MS: String(locks.refreshMs)
    }
  })
  trackProcess(child)
  let out = ""
  let err = ""
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = []
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString()
    for (const line of out.split("\n")) {
      for (const waiter of waiters.splice(0)) {
        if (waiter.pattern.test(line)) waiter.resolve(line)
        else waiters.push(waiter)
      }
    }
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-20_000)
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return {
    child,
    output: () => `${out}\n${err}`,
    exited,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        const found = out.split("\n").find((line) => pattern.test(line))
        if (found !== undefined) return resolve(found)
        waiters.push({ pattern, resolve })
        void exited.then((code) =>
          reject(new Error(`${args[0]} exited (${code}) before printing ${pattern}:\n${out}\n${err}`))
        )
      })
  }
}

export interface Figures {
  readonly turns: number
  readonly completed: number
  readonly modelCalls: number
  /** Model calls recorded before the kill (N when no segment ran twice while the runs paused). */
  readonly modelCallsBeforeKill: number
  readonly toolRuns: number
  readonly duplicateToolRuns: number
  /** Tool runs whose idempotency key is their run id and tool call id. */
  readonly keyedToolRuns: number
  /** Runs first hosted by the killed runner, and their time from the kill to their tool run (ms). */
  readonly takeoverMs: ReadonlyArray<number>
  /** The same for the surviving runner's runs (the decision and the rest of the turn, no takeover). */
  readonly survivorMs: ReadonlyArray<number>
  readonly pausedMs: number
  readonly approvedToDoneMs: number
  /** When the runner was killed (ms since the epoch). */
  readonly killedAt: number
  readonly logs: string
}

export const query = <A>(url: string, body: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* body(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url) })), Effect.orDie)
  )

/**
 * Runs the proof with `turns` runs on the database at `url`, killing the first runner started (`victim` 0), the
 * second (1), or the one hosting more of the paused runs ("busiest": a takeover is then certain, whichever runner the
 * shard assignment favoured); every process it starts is stopped before it returns.
 */
export const killOneRunner = async (
  url: string,
  turns: number,
  locks = defaultLocks,
  victimIndex: 0 | 1 | "busiest" = "busiest"
): Promise<Figures> => {
  const procs: Array<Proc> = []
  const run = (args: ReadonlyArray<string>) => {
    const proc = spawnProcess(args, locks)
    procs.push(proc)
    return proc
  }
  try {
    const [portA, portB] = [await freePort(), await freePort()]
    const a = run(["runner", url, String(portA)])
    const b = run(["runner", url, String(portB)])
    await Promise.all([a.line(/^ready/), b.line(/^ready/)])
    const starter = run(["start", url, String(turns)])
    const started = JSON.parse(await starter.line(/^\{/)) as { readonly pausedMs: number }
    await starter.exited
    const approver = run(["approve", url, String(turns)])
    await approver.line(/^ready/)
    const hosted = async (proc: Proc) =>
      Number(
        (
          await query(
            url,
            (sql) => sql<{ readonly n: string }>`SELECT count(DISTINCT run_id) AS n
            FROM harness_model_calls WHERE pid = ${proc.child.pid ?? 0}`
          )
        )[0]?.n ?? 0
      )
    const killed =
      victimIndex === "busiest" ? ((await hosted(a)) >= (await hosted(b)) ? a : b) : victimIndex === 0 ? a : b
    const victim = killed.child.pid ?? 0
    killed.child.kill("SIGKILL")
    const killedAt = Date.now()
    approver.child.stdin?.write("go\n")
    const approved = JSON.parse(await approver.line(/^\{/)) as { readonly doneMs: number }
    await approver.exited
    const rows = await query(url, (sql) =>
      Effect.all({
        model: sql<{ readonly n: string }>`SELECT count(*) AS n FROM harness_model_calls`,
        before: sql<{ readonly n: string }>`SELECT count(*) AS n FROM harness_model_calls
          WHERE at < to_timestamp(${killedAt / 1000})`,
        tools: sql<{
          readonly n: string
          readonly d: string
        }>`SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM harness_tool_runs`,
        keyed: sql<{ readonly n: string }>`SELECT count(*) AS n FROM harness_tool_runs
          WHERE idempotency_key = run_id || '/call_1'`,
        done: sql<{ readonly n: string }>`SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'Done'`,
        latency: sql<{ readonly first_pid: number; readonly at_ms: string }>`
          SELECT (SELECT pid FROM harness_model_calls m WHERE m.run_id = t.run_id ORDER BY at LIMIT 1) AS first_pid,
                 (extract(epoch FROM t.at) * 1000)::bigint AS at_ms
          FROM harness_tool_runs t`
      })
    )
    const since = (row: { readonly at_ms: string }) => Number(row.at_ms) - killedAt
    return {
      turns,
      completed: Number(rows.done[0]?.n ?? 0),
      modelCalls: Number(rows.model[0]?.n ?? 0),
      modelCallsBeforeKill: Number(rows.before[0]?.n ?? 0),
      toolRuns: Number(rows.tools[0]?.n ?? 0),
      duplicateToolRuns: Number(rows.tools[0]?.n ?? 0) - Number(rows.tools[0]?.d ?? 0),
      keyedToolRuns: Number(rows.keyed[0]?.n ?? 0),
      takeoverMs: rows.latency.filter((r) => r.first_pid === victim).map(since),
      survivorMs: rows.latency.filter((r) => r.first_pid !== victim).map(since),
      pausedMs: started.pausedMs,
      approvedToDoneMs: approved.doneMs,
      killedAt,
      logs: procs.map((p) => p.output()).join("\n----\n")
    }
  } finally {
    for (const proc of procs)
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL")
    await Promise.all(procs.map((p) => p.exited))
  }
}

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((x, y) => x - y)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}
