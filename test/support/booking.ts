/**
 * The booking role of the approval tests that run across processes and under load: one local action, `book`,
 * that needs approval ("Books and charges a hotel") and counts its runs.
 */
import { Action, Role } from "@rolecraft/core"
import { Schema } from "effect"

/** The role, counting each booking in `booked` (when given). */
export const bookingRole = (booked?: { count: number }) =>
  Role.make({
    identity: { name: "travel", goal: "Book hotels", domain: "travel" },
    actions: {
      book: Action.local({
        description: "Book a hotel room",
        parameters: { hotelId: Schema.String },
        run: ({ hotelId }) => {
          if (booked !== undefined) booked.count++
          return `booked ${hotelId}`
        }
      }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" }))
    }
  })
