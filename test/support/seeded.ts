/**
 * Seeded property runs: every run of a property takes its seed from
 * `SCHEDULE_SEED` (to replay a failure) or draws one, and a failure names the
 * seed and how to run it again. The number of runs is the caller's size at
 * `npm test`, or `SCHEDULE_RUNS` (scripts/fault-properties.ts sets the
 * nightly size).
 */
import * as fc from "fast-check"

/** The seed of this process's property runs: `SCHEDULE_SEED`, else drawn once. */
export const seed: number =
  process.env.SCHEDULE_SEED === undefined
    ? Math.floor(Math.random() * 0x7fffffff)
    : Number.parseInt(process.env.SCHEDULE_SEED, 10)

/** The runs of a property: `SCHEDULE_RUNS` when set, else `size` (the `npm test` size). */
export const runs = (size: number): number =>
  process.env.SCHEDULE_RUNS === undefined ? size : Math.max(1, Number.parseInt(process.env.SCHEDULE_RUNS, 10))

/** Checks `property` with the seed; a failure is rethrown naming the property, the seed and the replay command. */
export const check = async <Ts extends [unknown, ...Array<unknown>]>(
  name: string,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  size: number
): Promise<void> => {
  const numRuns = runs(size)
  try {
    await fc.assert(property, { seed, numRuns })
  } catch (error) {
    const text = `${name}: failed with seed ${seed} (${numRuns} runs); replay with SCHEDULE_SEED=${seed}`
    console.error(text)
    throw new Error(`${text}\n${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
}
