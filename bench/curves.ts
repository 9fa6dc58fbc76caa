/**
 * Cost curves: how each framework's chat turn scales with concurrency. For
 * 1, 10, 100 and 1,000 turns at once (`Promise.all`), each framework's
 * tool-call run (tool call, tool run, answer) and its streamed turn (100
 * deltas; frameworks with a streamed scenario), over the same fake models as
 * `chat.ts` and `streaming.ts`:
 *
 * - **turns per second**: batches of N turns at once, timed back to back
 *   after a warm-up, for a time budget per point; turns done ÷ time taken;
 * - **heap per turn in flight**: every model call is held at the model's
 *   gate (`holdAtModel` in peers/scenario.ts) until all N turns are waiting
 *   there; a forced GC, the live data read, minus the reading before the
 *   turns started, ÷ N. That is what each framework keeps per turn that is
 *   waiting on its model: the request, the history, the fibers or promises.
 *
 * Each framework runs in a fresh `node --expose-gc` child, in interleaved
 * rounds (each round runs every framework once). Targets (issue 27): at
 * 1,000 concurrent turns Rolecraft's turns per second ≥ 2× and its heap per
 * turn ≤ 0.5× the best alternative's, in every round.
 *
 * Run all: node bench/curves.ts. One framework, as JSON (what `bench`
 * spawns): node --expose-gc bench/curves.ts --child ai-sdk
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { getHeapSpaceStatistics } from "node:v8"
import { type Peer, peers } from "./chat.ts"
import { collectGarbage, loadedPass, percentile, quickMode, spreadOf, type Spread, metInEvery } from "./measure.ts"
import { holdAtModel, type ChatScenarios, type StreamScenario } from "./peers/scenario.ts"
import { type Curve, isMain, printSection, type Section, spread, type Table, type Target } from "./report.ts"

/** How many turns run at once, per point of a curve. */
export const concurrency: ReadonlyArray<number> = [1, 10, 100, 1000]

/** Interleaved rounds (one child per framework per round): 2, or 1 in quick mode and in the loaded pass. */
const rounds = quickMode() || loadedPass() ? 1 : 2

/** Time spent timing each point, ms (after its warm-up). */
const budgetMs = quickMode() ? 100 : 350

/** Heap readings per point (the median is kept). */
const heapReadings = quickMode() ? 1 : 2

/** One point of a curve: N turns at once. */
export interface Point {
  readonly turns: number
  readonly turnsPerSecond: number
  /** Live data per turn in flight, bytes. */
  readonly heapPerTurn: number
}

export interface CurveResult {
  readonly peer: Peer
  readonly name: string
  readonly chat: ReadonlyArray<Point>
  /** Absent for a framework without a streamed scenario. */
  readonly streamed?: ReadonlyArray<Point>
}

const dataSpaces = new Set(["new_space", "old_space", "large_object_space", "new_large_object_space"])

/** Bytes in V8's data spaces (as chat.ts reads the heap). */
const liveData = (): number =>
  getHeapSpaceStatistics()
    .filter((space) => dataSpaces.has(space.space_name))
    .reduce((sum, space) => sum + space.space_used_size, 0)

/**
 * Warms a curve's code up before its first point: turns one at a time, then
 * ten at a time, each up to `warmup.turns` turns or `warmup.ms` (as chat.ts
 * warms up with 200 runs), so the first point is not read from cold code.
 */
const warmup = quickMode() ? { turns: 300, ms: 600 } : { turns: 1000, ms: 2000 }

const warmUp = async (batch: (n: number) => Promise<void>): Promise<void> => {
  for (const n of [1, 10]) {
    const end = performance.now() + warmup.ms / 2
    for (let done = 0; done < warmup.turns && performance.now() < end; done += n) await batch(n)
  }
}

/** Turns per second of `batch(n)` (n turns at once), batches back to back for the budget (at least one). */
const throughput = async (n: number, batch: (n: number) => Promise<void>): Promise<number> => {
  let turns = 0
  const start = performance.now()
  const end = start + budgetMs
  do {
    await batch(n)
    turns += n
  } while (performance.now() < end)
  return turns / ((performance.now() - start) / 1000)
}

/** Live data per turn while `n` turns wait at the model (median of the readings), bytes. */
const heapInFlight = async (n: number, batch: (n: number) => Promise<void>): Promise<number> => {
  const readings: Array<number> = []
  for (let r = 0; r < heapReadings; r++) {
    collectGarbage()
    const before = liveData()
    const gate = holdAtModel(n)
    const running = batch(n)
    await gate.arrived
    collectGarbage()
    readings.push((liveData() - before) / n)
    gate.release()
    await running
  }
  return percentile(readings, 0.5)
}

/**
 * The longest one batch may take, s, judged from the rate of the point before: a point that would take longer
 * (a framework whose turns slow down as they pile up) is not run, nor are the ones after it, so that the
 * section ends; its cells read "—".
 */
const maxBatchS = quickMode() ? 5 : 15

const curveOf = async (batch: (n: number) => Promise<void>): Promise<ReadonlyArray<Point>> => {
  await warmUp(batch)
  const points: Array<Point> = []
  for (const turns of concurrency) {
    const before = points.at(-1)
    if (before !== undefined && turns / before.turnsPerSecond > maxBatchS) break
    const turnsPerSecond = await throughput(turns, batch)
    points.push({ turns, turnsPerSecond, heapPerTurn: await heapInFlight(turns, batch) })
  }
  return points
}

const streamedBatch =
  (streamed: StreamScenario) =>
  async (n: number): Promise<void> => {
    await Promise.all(Array.from({ length: n }, () => streamed.run(() => {})))
  }

/** Measures one framework's curves in this process. */
export const measureCurves = async (peer: Peer): Promise<CurveResult> => {
  const module = (await peers[peer]()) as { readonly scenarios: ChatScenarios; readonly streamed?: StreamScenario }
  const chat = await curveOf((n) => module.scenarios.concurrent(n))
  const streamed = module.streamed === undefined ? undefined : await curveOf(streamedBatch(module.streamed))
  return { peer, name: module.scenarios.name, chat, ...(streamed === undefined ? {} : { streamed }) }
}

const run = promisify(execFile)

const measureInChild = async (peer: Peer): Promise<CurveResult> => {
  const { stdout } = await run(
    process.execPath,
    ["--expose-gc", fileURLToPath(import.meta.url), "--child", peer, ...(quickMode() ? ["--quick"] : [])],
    { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }
  )
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as CurveResult
}

type Kind = "chat" | "streamed"
type Figure = "turnsPerSecond" | "heapPerTurn"

const pointAt = (result: CurveResult, kind: Kind, turns: number): Point | undefined =>
  result[kind]?.find((point) => point.turns === turns)

/**
 * Rolecraft's figure at `turns` over the best alternative's, per round (the
 * best of each round: the highest turns per second, the lowest heap).
 */
const againstBest = (byRound: ReadonlyArray<ReadonlyArray<CurveResult>>, kind: Kind, figure: Figure, turns: number) => {
  const ratios = byRound.map((results) => {
    const ours = results.find((r) => r.peer === "rolecraft")
    const others = results.filter((r) => r.peer !== "rolecraft").map((r) => pointAt(r, kind, turns)?.[figure])
    const present = others.filter((value): value is number => value !== undefined && Number.isFinite(value))
    const best = figure === "turnsPerSecond" ? Math.max(...present) : Math.min(...present)
    const mine = ours === undefined ? undefined : pointAt(ours, kind, turns)?.[figure]
    return mine === undefined || present.length === 0 ? Number.NaN : mine / best
  })
  return spreadOf(percentile(ratios, 0.5), ratios)
}

/** The median of each framework's rounds, point by point. */
const medianResults = (byRound: ReadonlyArray<ReadonlyArray<CurveResult>>): ReadonlyArray<CurveResult> =>
  (byRound[0] ?? []).map((first) => {
    const all = byRound.map((results) => results.find((r) => r.peer === first.peer))
    const median = (kind: Kind) =>
      first[kind]?.map((point) => {
        const at = all.map((r) => (r === undefined ? undefined : pointAt(r, kind, point.turns)))
        const of = (figure: Figure) =>
          percentile(
            at.flatMap((p) => (p === undefined ? [] : [p[figure]])),
            0.5
          )
        return { turns: point.turns, turnsPerSecond: of("turnsPerSecond"), heapPerTurn: of("heapPerTurn") }
      })
    const streamed = median("streamed")
    return {
      peer: first.peer,
      name: first.name,
      chat: median("chat") ?? [],
      ...(streamed === undefined ? {} : { streamed })
    }
  })

const kibOf = (bytes: number): string => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : "—")
const rate = (value: number): string => (Number.isFinite(value) ? value.toFixed(0) : "—")

const table = (title: string, results: ReadonlyArray<CurveResult>, kind: Kind): Table => ({
  title,
  columns: ["framework", ...concurrency.flatMap((n) => [`${n}: turns/s`, `${n}: heap/turn`])],
  rows: results
    .filter((result) => result[kind] !== undefined)
    .map((result) => [
      result.name,
      ...concurrency.flatMap((n) => {
        const point = pointAt(result, kind, n)
        return [rate(point?.turnsPerSecond ?? Number.NaN), kibOf(point?.heapPerTurn ?? Number.NaN)]
      })
    ])
})

const curvesOf = (results: ReadonlyArray<CurveResult>, kind: Kind, label: string): ReadonlyArray<Curve> => {
  const series = (figure: Figure, scale: number) =>
    results
      .filter((result) => result[kind] !== undefined)
      .map((result) => ({
        name: result.name,
        points: (result[kind] ?? []).map((point) => [point.turns, point[figure] / scale] as const)
      }))
  return [
    {
      file: `curve-${kind}-turns-per-second.svg`,
      title: `${label}: turns per second`,
      x: "turns at once (log scale)",
      y: "turns per second",
      series: series("turnsPerSecond", 1)
    },
    {
      file: `curve-${kind}-heap-per-turn.svg`,
      title: `${label}: heap per turn in flight`,
      x: "turns at once (log scale)",
      y: "KiB per turn",
      series: series("heapPerTurn", 1024)
    }
  ]
}

const target = (name: string, limit: string, ratio: Spread, bound: number, atLeast: boolean): Target => {
  const measured = Number.isFinite(ratio.value)
  return {
    name,
    limit,
    measured: measured ? spread(ratio) : "not measured",
    met: measured
      ? atLeast
        ? ratio.rounds.every((value) => Number.isFinite(value) && value >= bound)
        : metInEvery(ratio, bound)
      : undefined
  }
}

/** The section from every round's results (separate from running, so tests can check it). */
export const curvesSection = (byRound: ReadonlyArray<ReadonlyArray<CurveResult>>): Section => {
  const results = medianResults(byRound)
  const top = concurrency.at(-1) ?? 1000
  return {
    title: "Cost curves: concurrent chat turns",
    description:
      `1, 10, 100 and 1,000 chat turns at once (\`Promise.all\`) in each framework, over the fake models of the chat ` +
      "and streaming sections: the tool-call run (tool call, tool run, answer) and the streamed turn (100 deltas). " +
      `Turns per second: after a warm-up (up to ${warmup.turns} turns one at a time, then ten at a time), batches of N ` +
      `turns back to back for ${budgetMs} ms per point (at least one batch). Heap per turn ` +
      "in flight: every model call held at the model until all N turns wait there, a forced GC, the live data " +
      `minus the reading before the turns started, ÷ N (median of ${heapReadings}). Each framework in a fresh ` +
      `process, ${rounds} interleaved round(s); the figures are the rounds' medians, the targets read per round.`,
    tables: [
      table("Chat turns (a tool-call run each)", results, "chat"),
      table("Streamed turns (100 deltas each)", results, "streamed")
    ],
    targets: [
      target(
        `turns per second at ${top.toLocaleString("en-US")} concurrent chat turns`,
        "≥ 2× the best alternative",
        againstBest(byRound, "chat", "turnsPerSecond", top),
        2,
        true
      ),
      target(
        `heap per turn at ${top.toLocaleString("en-US")} concurrent chat turns`,
        "≤ 0.5× the best alternative",
        againstBest(byRound, "chat", "heapPerTurn", top),
        0.5,
        false
      ),
      target(
        `turns per second at ${top.toLocaleString("en-US")} concurrent streamed turns`,
        "≥ 2× the best alternative",
        againstBest(byRound, "streamed", "turnsPerSecond", top),
        2,
        true
      ),
      target(
        `heap per turn at ${top.toLocaleString("en-US")} concurrent streamed turns`,
        "≤ 0.5× the best alternative",
        againstBest(byRound, "streamed", "heapPerTurn", top),
        0.5,
        false
      )
    ],
    notes: [
      "LangChain.js has no streamed scenario in this bench, so it has no streamed curve.",
      `A point whose one batch would take more than ${maxBatchS} s at the rate of the point before is not run, nor ` +
        "are the points after it (—): a framework whose turns slow down as they pile up would otherwise hold the " +
        "run for minutes.",
      "The fake models answer at once, so turns per second is each framework's own CPU per turn under " +
        "concurrency (scheduling, promises or fibers, the history): two cores, one process, no I/O."
    ],
    curves: [
      ...curvesOf(results, "chat", "Concurrent chat turns"),
      ...curvesOf(results, "streamed", "Concurrent streamed turns")
    ]
  }
}

/** Every framework's curves in `rounds` interleaved rounds, one child each. */
export const bench = async (only?: ReadonlyArray<Peer>): Promise<Section> => {
  const chosen = only ?? (Object.keys(peers) as Array<Peer>)
  const byRound: Array<ReadonlyArray<CurveResult>> = []
  for (let round = 0; round < rounds; round++) {
    const results: Array<CurveResult> = []
    for (const peer of chosen) results.push(await measureInChild(peer))
    byRound.push(results)
  }
  return curvesSection(byRound)
}

if (isMain(import.meta)) {
  const child = process.argv.indexOf("--child")
  if (child !== -1) {
    const peer = process.argv[child + 1] as Peer
    if (!(peer in peers)) throw new Error(`unknown framework ${peer}; one of ${Object.keys(peers).join(", ")}`)
    console.log(JSON.stringify(await measureCurves(peer)))
  } else {
    const only = process.argv.slice(2).filter((arg): arg is Peer => arg in peers)
    const section = await bench(only.length === 0 ? undefined : only)
    if (!process.argv.includes("--json") && !loadedPass() && !quickMode()) {
      const { writeCurves } = await import("./plot.ts")
      console.error(`wrote ${writeCurves(section.curves ?? []).join(", ")}`)
    }
    await printSection(async () => section)
  }
}
