/**
 * The seeded random helper (test/support/seeded.ts): what it draws looks like what `Math.random`,
 * `crypto.randomBytes` and `crypto.randomUUID` give; a run replayed with `ROLECRAFT_TEST_SEED` draws the same
 * values in every test (fast-check's runs included), tests draw different values, and a failed test prints the
 * seed with the command that replays it.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Seeded from "./support/seeded.ts"

const fixture = join(import.meta.dirname, "fixtures", "seeded")

/** Runs the fixture's tests in a child vitest with the given seed: its output and exit code. */
const runFixture = (seed: string) =>
  new Promise<{ readonly output: string; readonly code: number | null }>((resolve) => {
    // The child is a vitest of its own, not a worker of this one.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")))
    execFile(
      process.execPath,
      [
        join(import.meta.dirname, "..", "node_modules", "vitest", "vitest.mjs"),
        "run",
        "--config",
        join(fixture, "vitest.config.ts")
      ],
      { env: { ...env, ROLECRAFT_TEST_SEED: seed, NO_COLOR: "1" }, cwd: fixture, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          output: `${stdout}${stderr}`,
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null
        })
    )
  })

const drawnBy = (output: string): Record<string, unknown> =>
  Object.fromEntries(
    [...output.matchAll(/^DRAWN (\S+) (.*)$/gm)].map((match) => [match[1] as string, JSON.parse(match[2] as string)])
  )

describe("seeded random values for tests", () => {
  it("draws values of the shapes Math.random, randomBytes and randomUUID give", () => {
    for (let i = 0; i < 50; i++) {
      const unit = Seeded.random()
      assert.isTrue(unit >= 0 && unit < 1, String(unit))
      const die = Seeded.int(1, 6)
      assert.isTrue(Number.isInteger(die) && die >= 1 && die <= 6, String(die))
      assert.strictEqual(Seeded.randomBytes(16).length, 16)
      assert.match(Seeded.randomUUID(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    }
    // Unbiased: a hundred UUIDs are a hundred, none of fast-check's small "edge" ones.
    const uuids = Array.from({ length: 100 }, () => Seeded.randomUUID())
    assert.strictEqual(new Set(uuids).size, 100)
    assert.isFalse(uuids.some((uuid) => uuid.startsWith("0000")))
    const letters = new Set(Array.from({ length: 50 }, () => Seeded.draw(fc.constantFrom("a", "b", "c"))))
    assert.deepStrictEqual([...letters].sort(), ["a", "b", "c"])
  })

  it("a name from unique() is new on every call and carries the run's id", () => {
    const names = Array.from({ length: 20 }, () => Seeded.unique("thread"))
    assert.strictEqual(new Set(names).size, 20)
    for (const name of names) assert.match(name, /^thread-\S+-\d+-\d+$/)
  })

  it("refuses a seed that is not a 32-bit integer, naming the variable", () => {
    assert.strictEqual(Seeded.givenSeed({ ROLECRAFT_TEST_SEED: "42" }), 42)
    assert.strictEqual(Seeded.givenSeed({}), undefined)
    assert.throws(
      () => Seeded.givenSeed({ ROLECRAFT_TEST_SEED: "forty-two" }),
      /ROLECRAFT_TEST_SEED must be an integer/
    )
  })

  it.live(
    "a replayed seed draws the same values, each test its own, and a failure prints the command that replays it",
    () =>
      Effect.gen(function* () {
        const [first, again, other] = yield* Effect.promise(() =>
          Promise.all([runFixture("7"), runFixture("7"), runFixture("8")])
        )
        for (const run of [first, again, other]) assert.strictEqual(run.code, 1, run.output)
        const drawn = drawnBy(first.output)
        assert.deepStrictEqual(Object.keys(drawn).sort(), ["failing", "first", "property", "second"], first.output)
        assert.deepStrictEqual(drawnBy(again.output), drawn)
        assert.notDeepEqual(drawn.first, drawn.second)
        assert.notDeepEqual(drawnBy(other.output).first, drawn.first)
        assert.notDeepEqual(drawnBy(other.output).property, drawn.property)
        assert.include(first.output, "test seed 7 (ROLECRAFT_TEST_SEED=7 replays it)")
        assert.include(
          first.output,
          "test seed 7; replay: ROLECRAFT_TEST_SEED=7 npx vitest run values.draws.ts -t '^fails \\(on purpose\\)$'"
        )
        assert.notInclude(first.output, "replay: ROLECRAFT_TEST_SEED=7 npx vitest run values.draws.ts -t '^first$'")
      }),
    120_000
  )
})
