/**
 * The travel role of the chat tests (the scripted model's in
 * packages/core/test/Chat.test.ts and the real SDK's in
 * test/chat-openai.test.ts): local actions that count their runs — one with
 * a `$ref`-shaped schema, one that needs approval, one that always fails, one
 * kept from the model, a slow one that records how many run at once.
 */
import { Effect, Schema } from "effect"
import * as Action from "../../src/Action.ts"
import { ExecutionFailure } from "../../src/ActionError.ts"
import * as Role from "../../src/Role.ts"

export const Location = Schema.Struct({ lat: Schema.Finite, lon: Schema.Finite }).annotate({ identifier: "Location" })

/** A fresh travel role and the run counts of its actions. */
export const fixture = () => {
  const counts = { nights: 0, add: 0, ping: 0, book: 0, broken: 0, secret: 0, slow: 0, inFlight: 0, maxInFlight: 0 }
  const travel = Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    spec: { goals: ["stay on budget", "prefer trains"] },
    actions: {
      nights: Action.local({
        description: "Count the nights between two dates",
        parameters: { checkIn: Schema.String, checkOut: Schema.String },
        run: ({ checkIn, checkOut }) => {
          counts.nights++
          return (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
        }
      }),
      add: Action.local({
        description: "Add two integers",
        parameters: { a: Schema.Int, b: Schema.Int },
        run: ({ a, b }) => {
          counts.add++
          return { sum: a + b }
        }
      }),
      ping: Action.local({
        description: "Check that the service is up",
        parameters: {},
        run: () => {
          counts.ping++
          return "pong"
        }
      }),
      distance: Action.local({
        description: "Distance between two places",
        parameters: { start: Location, end: Location },
        run: () => 0
      }),
      book: Action.local({
        description: "Book a hotel",
        parameters: { hotel: Schema.String },
        run: ({ hotel }) => {
          counts.book++
          return `booked ${hotel}`
        }
      }).pipe(Action.requireApproval({ reason: "Bookings cost money" })),
      broken: Action.local({
        description: "Always fails",
        parameters: {},
        run: () => {
          counts.broken++
          return Effect.fail(new ExecutionFailure({ action: "broken", message: "broken: the upstream refused" }))
        }
      }),
      secret: Action.local({
        description: "Never offered to a model",
        parameters: {},
        run: () => {
          counts.secret++
          return "secret"
        }
      }).pipe(Action.excludeFromModel),
      slow: Action.local({
        description: "Takes a second",
        parameters: { n: Schema.Int },
        run: ({ n }) =>
          Effect.gen(function* () {
            counts.inFlight++
            counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight)
            yield* Effect.sleep("1 second")
            counts.inFlight--
            counts.slow++
            return n
          })
      })
    }
  })
  return { travel, counts }
}
