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
import { format, measure } from "./measure.ts"

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

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "bench", roles: [travel] })
  const direct = yield* measure("direct call", () => Effect.sync(() => nights(args.checkIn, args.checkOut)))
  const fn = yield* measure("traced Effect.fn", () => traced(args.checkIn, args.checkOut))
  const pipeline = yield* measure("executeAction (local)", () => agent.executeAction("nights", args))
  console.log(format([direct, fn, pipeline]))
  const overhead = pipeline.medianUs - direct.medianUs
  const ratio = overhead / fn.medianUs
  console.log(
    `\nexecuteAction overhead: ${overhead.toFixed(2)} µs = ${ratio.toFixed(2)}× one traced Effect.fn call (target ≤ 3×)`
  )
}).pipe(Effect.scoped)

Effect.runPromise(program)
