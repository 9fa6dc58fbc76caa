/**
 * The chat scenarios of every framework, each in a fresh child process (so
 * one framework's JIT state and heap do not colour another's): one mocked
 * tool-call run, a single turn with no tool call, and a 25-turn run (25 tool
 * calls in sequence) with its time and retained heap per turn.
 *
 * Every framework is measured in 3 rounds, interleaved (each round runs
 * every framework once, each in a fresh child), so a ratio is read per round.
 *
 * Targets (issue 16): each of Rolecraft's scenarios ≤ 0.3× the fastest
 * alternative's, in every round; its heap growth per turn constant over 25
 * turns, in every round.
 *
 * Run all: node bench/chat.ts. One framework, as JSON (what `chatBench`
 * spawns): node --expose-gc bench/chat.ts --child ai-sdk
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { getHeapSpaceStatistics } from "node:v8"
import { countHopsAsync, type Hops, hopsTable } from "./hops.ts"
import {
  childRounds,
  combineRounds,
  quickMode,
  loadedPass,
  type Figures,
  measureAsync,
  metInEvery,
  type Options,
  percentile,
  type Spread,
  spreadOf
} from "./measure.ts"
import type { ChatScenarios } from "./peers/scenario.ts"
import { isMain, printSection, type Section, spread, type Table, type Target, times, us } from "./report.ts"

/** What a peer module exports. */
export interface PeerModule {
  readonly scenarios: ChatScenarios
}

/** The frameworks, Rolecraft first; keys are the modules under `bench/peers/`. */
export const peers = {
  rolecraft: (): Promise<PeerModule> => import("./peers/rolecraft.ts"),
  "ai-sdk": (): Promise<PeerModule> => import("./peers/ai-sdk.ts"),
  "openai-agents": (): Promise<PeerModule> => import("./peers/openai-agents.ts"),
  langchain: (): Promise<PeerModule> => import("./peers/langchain.ts")
} as const

export type Peer = keyof typeof peers

/** The packages behind each framework, whose versions the report prints. */
export const frameworkPackages: ReadonlyArray<string> = [
  "@rolecraft/core",
  "effect",
  "ai",
  "@openai/agents",
  "@openai/agents-core",
  "langchain",
  "@langchain/core",
  "@langchain/langgraph",
  "zod"
]

/** Tool calls in the long run. */
export const turns = 25

/**
 * Sampling plans of one round (one child process): every run is awaited
 * alone (batch 1), so p95 is a run's p95. The rounds are the child
 * processes, so each child takes one round.
 */
const plans: Record<"toolCallRun" | "singleTurn" | "multiTurn", Options> = {
  toolCallRun: { warmup: 200, warmupMs: 500, samples: 1000, batch: 1, budgetMs: 800, minSamples: 30, rounds: 1 },
  singleTurn: { warmup: 200, warmupMs: 400, samples: 1000, batch: 1, budgetMs: 600, minSamples: 30, rounds: 1 },
  multiTurn: { warmup: 15, warmupMs: 500, samples: 150, batch: 1, budgetMs: 1000, minSamples: 10, rounds: 1 }
}

/** Repetitions of the 25-turn run with heap readings, per round. */
const memoryRepetitions = 3

/** Retained heap per turn of the long run, bytes, from a forced GC inside some tool runs. */
export interface Memory {
  /** Growth per turn over the whole run (least-squares slope). */
  readonly perTurn: number
  /** Growth per turn over the first half of the turns (slope). */
  readonly early: number
  /** Growth per turn over the second half (slope). */
  readonly late: number
  readonly repetitions: number
}

export interface PeerResult {
  readonly peer: Peer
  readonly name: string
  readonly toolCallRun: Figures
  readonly singleTurn: Figures
  readonly multiTurn: Figures
  /** Absent without `--expose-gc`. */
  readonly memory?: Memory
  /** The memory probe of each round (absent for one round's result). */
  readonly memoryRounds?: ReadonlyArray<Memory>
  /** What one run of each scenario schedules, from an instrumented run (when asked for). */
  readonly hops?: ReadonlyArray<Hops>
}

const median = (values: ReadonlyArray<number>): number => percentile(values, 0.5)

/** Least-squares slope of `ys` over `xs`. */
const slope = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>): number => {
  const mx = xs.reduce((sum, x) => sum + x, 0) / xs.length
  const my = ys.reduce((sum, y) => sum + y, 0) / ys.length
  let numerator = 0
  let denominator = 0
  xs.forEach((x, i) => {
    numerator += (x - mx) * ((ys[i] ?? my) - my)
    denominator += (x - mx) ** 2
  })
  return numerator / denominator
}

/**
 * Bytes in V8's data spaces (new, old, large objects). Code and trusted
 * spaces are left out: JIT code and bytecode come and go with optimisation
 * and flushing, and made readings swing by hundreds of KiB.
 */
const liveData = (): number =>
  getHeapSpaceStatistics()
    .filter((space) => dataSpaces.has(space.space_name))
    .reduce((sum, space) => sum + space.space_used_size, 0)

const dataSpaces = new Set(["new_space", "old_space", "large_object_space", "new_large_object_space"])

/** Turns at which the heap is read: 1, then every 4th, and the last (1, 5, …, 25). */
const checkpoints = Array.from({ length: Math.floor((turns - 1) / 4) + 1 }, (_, i) => 1 + 4 * i)

/**
 * Runs the long scenario `repetitions` times with a full GC and a reading of
 * the live data inside the tool run at each checkpoint turn, so each reading is
 * what the framework keeps alive at that turn; the readings' median over
 * repetitions gives the curve, whose slope over each half tells constant
 * growth (a straight line) from growth that rises with the turn (e.g.
 * copying the whole history each step). A full GC costs tens of ms here,
 * hence checkpoints rather than every turn. Needs `--expose-gc`;
 * `undefined` without it.
 */
const probeMemory = async (scenarios: ChatScenarios, repetitions: number): Promise<Memory | undefined> => {
  const gc = globalThis.gc
  if (gc === undefined) return undefined
  const readings: Array<ReadonlyArray<number>> = []
  for (let r = 0; r < repetitions; r++) {
    const heap: Array<number> = []
    await scenarios.multiTurn(turns, (turn) => {
      if (!checkpoints.includes(turn)) return
      gc()
      heap.push(liveData())
    })
    readings.push(heap.map((value) => value - (heap[0] ?? value)))
  }
  const curve = checkpoints.map((_, i) => median(readings.map((heap) => heap[i] ?? Number.NaN)))
  const half = Math.floor(checkpoints.length / 2)
  return {
    perTurn: slope(checkpoints, curve),
    early: slope(checkpoints.slice(0, half + 1), curve.slice(0, half + 1)),
    late: slope(checkpoints.slice(half), curve.slice(half)),
    repetitions
  }
}

/** Measures one framework in this process. */
export const measurePeer = async (peer: Peer, withHops = false): Promise<PeerResult> => {
  const { scenarios } = await peers[peer]()
  const toolCallRun = await measureAsync("tool-call run", scenarios.toolCallRun, plans.toolCallRun)
  const singleTurn = await measureAsync("single turn", scenarios.singleTurn, plans.singleTurn)
  const multiTurn = await measureAsync(`${turns}-turn run`, () => scenarios.multiTurn(turns), plans.multiTurn)
  const memory = await probeMemory(scenarios, memoryRepetitions)
  const hops = withHops
    ? [
        ...(await countHopsAsync(
          [
            { name: "tool-call run", call: scenarios.toolCallRun },
            { name: "single turn", call: scenarios.singleTurn }
          ],
          50
        )),
        ...(await countHopsAsync([{ name: `${turns}-turn run`, call: () => scenarios.multiTurn(turns) }], 5))
      ]
    : undefined
  return {
    peer,
    name: scenarios.name,
    toolCallRun,
    singleTurn,
    multiTurn,
    ...(memory === undefined ? {} : { memory }),
    ...(hops === undefined ? {} : { hops })
  }
}

const run = promisify(execFile)

/** Measures one framework in a fresh `node --expose-gc` child. */
const measureInChild = async (peer: Peer, withHops: boolean): Promise<PeerResult> => {
  const args = ["--expose-gc", fileURLToPath(import.meta.url), "--child", peer, ...(withHops ? ["--hops"] : [])]
  const { stdout } = await run(process.execPath, args, {
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024
  })
  const last = stdout.trim().split("\n").at(-1) ?? ""
  return JSON.parse(last) as PeerResult
}

/**
 * Heap growth per turn is constant when the second half's slope is at most
 * 1.25× the first half's, plus 1 KiB for the noise of a heap reading. Growth
 * that rises with the turn number (each step copying the history) fails it.
 */
export const constantGrowth = (memory: Memory): boolean => memory.late <= 1.25 * Math.max(memory.early, 0) + 1024

const kib = (bytes: number): string => (Number.isFinite(bytes) ? (bytes / 1024).toFixed(1) : "—")

/** Whether growth was constant in every round measured (the one probe when there are no rounds). */
const constantInEvery = (result: PeerResult): boolean | undefined => {
  const rounds = result.memoryRounds ?? (result.memory === undefined ? [] : [result.memory])
  return rounds.length === 0 ? undefined : rounds.every(constantGrowth)
}

/**
 * One framework's rounds as one result: each scenario's figures with a
 * round per child, the memory probe of the median round (by growth per
 * turn) with every round's kept.
 */
export const combineResults = (rounds: ReadonlyArray<PeerResult>): PeerResult => {
  const first = rounds[0]
  if (first === undefined) throw new Error("no rounds to combine")
  const memories = rounds.flatMap((round) => (round.memory === undefined ? [] : [round.memory]))
  const byGrowth = [...memories].sort((a, b) => a.perTurn - b.perTurn)
  const memory = byGrowth[Math.floor(byGrowth.length / 2)]
  return {
    peer: first.peer,
    name: first.name,
    toolCallRun: combineRounds(
      first.toolCallRun.name,
      rounds.map((round) => round.toolCallRun)
    ),
    singleTurn: combineRounds(
      first.singleTurn.name,
      rounds.map((round) => round.singleTurn)
    ),
    multiTurn: combineRounds(
      first.multiTurn.name,
      rounds.map((round) => round.multiTurn)
    ),
    ...(memory === undefined ? {} : { memory, memoryRounds: memories }),
    ...(first.hops === undefined ? {} : { hops: first.hops })
  }
}

type Scenario = "toolCallRun" | "singleTurn" | "multiTurn"

/**
 * Rolecraft's median over the fastest alternative's, overall and per round
 * (the fastest of each round, which need not be the same framework).
 */
const againstFastest = (
  rolecraft: PeerResult | undefined,
  alternatives: ReadonlyArray<PeerResult>,
  scenario: Scenario
): { readonly ratio: Spread; readonly fastest: PeerResult | undefined } => {
  const fastest = alternatives.reduce<PeerResult | undefined>(
    (best, r) => (best === undefined || r[scenario].medianUs < best[scenario].medianUs ? r : best),
    undefined
  )
  if (rolecraft === undefined || fastest === undefined) return { ratio: spreadOf(Number.NaN, []), fastest }
  const ours = rolecraft[scenario]
  const rounds = ours.rounds.map((value, i) => {
    const best = Math.min(...alternatives.map((r) => r[scenario].rounds[i] ?? Number.NaN))
    return value / best
  })
  const value = rounds.length === 0 ? ours.medianUs / fastest[scenario].medianUs : percentile(rounds, 0.5)
  return { ratio: spreadOf(value, rounds), fastest }
}

const scenarioNames: Record<Scenario, string> = {
  toolCallRun: "one mocked tool-call run",
  singleTurn: "a single turn with no tool call",
  multiTurn: `a ${turns}-turn run`
}

/** A chat target: Rolecraft's scenario ≤ `limit`× the fastest alternative's, in every round. */
const chatTarget = (
  rolecraft: PeerResult | undefined,
  alternatives: ReadonlyArray<PeerResult>,
  scenario: Scenario,
  limit: number
): Target => {
  const { ratio, fastest } = againstFastest(rolecraft, alternatives, scenario)
  const measured = Number.isFinite(ratio.value)
  return {
    name: scenarioNames[scenario],
    limit: `≤ ${limit}× the fastest alternative`,
    measured: measured
      ? `${us(rolecraft?.[scenario].medianUs ?? Number.NaN)} µs vs ${fastest?.name} ${us(fastest?.[scenario].medianUs ?? Number.NaN)} µs = ${spread(ratio)}`
      : "not measured",
    met: measured ? metInEvery(ratio, limit) : undefined
  }
}

/** The limit of every chat scenario, as a share of the fastest alternative. */
export const chatLimit = 0.3

const scenarioTable = (
  title: string,
  results: ReadonlyArray<PeerResult>,
  pick: (result: PeerResult) => Figures,
  perTurn: boolean
): Table => {
  const rolecraft = results.find((r) => r.peer === "rolecraft")
  const reference = rolecraft === undefined ? undefined : pick(rolecraft)
  return {
    title,
    columns: [
      "framework",
      "median µs",
      "p95 µs",
      "samples",
      "rounds' medians µs",
      ...(perTurn ? ["µs per turn"] : []),
      "× Rolecraft"
    ],
    rows: results.map((result) => {
      const figures = pick(result)
      return [
        result.name,
        us(figures.medianUs),
        us(figures.p95Us),
        String(figures.samples),
        figures.rounds.map(us).join(", "),
        ...(perTurn ? [us(figures.medianUs / turns)] : []),
        reference === undefined ? "—" : times(figures.medianUs / reference.medianUs)
      ]
    })
  }
}

/** Builds the section from the per-framework results (separate from running, so tests can check it). */
export const chatSection = (results: ReadonlyArray<PeerResult>): Section => {
  const rolecraft = results.find((r) => r.peer === "rolecraft")
  const alternatives = results.filter((r) => r.peer !== "rolecraft")
  const memory = rolecraft?.memory
  const memoryMet = rolecraft === undefined ? undefined : constantInEvery(rolecraft)
  return {
    title: "Chat scenarios against the alternatives",
    description:
      "Each framework runs its own idiomatic loop (Rolecraft `agent.chat`, AI SDK `generateText` with `stopWhen`, " +
      "Agents JS `run`, LangChain `createAgent`) over a fake model at its own model boundary that answers " +
      "instantly from one script: ask for `get_weather({ city })` until N tool results are in the conversation, " +
      "then answer. Each run asserts that the tool ran exactly N times and that the final text arrived. Every " +
      "framework runs in a fresh Node process: warm-up, then runs awaited one at a time (each sample is one run). " +
      `${childRounds} round(s), interleaved: each round runs every framework once, each in a fresh process; a ` +
      "ratio is read per round against that round's fastest alternative. " +
      "Heap growth: a forced GC and a heap reading inside the tool run at turns 1, 5, …, 25 of the 25-turn run, " +
      `median over ${memoryRepetitions} repetitions, and the least-squares slope of each half (the median round shown; ` +
      "constant only if constant in every round).",
    tables: [
      scenarioTable("One mocked tool-call run (tool call, tool run, answer)", results, (r) => r.toolCallRun, false),
      scenarioTable("A single turn with no tool call", results, (r) => r.singleTurn, false),
      scenarioTable(
        `A ${turns}-turn run (${turns} tool calls in sequence, then the answer)`,
        results,
        (r) => r.multiTurn,
        true
      ),
      {
        title: `Retained heap growth per turn over the ${turns}-turn run`,
        columns: ["framework", "KiB per turn", "turns 1–13", "turns 13–25", "constant"],
        rows: results.map((r) =>
          r.memory === undefined
            ? [r.name, "not measured", "", "", ""]
            : [
                r.name,
                kib(r.memory.perTurn),
                kib(r.memory.early),
                kib(r.memory.late),
                constantInEvery(r) === true ? "yes" : "no"
              ]
        )
      },
      ...(results.some((r) => r.hops !== undefined)
        ? [
            hopsTable(
              "What one run schedules (instrumented run in the first round: 50 runs each, 5 of the long one; per run)",
              results.flatMap((r) => (r.hops ?? []).map((hops) => ({ ...hops, name: `${r.name}: ${hops.name}` })))
            )
          ]
        : [])
    ],
    targets: [
      chatTarget(rolecraft, alternatives, "toolCallRun", chatLimit),
      chatTarget(rolecraft, alternatives, "singleTurn", chatLimit),
      chatTarget(rolecraft, alternatives, "multiTurn", chatLimit),
      {
        name: `heap growth per turn over ${turns} turns`,
        limit: "constant (slope of turns 13–25 ≤ 1.25× that of turns 1–13, + 1 KiB), in every round",
        measured:
          memory === undefined ? "not measured" : `${kib(memory.early)} KiB then ${kib(memory.late)} KiB per turn`,
        met: memoryMet
      }
    ],
    notes: [
      "The tool is offered in every scenario; in the single turn the model answers without calling it.",
      "OpenAI Agents JS runs with tracing disabled: its default exporter posts traces to OpenAI's servers.",
      "LangChain.js runs over a small `BaseChatModel` subclass, not `fakeModel()` from `@langchain/core/testing`, " +
        "whose reply queue and call record grow with every call."
    ]
  }
}

/**
 * Runs every framework's scenarios in `rounds` interleaved rounds: each round
 * runs every framework once, one child process each, one after another.
 */
export const bench = async (only?: ReadonlyArray<Peer>, rounds = childRounds): Promise<Section> => {
  const chosen = only ?? (Object.keys(peers) as Array<Peer>)
  const byPeer = new Map<Peer, Array<PeerResult>>(chosen.map((peer) => [peer, []]))
  for (let round = 0; round < rounds; round++) {
    // The instrumented run (what one run schedules) in the first round of the quiet pass only.
    const withHops = round === 0 && !loadedPass() && !quickMode()
    for (const peer of chosen) byPeer.get(peer)?.push(await measureInChild(peer, withHops))
  }
  return chatSection(chosen.map((peer) => combineResults(byPeer.get(peer) ?? [])))
}

if (isMain(import.meta)) {
  const child = process.argv.indexOf("--child")
  if (child !== -1) {
    const peer = process.argv[child + 1] as Peer
    if (!(peer in peers)) throw new Error(`unknown framework ${peer}; one of ${Object.keys(peers).join(", ")}`)
    console.log(JSON.stringify(await measurePeer(peer, process.argv.includes("--hops"))))
  } else {
    const only = process.argv.slice(2).filter((arg): arg is Peer => arg in peers)
    await printSection(() => bench(only.length === 0 ? undefined : only))
  }
}
