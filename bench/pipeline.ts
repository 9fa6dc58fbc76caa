/**
 * The cost of Rolecraft's pipeline: `executeAction` on a local action next to
 * a direct call of the same function and one traced `Effect.fn` call, all in
 * this run. Prints figures; asserts nothing. Target (issue 2): the overhead of
 * `executeAction` over the direct call is at most 3× one traced `Effect.fn`.
 *
 * Run: node bench/pipeline.ts
 */
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Schema } from "effect"
import { compare, type Figures } from "./measure.ts"
import { figuresTable, formatText, isMain, type Section, times, us } from "./report.ts"

const nights = (checkIn: string, checkOut: string): number =>
  Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => nights(checkIn, checkOut)
    })
  }
})

// biome-ignore lint/correctness/useYield: the traced function under test does no effectful work
const traced = Effect.fn("nights")(function* (checkIn: string, checkOut: string) {
  return nights(checkIn, checkOut)
})

const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }

/**
 * The three rows, in one running Effect: direct call, traced `Effect.fn`,
 * `executeAction`, sampled round-robin so load changes weigh on all three.
 */
export const measurePipeline: Effect.Effect<ReadonlyArray<Figures>, unknown> = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "bench", roles: [travel] })
  return yield* compare([
    { name: "direct call", call: () => Effect.sync(() => nights(args.checkIn, args.checkOut)) },
    { name: "traced Effect.fn", call: () => traced(args.checkIn, args.checkOut) },
    { name: "executeAction (local)", call: () => agent.executeAction("nights", args) }
  ])
}).pipe(Effect.scoped)

const overheadOf = (rows: ReadonlyArray<Figures>) => {
  const [direct, fn, pipeline] = rows
  const overhead = (pipeline?.medianUs ?? Number.NaN) - (direct?.medianUs ?? Number.NaN)
  return { overhead, ratio: overhead / (fn?.medianUs ?? Number.NaN) }
}

/** The pipeline bench as a report section (target: overhead ≤ 3× a traced `Effect.fn`). */
export const bench = async (): Promise<Section> => {
  const rows = await Effect.runPromise(measurePipeline)
  const { overhead, ratio } = overheadOf(rows)
  return {
    title: "executeAction on a local action",
    description:
      "One running Effect times a direct call of the action's function (wrapped in `Effect.sync`), the same " +
      "function as a traced `Effect.fn`, and `agent.executeAction` on it (the whole SPEC §9 pipeline). " +
      "Each sample is the mean of a batch of 200 calls, after 20 000 warm-up calls; samples are taken " +
      "round-robin (one batch of each in turn).",
    tables: [figuresTable(rows, "traced Effect.fn")],
    targets: [
      {
        name: "executeAction overhead over a direct call",
        limit: "≤ 3× one traced Effect.fn",
        measured: `${us(overhead)} µs = ${times(ratio)}`,
        met: Number.isFinite(ratio) ? ratio <= 3 : undefined
      }
    ],
    notes: []
  }
}

if (isMain(import.meta)) console.log(formatText(await bench()))
