/**
 * A small timing harness: warm-up, then samples of batches, reported as the
 * median and p95 of the per-call cost in microseconds. `measure` and
 * `compare` (several calls, sampled round-robin) time Effects inside one
 * running Effect; `measureAsync` and `compareAsync` time Promise-returning
 * calls (the other frameworks, raw SDKs). All drive the same sampler, so the
 * plan (warm-up, batches, time budget) and the statistics are one piece of
 * code.
 */
import { Effect } from "effect"

export interface Figures {
  readonly name: string
  /** Median cost of one call, µs (of the per-batch averages). */
  readonly medianUs: number
  /** 95th percentile of the per-batch averages, µs. */
  readonly p95Us: number
  /** How many samples (batches) the figures come from. */
  readonly samples: number
}

/**
 * The sampling plan.
 *
 * - `warmup`: calls before timing starts (default 20 000).
 * - `samples`: the most batches timed (default 200).
 * - `batch`: calls per timed batch; the sample is the batch's mean (default 200).
 * - `budgetMs`: stop taking samples after this long, once `minSamples` are
 *   in (default: no budget). Keeps slow frameworks inside the run's time limit.
 * - `minSamples`: the fewest samples a budget may stop at (default 20).
 */
export interface Options {
  readonly warmup?: number
  readonly samples?: number
  readonly batch?: number
  readonly budgetMs?: number
  readonly minSamples?: number
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

/** The `q` quantile (0–1) of unsorted `values`, nearest-rank; NaN when empty. */
export const percentile = (values: ReadonlyArray<number>, q: number): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    q
  )

/** Median and p95 of per-call costs in µs (unsorted input). */
export const summarize = (name: string, perCallUs: ReadonlyArray<number>): Figures => {
  const sorted = [...perCallUs].sort((a, b) => a - b)
  return { name, medianUs: quantile(sorted, 0.5), p95Us: quantile(sorted, 0.95), samples: sorted.length }
}

const now = (): bigint => process.hrtime.bigint()

/** The plan and the record of one measurement; the loops around it differ only in how a call is awaited. */
const sampler = (options: Options) => {
  const { warmup = 20_000, samples = 200, batch = 200, budgetMs = Number.POSITIVE_INFINITY, minSamples = 20 } = options
  const perCall: Array<number> = []
  let deadline = Number.POSITIVE_INFINITY
  return {
    warmup,
    batch,
    begin: (): void => {
      deadline = performance.now() + budgetMs
    },
    more: (): boolean => perCall.length < samples && (perCall.length < minSamples || performance.now() < deadline),
    start: now,
    stop: (start: bigint): void => {
      perCall.push(Number(now() - start) / 1000 / batch)
    },
    figures: (name: string): Figures => summarize(name, perCall)
  }
}

/** A named call to time. */
export interface Contender<A> {
  readonly name: string
  readonly call: () => A
}

/**
 * Times several calls side by side inside one running Effect: each is warmed
 * up, then samples are taken round-robin (one batch of each in turn), so a
 * change of load on the machine weighs on every contender alike and their
 * ratios stay meaningful on a busy machine. Figures come back in order.
 */
export const compare = <R = never>(
  contenders: ReadonlyArray<Contender<Effect.Effect<unknown, unknown, R>>>,
  options: Options = {}
): Effect.Effect<ReadonlyArray<Figures>, unknown, R> =>
  Effect.gen(function* () {
    const plans = contenders.map(() => sampler(options))
    for (const [i, { call }] of contenders.entries()) {
      for (let k = 0; k < (plans[i]?.warmup ?? 0); k++) yield* call()
    }
    for (const plan of plans) plan.begin()
    while (plans.some((plan) => plan.more())) {
      for (const [i, { call }] of contenders.entries()) {
        const plan = plans[i]
        if (plan === undefined || !plan.more()) continue
        const start = plan.start()
        for (let k = 0; k < plan.batch; k++) yield* call()
        plan.stop(start)
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
    for (let k = 0; k < (plans[i]?.warmup ?? 0); k++) await call()
  }
  for (const plan of plans) plan.begin()
  while (plans.some((plan) => plan.more())) {
    for (const [i, { call }] of contenders.entries()) {
      const plan = plans[i]
      if (plan === undefined || !plan.more()) continue
      const start = plan.start()
      for (let k = 0; k < plan.batch; k++) await call()
      plan.stop(start)
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
