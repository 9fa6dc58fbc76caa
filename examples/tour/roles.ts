/**
 * The tour's capabilities and roles. Capabilities are plain values declared
 * once: their webService endpoints are paths, resolved against the API's
 * base URL by the HttpClient the tour provides (see `main.ts`), so the same
 * capability runs against any deployment of the API.
 *
 * - `Weather`: `forecast` (GET with a `{city}` placeholder, bearer token from
 *   `TOUR_API_KEY`) and `liveWeather` (GET the live radar).
 * - `Hotels`: `searchHotels` (GET with a query), `quote` (POST with a JSON
 *   body) and `book` (POST, approval required wherever it is used).
 * - `Writer`: `packingTip`, an llm action.
 * - Role `travel-agent` adopts all three, adds the local `nights`, and
 *   overrides `liveWeather` with its own copy carrying a retry policy and a
 *   fallback (a capability entry is pure dispatch; policies that depend on
 *   how a role copes with failure belong to the role).
 * - Role `archivist` holds two mcpTool actions: `files` on server-filesystem
 *   (a folder the tour fills) and `toolbox` on server-everything.
 */
import { fileURLToPath } from "node:url"
import { Action, Capability, Role } from "@rolecraft/core"
import { Schema } from "effect"

export const Weather = Capability.make("Weather", {
  forecast: Action.webService({
    description: "Three-day weather forecast for a city: sky, high and low in °C for each day",
    parameters: { city: Schema.String },
    endpoint: "/v1/forecast/{city}",
    method: "GET",
    auth: "BEARER",
    authTokenEnv: "TOUR_API_KEY",
    headers: { Accept: "application/json" },
    timeout: "5 seconds"
  }),
  liveWeather: Action.webService({
    description: "Current conditions in a city from the live radar",
    parameters: { city: Schema.String },
    endpoint: "/v1/radar/{city}",
    timeout: "5 seconds"
  })
})

export const Hotels = Capability.make("Hotels", {
  searchHotels: Action.webService({
    description: "Hotels in a city, cheapest first, optionally up to a price per night in EUR",
    parameters: { city: Schema.String, maxPrice: Schema.optionalKey(Schema.Number) },
    endpoint: "/v1/hotels",
    method: "GET",
    paramType: "QUERY"
  }),
  quote: Action.webService({
    description: "A price quote in EUR for a stay at a hotel",
    parameters: { hotelId: Schema.String, nights: Schema.Int, guests: Schema.Int },
    endpoint: "/v1/quotes",
    method: "POST"
  }),
  book: Action.webService({
    description: "Book a hotel room (charges the guest's card)",
    parameters: { hotelId: Schema.String, checkIn: Schema.String, nights: Schema.Int, guest: Schema.String },
    endpoint: "/v1/bookings",
    method: "POST"
  }).pipe(Action.requireApproval({ reason: "Books a room and charges the card", ttl: "10 minutes" }))
})

export const Writer = Capability.make("Writer", {
  packingTip: Action.llm({
    description: "Write a two-sentence packing tip for the trip",
    parameters: { destination: Schema.String, month: Schema.String },
    systemPrompt: "You are a concise travel assistant.",
    temperature: 0.3,
    timeout: "60 seconds"
  })
})

/** What `liveWeather`'s fallback answers when the radar cannot be reached. */
export interface Conditions {
  readonly city: string
  readonly sky: string
  readonly source: "radar" | "fallback"
  readonly because?: string
}

export const TravelAgent = Role.make({
  identity: { name: "travel-agent", goal: "Plan trips: weather, hotels, bookings", domain: "travel" },
  capabilities: [Weather, Hotels, Writer],
  actions: {
    nights: Action.local({
      description: "Count the nights between two ISO dates (YYYY-MM-DD)",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    // Overrides the capability's liveWeather by key: same call, with the role's retry and fallback.
    liveWeather: Weather.actions.liveWeather.pipe(
      Action.resilience({ retry: { maxAttempts: 1, initialDelay: "100 millis", jitter: false } }),
      Action.fallback(
        ({ city }, error): Conditions => ({
          city,
          sky: "unknown (radar down)",
          source: "fallback",
          because: error.category
        })
      )
    )
  }
})

const serverEntry = (name: "server-everything" | "server-filesystem"): string =>
  fileURLToPath(import.meta.resolve(`@modelcontextprotocol/${name}/dist/index.js`))

/** The archivist works on `folder` (server-filesystem may read and write only there). */
export const archivist = (folder: string) =>
  Role.make({
    identity: { name: "archivist", goal: "Keep the trip's notes and do small sums", domain: "files" },
    actions: {
      files: Action.mcpTool({
        description: "The trip's notes folder",
        server: { command: process.execPath, args: [serverEntry("server-filesystem"), folder] },
        tools: ["read_text_file", "write_file", "list_directory"],
        timeout: "10 seconds"
      }),
      toolbox: Action.mcpTool({
        description: "Small utilities",
        server: { command: process.execPath, args: [serverEntry("server-everything"), "stdio"] },
        tools: ["echo", "get-sum"],
        timeout: "10 seconds"
      })
    }
  })
