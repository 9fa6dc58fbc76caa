/**
 * Conversation threads (`agent.chat(input, { thread })`): a turn on a thread of 10, 100 and 1,000 exchanges —
 * the thread held, its history loaded, the turn run, its exchange appended — in memory and in a SQLite file, with
 * the whole history sent or a budget of 8,000 tokens; beside it, the same turn with no history and with the caller
 * passing the same history as a message list. Each exchange is four messages (the user's question, a tool call,
 * its answer, the reply: about 700 characters). The model is a mock answering at once, so the figures are the
 * library's own cost.
 *
 * Each timed turn runs on a thread of its own prefilled with exactly N exchanges, so every sample loads the same
 * size. Heap: 25 turns in sequence on one thread of N exchanges, a forced GC and a reading of V8's data spaces
 * after turns 1, 5, …, 25, and the least-squares slope of each half (median of 3 repetitions).
 *
 * Target (issue 25): the retained heap per turn constant on a thread of 1,000 exchanges, in memory and SQLite.
 *
 * Run: node --expose-gc bench/threads.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { getHeapSpaceStatistics } from "node:v8"
import { Action, Agent, LanguageModel, type Prompt, Role, ThreadStore } from "@rolecraft/core"
import { Context, Effect, Layer, ManagedRuntime, Schema, Scope } from "effect"
import { constantGrowth } from "./chat.ts"
import { percentile } from "./measure.ts"
import { isMain, printSection, type Section, type Table, us } from "./report.ts"

const sizes = [10, 100, 1000] as const
/** Timed turns per size (each on a thread of its own), after warm-up turns on others. */
const samples = 40
const warmup = 10
const heapTurns = 25
const heapRepetitions = 3
const budget = { maxTokens: 8_000 }

const usage = { inputTokens: 10, outputTokens: 5 }
const model = LanguageModel.layer(
  () => ({ text: "The weather in Lisbon is sunny.", toolCalls: [], usage, finishReason: "stop" as const }),
  { name: "bench" }
)

const role = Role.make({
  identity: { name: "forecaster", goal: "Answer questions about the weather", domain: "weather" },
  actions: {
    get_weather: Action.local({
      description: "The weather of a city",
      parameters: { city: Schema.String },
      run: ({ city }) => ({ city, forecast: "sunny", temperature: 21 })
    })
  }
})

/** Exchange `n` of a prefilled thread: a question, a tool call, its answer and the reply (about 700 characters). */
const exchange = (n: number): ReadonlyArray<Prompt.Message> => [
  { role: "user", content: `Question ${n}: what will the weather be like in Lisbon this afternoon, and tomorrow?` },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: `call_${n}`, name: "get_weather", arguments: '{"city":"Lisbon"}' }]
  },
  {
    role: "tool",
    toolCallId: `call_${n}`,
    content: JSON.stringify({ city: "Lisbon", forecast: "sunny", temperature: 21, wind: "light", humidity: 0.4 })
  },
  { role: "assistant", content: `Answer ${n}: ${"Sunny with a light breeze from the north, around 21 °C. ".repeat(8)}` }
]

const prefill = (store: ThreadStore.ThreadStore["Service"], id: string, n: number) =>
  store.hold(id, (held) =>
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i + 1),
      (seq) => held.write({ exchange: { seq, messages: exchange(seq) }, summary: undefined, paused: undefined }),
      { discard: true }
    )
  )

const liveData = (): number =>
  getHeapSpaceStatistics()
    .filter((space) =>
      ["new_space", "old_space", "large_object_space", "new_large_object_space"].includes(space.space_name)
    )
    .reduce((sum, space) => sum + space.space_used_size, 0)

const slope = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>): number => {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  let num = 0
  let den = 0
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? 0) - my)
    den += (x - mx) ** 2
  })
  return den === 0 ? 0 : num / den
}

interface Row {
  readonly store: string
  readonly exchanges: number
  readonly history: string
  readonly medianUs: number
  readonly p95Us: number
}

interface HeapRow {
  readonly store: string
  readonly exchanges: number
  readonly perTurn: number
  readonly early: number
  readonly late: number
}

type Kind = "memory" | "sqlite"

const storeLayer = (kind: Kind, dir: string): Layer.Layer<ThreadStore.ThreadStore, unknown> =>
  kind === "memory" ? ThreadStore.layerMemory : ThreadStore.layerSqlite({ filename: join(dir, "threads.db") })

/** Times one turn on each of `samples` threads of `n` exchanges. */
const timeTurns = async (
  runtime: ManagedRuntime.ManagedRuntime<ThreadStore.ThreadStore | LanguageModel.LanguageModel, unknown>,
  agent: Agent.Agent,
  kind: Kind,
  n: number,
  withBudget: boolean
): Promise<Row> => {
  const store = await runtime.runPromise(Effect.service(ThreadStore.ThreadStore))
  const prefix = `${kind}-${n}-${withBudget ? "budget" : "whole"}`
  for (let i = 0; i < samples + warmup; i++) await runtime.runPromise(prefill(store, `${prefix}-${i}`, n))
  const times: Array<number> = []
  for (let i = 0; i < samples + warmup; i++) {
    const thread = withBudget ? { id: `${prefix}-${i}`, budget } : `${prefix}-${i}`
    const t0 = performance.now()
    const result = await runtime.runPromise(agent.chat("And the day after?", { thread }))
    const elapsed = performance.now() - t0
    if (result._tag !== "Completed") throw new Error(`the turn ended ${result._tag}`)
    if (i >= warmup) times.push(elapsed * 1000)
  }
  return {
    store: kind,
    exchanges: n,
    history: withBudget ? `budget ${budget.maxTokens.toLocaleString("en")} tokens` : "whole",
    medianUs: percentile(times, 0.5),
    p95Us: percentile(times, 0.95)
  }
}

/** Times the same turn with the caller's own history of `n` exchanges (a message list), or none. */
const timeBaseline = async (
  runtime: ManagedRuntime.ManagedRuntime<ThreadStore.ThreadStore | LanguageModel.LanguageModel, unknown>,
  agent: Agent.Agent,
  n: number
): Promise<Row> => {
  const history = Array.from({ length: n }, (_, i) => exchange(i + 1)).flat()
  const times: Array<number> = []
  for (let i = 0; i < samples + warmup; i++) {
    const input: string | ReadonlyArray<Prompt.Message> =
      n === 0 ? "And the day after?" : [...history, { role: "user", content: "And the day after?" }]
    const t0 = performance.now()
    await runtime.runPromise(agent.chat(input))
    if (i >= warmup) times.push((performance.now() - t0) * 1000)
  }
  return {
    store: "none (no thread)",
    exchanges: n,
    history: n === 0 ? "none" : "the caller's message list",
    medianUs: percentile(times, 0.5),
    p95Us: percentile(times, 0.95)
  }
}

/** Retained heap per turn over `heapTurns` turns on one thread of `n` exchanges (median of the repetitions). */
const probeHeap = async (
  runtime: ManagedRuntime.ManagedRuntime<ThreadStore.ThreadStore | LanguageModel.LanguageModel, unknown>,
  agent: Agent.Agent,
  kind: Kind,
  n: number
): Promise<HeapRow | undefined> => {
  const gc = globalThis.gc
  if (gc === undefined) return undefined
  const store = await runtime.runPromise(Effect.service(ThreadStore.ThreadStore))
  const checkpoints = Array.from({ length: Math.floor((heapTurns - 1) / 4) + 1 }, (_, i) => 1 + 4 * i)
  const curves: Array<ReadonlyArray<number>> = []
  for (let r = 0; r < heapRepetitions; r++) {
    const id = `heap-${kind}-${n}-${r}`
    await runtime.runPromise(prefill(store, id, n))
    const readings: Array<number> = []
    for (let turn = 1; turn <= heapTurns; turn++) {
      await runtime.runPromise(agent.chat(`Turn ${turn}: and the day after?`, { thread: id }))
      if (checkpoints.includes(turn)) {
        gc()
        readings.push(liveData())
      }
    }
    curves.push(readings.map((value) => value - (readings[0] ?? value)))
  }
  const curve = checkpoints.map((_, i) =>
    percentile(
      curves.map((c) => c[i] ?? Number.NaN),
      0.5
    )
  )
  const half = Math.floor(checkpoints.length / 2)
  return {
    store: kind,
    exchanges: n,
    perTurn: slope(checkpoints, curve),
    early: slope(checkpoints.slice(0, half + 1), curve.slice(0, half + 1)),
    late: slope(checkpoints.slice(half), curve.slice(half))
  }
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1)

export const bench = async (): Promise<Section> => {
  const dir = mkdtempSync(join(tmpdir(), "rolecraft-bench-threads-"))
  const rows: Array<Row> = []
  const heap: Array<HeapRow> = []
  try {
    for (const kind of ["memory", "sqlite"] as const) {
      const runtime = ManagedRuntime.make(Layer.merge(storeLayer(kind, dir), model))
      const scope = Effect.runSync(Scope.make())
      const agent = (await runtime.runPromise(
        Agent.make({ id: "bench", roles: [role] }).pipe(Scope.provide(scope))
      )) as unknown as Agent.Agent
      if (kind === "memory") for (const n of [0, ...sizes]) rows.push(await timeBaseline(runtime, agent, n))
      for (const n of sizes) {
        rows.push(await timeTurns(runtime, agent, kind, n, false))
        rows.push(await timeTurns(runtime, agent, kind, n, true))
        const probed = await probeHeap(runtime, agent, kind, n)
        if (probed !== undefined) heap.push(probed)
      }
      await Effect.runPromise(Scope.close(scope, Context.empty() as never))
      await runtime.dispose()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const timeTable: Table = {
    title: "A turn on a thread of N exchanges (held, loaded, run, appended)",
    columns: ["store", "exchanges", "history sent", "median µs", "p95 µs"],
    rows: rows.map((row) => [row.store, String(row.exchanges), row.history, us(row.medianUs), us(row.p95Us)])
  }
  const heapTable: Table = {
    title: `Retained heap per turn over ${heapTurns} turns on one thread`,
    columns: ["store", "exchanges", "KiB per turn", `turns 1–13`, `turns 13–25`, "constant"],
    rows: heap.map((row) => [
      row.store,
      String(row.exchanges),
      kib(row.perTurn),
      kib(row.early),
      kib(row.late),
      constantGrowth({ ...row, repetitions: heapRepetitions }) ? "yes" : "no"
    ])
  }
  const at1000 = heap.filter((row) => row.exchanges === 1000)
  return {
    title: "Conversation threads",
    description:
      "`agent.chat(input, { thread })` on a thread of 10, 100 and 1,000 exchanges (four messages, ~700 characters " +
      "each) in memory and in a SQLite file (on the run's temporary directory): the thread held, its history " +
      "loaded, one model call (a mock answering at once), the exchange appended. Each timed turn runs on its own " +
      `thread prefilled with exactly N exchanges; ${samples} samples after ${warmup} warm-up turns. Beside it, the ` +
      "same turn with no history, and with the caller passing the history as a message list. Heap: 25 turns on " +
      `one thread, a forced GC and a reading after turns 1, 5, …, 25, median of ${heapRepetitions} repetitions.`,
    tables: [timeTable, heapTable],
    curves: [
      {
        file: "curve-thread-turn.svg",
        title: "A turn on a thread of N exchanges",
        x: "exchanges in the thread (log scale)",
        y: "µs per turn (median)",
        series: [...new Set(rows.filter((row) => row.exchanges > 0).map((row) => `${row.store}, ${row.history}`))].map(
          (name) => ({
            name,
            points: rows
              .filter((row) => row.exchanges > 0 && `${row.store}, ${row.history}` === name)
              .map((row) => [row.exchanges, row.medianUs] as const)
          })
        )
      }
    ],
    targets: [
      {
        name: "heap per turn on a thread of 1,000 exchanges (memory and SQLite)",
        limit: "constant (slope of turns 13–25 ≤ 1.25× that of turns 1–13, + 1 KiB)",
        measured:
          at1000.length === 0
            ? "not measured (run with --expose-gc)"
            : at1000.map((row) => `${row.store} ${kib(row.early)} then ${kib(row.late)} KiB per turn`).join("; "),
        met:
          at1000.length === 0
            ? undefined
            : at1000.every((row) => constantGrowth({ ...row, repetitions: heapRepetitions }))
      }
    ],
    notes: [
      "In memory, a turn retains what it appends (the exchange it stores); in SQLite nothing stays in the heap.",
      "The whole history is read back on every turn without a budget; with one, only the exchanges that fit are " +
        "read, after the index of every exchange's tokens and call ids (kept so that ids stay unique across the " +
        "whole thread)."
    ]
  }
}

if (isMain(import.meta)) await printSection(bench)
