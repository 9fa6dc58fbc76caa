/**
 * A small timing harness: warm-up, then samples of batches, reported as the
 * median and p95 of the per-call cost in microseconds.
 */
import { Effect } from "effect"

export interface Figures {
  readonly name: string
  readonly medianUs: number
  readonly p95Us: number
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

/**
 * Times `call` inside one running Effect: `samples` batches of `batch` calls
 * each, after `warmup` calls.
 */
export const measure = (
  name: string,
  call: () => Effect.Effect<unknown, unknown>,
  options: { readonly warmup?: number; readonly samples?: number; readonly batch?: number } = {}
): Effect.Effect<Figures, unknown> =>
  Effect.gen(function* () {
    const { warmup = 20_000, samples = 200, batch = 200 } = options
    for (let i = 0; i < warmup; i++) yield* call()
    const perCall: Array<number> = []
    for (let s = 0; s < samples; s++) {
      const start = process.hrtime.bigint()
      for (let i = 0; i < batch; i++) yield* call()
      perCall.push(Number(process.hrtime.bigint() - start) / 1000 / batch)
    }
    perCall.sort((a, b) => a - b)
    return { name, medianUs: quantile(perCall, 0.5), p95Us: quantile(perCall, 0.95) }
  })

export const format = (rows: ReadonlyArray<Figures>): string => {
  const width = Math.max(...rows.map((r) => r.name.length))
  return rows
    .map(
      (r) =>
        `${r.name.padEnd(width)}  median ${r.medianUs.toFixed(2).padStart(8)} µs   p95 ${r.p95Us.toFixed(2).padStart(8)} µs`
    )
    .join("\n")
}
