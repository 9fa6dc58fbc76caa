/**
 * Every random value a test draws comes from here, so a failure that depends on one can be replayed.
 *
 * The test run has one seed: drawn once by the global setup (test/setup/seed.ts), which prints it, or given as
 * `ROLECRAFT_TEST_SEED=<integer>` to replay a run. When a test fails, the run's seed is printed under the test's
 * name with the command that replays it (test/setup/seeded.ts); fast-check's `fc.assert` is configured with the
 * same seed, and prints its own counterexample path beside it.
 *
 * Each test draws from its own stream, made of the run's seed, the test file and the test's full name: a test's
 * values do not change when another test draws more or less, or when it runs alone (`-t`).
 *
 * ```ts
 * import * as Seeded from "../support/seeded.ts" // from test/; ../../../../test/support/seeded.ts from packages/x/test
 *
 * Seeded.random()            // a number in [0, 1), as Math.random gives
 * Seeded.int(1, 6)           // an integer from 1 to 6, both included
 * Seeded.randomBytes(16)     // a Buffer of 16 bytes, as crypto.randomBytes gives
 * Seeded.randomUUID()        // a version 4 UUID, as crypto.randomUUID gives
 * Seeded.draw(fc.string())   // one value of any fast-check arbitrary
 * Seeded.seed()              // the run's seed (fc.assert already uses it)
 * Seeded.unique("thread")    // a name no other run uses, for shared stores: not random, it draws nothing
 * ```
 *
 * `npm run check` (scripts/check-randomness.ts) refuses `Math.random`, `randomBytes`, `randomUUID`, `randomInt`,
 * `randomFill` and `getRandomValues` in any test file but this one and the global setup that draws the seed.
 */
import * as fc from "fast-check"
import { relative } from "node:path"
import { expect, inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's seed and an id no other run has (test/setup/seed.ts). */
    readonly seeded: { readonly seed: number; readonly run: string }
  }
}

/** The environment variable that replays a run: `ROLECRAFT_TEST_SEED=<integer>`. */
export const seedVariable = "ROLECRAFT_TEST_SEED"

/** A seed given in the environment, or `undefined` when none is; throws on one that is not a 32-bit integer. */
export const givenSeed = (environment: NodeJS.ProcessEnv = process.env): number | undefined => {
  const given = environment[seedVariable]?.trim()
  if (given === undefined || given === "") return undefined
  const seed = Number(given)
  if (!Number.isSafeInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 32) {
    throw new Error(`${seedVariable} must be an integer from -2147483648 to 4294967295, got ${JSON.stringify(given)}`)
  }
  return seed | 0
}

let provided: { readonly seed: number; readonly run: string } | undefined

const context = (): { readonly seed: number; readonly run: string } => {
  if (provided !== undefined) return provided
  const given = givenSeed()
  // A process a test started itself (not a vitest worker) is given the seed by its parent in the environment.
  if (process.env.VITEST_WORKER_ID === undefined) {
    if (given === undefined) throw new Error(`no test seed: run under vitest or set ${seedVariable}`)
    provided = { seed: given, run: `${Date.now().toString(36)}-${process.pid}` }
  } else {
    provided = inject("seeded")
  }
  return provided
}

/** The run's seed. */
export const seed = (): number => context().seed

/** A replay command for the current test: the seed, its file and its name. */
export const replay = (): string => {
  const state = expect.getState()
  const file = state.testPath === undefined ? "" : ` ${relative(process.cwd(), state.testPath)}`
  // `-t` takes a pattern: the name's own special characters are escaped.
  const pattern = state.currentTestName?.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const name = pattern === undefined ? "" : ` -t '^${pattern.replaceAll("'", "'\\''")}$'`
  return `${seedVariable}=${seed()} npx vitest run${file}${name}`
}

/** FNV-1a over the text, as a 32-bit integer: the seed of one stream. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h | 0
}

/** How many values each stream (file and test) has drawn. */
const drawn = new Map<string, number>()

/** Whether the test of this stream key drew anything (the failure report says so). */
export const drewIn = (key: string): boolean => (drawn.get(key) ?? 0) > 0

/** The current stream: the test file and the running test's full name (or the file's collection). */
export const streamKey = (): string => {
  const state = expect.getState()
  return `${state.testPath ?? "(no file)"} > ${state.currentTestName ?? "(collecting)"}`
}

/**
 * One value of a fast-check arbitrary, the next of the current test's stream. Drawn without fast-check's bias
 * towards small and extreme values: `draw(fc.uuid())` looks like any UUID, not `00000000-…`.
 */
export const draw = <A>(arbitrary: fc.Arbitrary<A>): A => {
  const key = streamKey()
  const index = drawn.get(key) ?? 0
  drawn.set(key, index + 1)
  const [value] = fc.sample(fc.noBias(arbitrary), { seed: hash(`${seed()}\u0000${key}\u0000${index}`), numRuns: 1 })
  return value as A
}

/** A number in [0, 1), as `Math.random()` gives (53 random bits, evenly spread). */
export const random = (): number => draw(fc.maxSafeNat()) / 2 ** 53

/** An integer from `min` to `max`, both included. */
export const int = (min: number, max: number): number => draw(fc.integer({ min, max }))

/** `size` bytes, as `crypto.randomBytes(size)` gives. */
export const randomBytes = (size: number): Buffer =>
  Buffer.from(draw(fc.uint8Array({ minLength: size, maxLength: size })))

/** A version 4 UUID (lower case), as `crypto.randomUUID()` gives. */
export const randomUUID = (): string => draw(fc.uuid({ version: 4 }))

let uniques = 0

/**
 * A name no other test, process or run uses: `<prefix>-<run id>-<process>-<count>`. Not random (it draws
 * nothing, and a replayed run gets new names): for keys in stores other runs share, such as the shared Postgres.
 */
export const unique = (prefix: string): string => `${prefix}-${context().run}-${process.pid}-${++uniques}`

/** The runs of a property: `SCHEDULE_RUNS` when set (scripts/fault-properties.ts sets the nightly size), else `size`. */
export const runs = (size: number): number =>
  process.env.SCHEDULE_RUNS === undefined ? size : Math.max(1, Number.parseInt(process.env.SCHEDULE_RUNS, 10))

/**
 * Checks `property` with the run's seed and `runs(size)` runs; a failure is rethrown naming the property, the seed
 * and the command that replays it.
 */
export const check = async <Ts extends [unknown, ...Array<unknown>]>(
  name: string,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  size: number
): Promise<void> => {
  const numRuns = runs(size)
  try {
    await fc.assert(property, { seed: seed(), numRuns })
  } catch (error) {
    const text = `${name}: failed with seed ${seed()} (${numRuns} runs); replay with ${replay()}`
    console.error(text)
    throw new Error(`${text}\n${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
}
