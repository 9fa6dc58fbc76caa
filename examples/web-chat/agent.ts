/**
 * The web chat's agent: a hotel concierge with two local actions —
 * `searchHotels` (a small fixed list per city) and `bookHotel`, which needs a
 * person's approval before it runs (the page's Approve / Reject buttons).
 */
import { Action, Agent, Role } from "@rolecraft/core"
import { Schema } from "effect"

/** The hotels the concierge knows, by city. */
export const hotels: Readonly<
  Record<string, ReadonlyArray<{ readonly name: string; readonly pricePerNight: number }>>
> = {
  Lisbon: [
    { name: "Casa Alfama", pricePerNight: 95 },
    { name: "Hotel Avenida", pricePerNight: 140 },
    { name: "Pensão Sol", pricePerNight: 60 }
  ],
  Porto: [
    { name: "Ribeira Rooms", pricePerNight: 85 },
    { name: "Hotel Douro", pricePerNight: 120 }
  ]
}

let bookings = 1000

export const concierge = Role.make({
  identity: { name: "concierge", goal: "Find and book hotels", domain: "travel" },
  actions: {
    searchHotels: Action.local({
      description: "List the hotels of a city with their price per night (EUR)",
      parameters: { city: Schema.String },
      run: ({ city }) => ({ city, hotels: hotels[city] ?? [] })
    }),
    bookHotel: Action.local({
      description: "Book a hotel for a number of nights",
      parameters: { hotel: Schema.String, nights: Schema.Int },
      run: ({ hotel, nights }) => {
        bookings += 1
        return { hotel, nights, confirmation: `BK-${bookings}` }
      }
    }).pipe(Action.requireApproval({ reason: "A booking is charged to the traveller's card" }))
  }
})

/** The agent (scoped: its approval store and connections live as long as the server). */
export const make = Agent.make({ id: "concierge", roles: [concierge] })
