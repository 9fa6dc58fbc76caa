/**
 * A small timing harness: warm-up, then samples of batches, reported as the
 * median and p95 of the per-call cost in microseconds. `measure` and
 * `compare` (several calls, sampled round-robin) time Effects inside one
 * running Effect; `measureAsync` and `compareAsync` time Promise-returning
 * calls (the other frameworks, raw SDKs). All drive the same sampler, so the
 * plan (warm-up, batches, rounds, time budget) and the statistics are one
 * piece of code.
 *
 * Samples are taken in rounds (default 3): every contender's first round,
 * then every contender's second, and so on, each round round-robin. A ratio
 * is then read per round (`ratioOf`), and a target is met only when it is
 * met in every round (`metInEvery`), so one lucky stretch of a quiet machine
 * cannot make a verdict.
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect } from "effect"

export interface Figures {
  readonly name: string
  /** Median cost of one call, µs (of the per-batch averages). */
  readonly medianUs: number
  /** 95th percentile of the per-batch averages, µs. */
  readonly p95Us: number
  /** How many samples (batches) the figures come from. */
  readonly samples: number
  /** The median of each round, µs, in the order the rounds ran. */
  readonly rounds: ReadonlyArray<number>
}

/**
 * The sampling plan.
 *
 * - `warmup`: calls before timing starts (default 20 000).
 * - `warmupMs`: stop warming up after this long, even before `warmup` calls
 *   (default: no limit). Keeps slow frameworks inside the run's time limit.
 * - `samples`: the most batches timed (default 200).
 * - `batch`: calls per timed batch; the sample is the batch's mean (default 200).
 * - `budgetMs`: stop taking samples after this long, once `minSamples` are
 *   in (default: no budget). Keeps slow frameworks inside the run's time limit.
 * - `minSamples`: the fewest samples a budget may stop at (default 20).
 * - `rounds`: rounds the samples are split into (default 3); `samples`,
 *   `budgetMs` and `minSamples` are shared out evenly among them.
 */
export interface Options {
  readonly warmup?: number
  readonly warmupMs?: number
  readonly samples?: number
  readonly batch?: number
  readonly budgetMs?: number
  readonly minSamples?: number
  readonly rounds?: number
}

/**
 * Whether this bench process runs in quick mode (`npm run bench -- --quick`
 * passes `--quick` to every section): every sampling plan takes a quarter
 * of its warm-up, samples and time budget, and sections that run rounds of
 * child processes run fewer (see {@link defaultRounds}).
 */
export const quickMode = (): boolean => process.env.ROLECRAFT_BENCH_QUICK === "1"

// `--quick` reaches every process this one starts (the sections' own children) through the environment
if (process.argv.includes("--quick")) process.env.ROLECRAFT_BENCH_QUICK = "1"

/** What a quick run keeps of a plan's warm-up, samples and budgets. */
const quickShare = 0.25

/** The rounds a plan takes unless it says otherwise: 3, or 2 in quick mode. */
export const defaultRounds = quickMode() ? 2 : 3

/** Rounds of child processes (one per framework per round) in the sections that run them: 1 in quick mode. */
export const childRounds = quickMode() ? 1 : defaultRounds

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

/** The `q` quantile (0–1) of unsorted `values`, nearest-rank; NaN when empty. */
export const percentile = (values: ReadonlyArray<number>, q: number): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    q
  )

/**
 * Median and p95 of per-call costs in µs (unsorted input); `rounds` holds
 * the samples of each round (default: all of them as one round).
 */
export const summarize = (
  name: string,
  perCallUs: ReadonlyArray<number>,
  rounds: ReadonlyArray<ReadonlyArray<number>> = [perCallUs]
): Figures => {
  const sorted = [...perCallUs].sort((a, b) => a - b)
  return {
    name,
    medianUs: quantile(sorted, 0.5),
    p95Us: quantile(sorted, 0.95),
    samples: sorted.length,
    rounds: rounds.filter((round) => round.length > 0).map((round) => percentile(round, 0.5))
  }
}

/**
 * Figures of separate runs taken as rounds (each run a child process, say):
 * the median of the runs' medians and p95s, their samples added up, one
 * round per run.
 */
export const combineRounds = (name: string, runs: ReadonlyArray<Figures>): Figures => ({
  name,
  medianUs: percentile(
    runs.map((run) => run.medianUs),
    0.5
  ),
  p95Us: percentile(
    runs.map((run) => run.p95Us),
    0.5
  ),
  samples: runs.reduce((sum, run) => sum + run.samples, 0),
  rounds: runs.map((run) => run.medianUs)
})

/**
 * A figure read per round: `rounds` one per round, `value` their median
 * (or the whole run's when there are no rounds), `min` and `max` over the
 * rounds.
 */
export interface Spread {
  readonly value: number
  readonly rounds: ReadonlyArray<number>
  readonly min: number
  readonly max: number
}

/** A spread from its overall value and per-round values. */
export const spreadOf = (value: number, rounds: ReadonlyArray<number>): Spread => ({
  value,
  rounds,
  min: rounds.length === 0 ? Number.NaN : Math.min(...rounds),
  max: rounds.length === 0 ? Number.NaN : Math.max(...rounds)
})

/**
 * `f` of some figures round by round (from each round's medians; a round
 * some figure lacks is left out), headed by the rounds' median, e.g. a ratio
 * `([a, b]) => a / b` or an overhead `([row, direct, fn]) => (row - direct) / fn`.
 */
export const spreadAcross = (
  figures: ReadonlyArray<Figures | undefined>,
  f: (medians: ReadonlyArray<number>) => number
): Spread => {
  const present = figures.filter((row): row is Figures => row !== undefined)
  if (present.length < figures.length) return spreadOf(Number.NaN, [])
  const count = Math.min(...present.map((row) => row.rounds.length))
  const rounds = Array.from({ length: count }, (_, i) => f(present.map((row) => row.rounds[i] ?? Number.NaN)))
  // The rounds' median, so the headline lies within the range shown; without rounds, the overall medians'.
  return spreadOf(rounds.length === 0 ? f(present.map((row) => row.medianUs)) : percentile(rounds, 0.5), rounds)
}

/** `a / b`, overall and per round. */
export const ratioOf = (a: Figures | undefined, b: Figures | undefined): Spread =>
  spreadAcross([a, b], ([x = Number.NaN, y = Number.NaN]) => x / y)

/** True when every round's value is at most `limit` (false when there are no rounds). */
export const metInEvery = (spread: Spread, limit: number): boolean =>
  spread.rounds.length > 0 && spread.rounds.every((value) => Number.isFinite(value) && value <= limit)

const now = (): bigint => process.hrtime.bigint()

/**
 * The plan and the record of one measurement; the loops around it differ
 * only in how a call is awaited. `begin(round)` starts a round: each round
 * takes its share of the samples within its share of the budget.
 */
const sampler = (given: Options) => {
  const options = quickMode() ? quickPlan(given) : given
  const { warmup = 20_000, samples = 200, batch = 200, budgetMs = Number.POSITIVE_INFINITY, minSamples = 20 } = options
  const rounds = Math.max(1, Math.floor(options.rounds ?? defaultRounds))
  const perRound = Math.max(1, Math.ceil(samples / rounds))
  const minPerRound = Math.min(perRound, Math.max(1, Math.ceil(minSamples / rounds)))
  const taken: Array<Array<number>> = Array.from({ length: rounds }, () => [])
  let current: Array<number> = []
  let deadline = Number.POSITIVE_INFINITY
  const warmupMs = options.warmupMs ?? Number.POSITIVE_INFINITY
  let warmupDeadline = Number.POSITIVE_INFINITY
  let warmed = 0
  return {
    batch,
    rounds,
    /** Whether to warm up with one more call (call it once per warm-up call). */
    warming: (): boolean => {
      if (warmed === 0) warmupDeadline = performance.now() + warmupMs
      if (warmed >= warmup || (warmed > 0 && performance.now() >= warmupDeadline)) return false
      warmed += 1
      return true
    },
    begin: (round: number): void => {
      current = taken[round] ?? []
      deadline = performance.now() + budgetMs / rounds
    },
    more: (): boolean => current.length < perRound && (current.length < minPerRound || performance.now() < deadline),
    start: now,
    stop: (start: bigint): void => {
      current.push(Number(now() - start) / 1000 / batch)
    },
    figures: (name: string): Figures => summarize(name, taken.flat(), taken)
  }
}

/** A plan cut to {@link quickShare} of its warm-up, samples and budgets (at least one round's worth). */
const quickPlan = (options: Options): Options => {
  const cut = (value: number | undefined, fallback: number, least: number) =>
    Math.max(least, Math.ceil((value ?? fallback) * quickShare))
  return {
    ...options,
    warmup: cut(options.warmup, 20_000, 1),
    samples: cut(options.samples, 200, options.rounds ?? defaultRounds),
    minSamples: cut(options.minSamples, 20, options.rounds ?? defaultRounds),
    ...(options.warmupMs === undefined ? {} : { warmupMs: options.warmupMs * quickShare }),
    ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs * quickShare })
  }
}

/** A named call to time. */
export interface Contender<A> {
  readonly name: string
  readonly call: () => A
}

/**
 * Times several calls side by side inside one running Effect: each is warmed
 * up, then samples are taken in rounds, each round round-robin (one batch of
 * each in turn), so a change of load on the machine weighs on every
 * contender alike and their ratios stay meaningful on a busy machine.
 * Figures come back in order.
 */
export const compare = <R = never>(
  contenders: ReadonlyArray<Contender<Effect.Effect<unknown, unknown, R>>>,
  options: Options = {}
): Effect.Effect<ReadonlyArray<Figures>, unknown, R> =>
  Effect.gen(function* () {
    const plans = contenders.map(() => sampler(options))
    for (const [i, { call }] of contenders.entries()) {
      while (plans[i]?.warming()) yield* call()
    }
    const rounds = Math.max(...plans.map((plan) => plan.rounds))
    for (let round = 0; round < rounds; round++) {
      for (const plan of plans) plan.begin(round)
      while (plans.some((plan) => plan.more())) {
        for (const [i, { call }] of contenders.entries()) {
          const plan = plans[i]
          if (plan === undefined || !plan.more()) continue
          const start = plan.start()
          for (let k = 0; k < plan.batch; k++) yield* call()
          plan.stop(start)
        }
      }
    }
    return contenders.map(({ name }, i) => plans[i]?.figures(name) ?? summarize(name, []))
  })

/**
 * Times `call` inside one running Effect: `samples` batches of `batch` calls
 * each, after `warmup` calls.
 */
export const measure = <R = never>(
  name: string,
  call: () => Effect.Effect<unknown, unknown, R>,
  options: Options = {}
): Effect.Effect<Figures, unknown, R> =>
  Effect.map(compare([{ name, call }], options), (rows) => rows[0] ?? summarize(name, []))

/**
 * `compare` for Promise-returning calls (the other frameworks, raw SDKs):
 * each call is awaited before the next starts. A rejection rejects the
 * measurement (the scenarios assert their tool counters by rejecting).
 */
export const compareAsync = async (
  contenders: ReadonlyArray<Contender<Promise<unknown>>>,
  options: Options = {}
): Promise<ReadonlyArray<Figures>> => {
  const plans = contenders.map(() => sampler(options))
  for (const [i, { call }] of contenders.entries()) {
    while (plans[i]?.warming()) await call()
  }
  const rounds = Math.max(...plans.map((plan) => plan.rounds))
  for (let round = 0; round < rounds; round++) {
    for (const plan of plans) plan.begin(round)
    while (plans.some((plan) => plan.more())) {
      for (const [i, { call }] of contenders.entries()) {
        const plan = plans[i]
        if (plan === undefined || !plan.more()) continue
        const start = plan.start()
        for (let k = 0; k < plan.batch; k++) await call()
        plan.stop(start)
      }
    }
  }
  return contenders.map(({ name }, i) => plans[i]?.figures(name) ?? summarize(name, []))
}

/** Times a Promise-returning `call` the same way as `measure`. */
export const measureAsync = async (
  name: string,
  call: () => Promise<unknown>,
  options: Options = {}
): Promise<Figures> => (await compareAsync([{ name, call }], options))[0] ?? summarize(name, [])

export const format = (rows: ReadonlyArray<Figures>): string => {
  const width = Math.max(...rows.map((r) => r.name.length))
  return rows
    .map(
      (r) =>
        `${r.name.padEnd(width)}  median ${r.medianUs.toFixed(2).padStart(8)} µs   p95 ${r.p95Us.toFixed(2).padStart(8)} µs`
    )
    .join("\n")
}

/**
 * A full garbage collection: `globalThis.gc` when node runs with
 * `--expose-gc` (as `run.ts` starts every section), else the same function
 * exposed at first use through V8's flags.
 */
export const collectGarbage = (): void => {
  exposed ??= globalThis.gc ?? exposeGc()
  exposed()
}

let exposed: (() => void) | undefined

const exposeGc = (): (() => void) => {
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
}

/** Whether this bench process runs the loaded pass (`run.ts` passes `--loaded` while a core is kept busy). */
export const loadedPass = (): boolean => process.argv.includes("--loaded")
