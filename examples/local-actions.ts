/**
 * Local actions through the agent's pipeline: the seeds' `nights` with string
 * dates, a failing call reported in an `ActionResponse`, and a flaky action
 * that succeeds on its third attempt under a retry policy.
 *
 * Run: node examples/local-actions.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, ActionError, Agent, Role } from "@rolecraft/core"
import { Console, Effect, Schema } from "effect"

let flakyCalls = 0

export const TravelRole = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    availability: Action.local({
      description: "Rooms left at a hotel (the upstream is busy twice before it answers)",
      parameters: { hotelId: Schema.String },
      run: ({ hotelId }) => {
        flakyCalls += 1
        return flakyCalls < 3
          ? Effect.fail(new ActionError.TransientFailure({ action: "availability", message: "upstream busy" }))
          : Effect.succeed({ hotelId, roomsLeft: 4, attempts: flakyCalls })
      }
    }).pipe(Action.resilience({ retry: { maxAttempts: 3, initialDelay: "50 millis" } }))
  }
})

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "planner", roles: [TravelRole] })

  const nights = yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
  yield* Console.log(`nights(2026-11-02, 2026-11-05) -> ${nights}`)

  const response = yield* agent.execute({ action: "nights", params: { checkIn: "2026-11-02" } })
  yield* Console.log(
    response.success
      ? `unexpected success: ${String(response.value)}`
      : `nights(checkIn only) -> ${response.error.category}: ${response.error.message}`
  )

  const rooms = yield* agent.executeAction("availability", { hotelId: "h-42" })
  yield* Console.log(`availability(h-42) -> ${JSON.stringify(rooms)}`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
