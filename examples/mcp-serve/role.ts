/**
 * The role the example serves: a hotel desk with a knowledge source (served
 * as resources), a quote that reports progress, a floor plan returned as an
 * image, and a booking that needs a person's approval.
 */
import { fileURLToPath } from "node:url"
import { Action, Progress, Role, ToolContent } from "@rolecraft/core"
import { McpPrompt, McpResource } from "@rolecraft/mcp"
import { Effect, Schema } from "effect"

// A 1x1 PNG: the "floor plan".
const plan = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

const hotels = ["casa-alfama", "hotel-bairro", "pousada-sol"] as const

export const booked: Array<string> = []

export const DeskRole = Role.make({
  identity: { name: "desk", goal: "Quote and book hotel stays in Lisbon", domain: "travel" },
  spec: {
    goals: ["Quote before booking", "Never book without the guest's approval"],
    knowledge: [fileURLToPath(new URL("knowledge", import.meta.url))]
  },
  actions: {
    quote: Action.local({
      description: "Quote a stay: nights at a hotel, in EUR",
      parameters: { hotel: Schema.Literals(hotels), nights: Schema.Int },
      run: ({ hotel, nights }) =>
        Effect.gen(function* () {
          for (let night = 1; night <= nights; night++) {
            yield* Progress.report(night, { total: nights, message: `pricing night ${night}` })
          }
          yield* Effect.logInfo(`quoted ${hotel} for ${nights} nights`)
          return { hotel, nights, total: nights * 95, currency: "EUR" }
        })
    }),
    floorPlan: Action.local({
      description: "The floor plan of a hotel, as an image",
      parameters: { hotel: Schema.Literals(hotels) },
      run: ({ hotel }) => ToolContent.content(`Floor plan of ${hotel}:`, ToolContent.image(plan, "image/png"))
    }),
    book: Action.local({
      description: "Book a hotel room and charge the guest's card",
      parameters: { hotel: Schema.Literals(hotels), nights: Schema.Int },
      run: ({ hotel, nights }) => {
        booked.push(`${hotel} x${nights}`)
        return `booked ${hotel} for ${nights} nights`
      }
    }).pipe(Action.requireApproval({ reason: "Books a room and charges the card" }))
  }
})

/** A resource template (completion offers the hotels) and a prompt an author declares. */
export const resources = [
  McpResource.template({
    uriTemplate: "hotels://{hotel}",
    name: "hotel",
    description: "A hotel's details",
    mimeType: "application/json",
    variables: { hotel: hotels },
    read: ({ hotel }) => JSON.stringify({ hotel, city: "Lisbon", stars: 4 })
  })
]

export const prompts = [
  McpPrompt.make({
    name: "plan_stay",
    description: "Plan a stay at one of the desk's hotels",
    arguments: { hotel: { description: "Which hotel", required: true, values: hotels } },
    messages: ({ hotel }) => [
      { role: "user", content: `Quote a 3-night stay at ${hotel}, then ask me before booking.` }
    ]
  })
]
