/**
 * The tour's own hotel and weather API: a small `node:http` server on
 * 127.0.0.1 (an ephemeral port), started for the life of the tour's scope.
 * Nothing in it is mocked: Rolecraft's webService actions reach it over
 * real HTTP, through Effect's HttpClient.
 *
 * Routes (JSON in, JSON out):
 * - `GET  /v1/forecast/:city` — three-day forecast; needs `Authorization:
 *   Bearer <apiKey>` (401 otherwise); 404 for a city it does not know, with a
 *   body that echoes the request, credential included, as some APIs do in
 *   debug mode (the tour shows Rolecraft redacting it).
 * - `GET  /v1/hotels?city=&maxPrice=` — hotels of a city, cheapest first.
 * - `POST /v1/quotes` `{ hotelId, nights, guests }` — a price quote (400 for
 *   a body that is not what it expects).
 * - `POST /v1/bookings` `{ hotelId, checkIn, nights, guest }` — a booking
 *   (201); every booking is recorded.
 * - `GET  /v1/radar/:city` — the live radar, which is down: always 503.
 * - anything else: 404.
 */
import type * as Http from "node:http"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect, type Scope } from "effect"

/** A hotel as the API lists it. */
export interface Hotel {
  readonly id: string
  readonly name: string
  readonly city: string
  readonly pricePerNight: number
  readonly stars: number
}

const hotels: ReadonlyArray<Hotel> = [
  { id: "lis-alfama", name: "Casa Alfama", city: "Lisbon", pricePerNight: 95, stars: 3 },
  { id: "lis-chiado", name: "Chiado Grand", city: "Lisbon", pricePerNight: 180, stars: 5 },
  { id: "lis-belem", name: "Belém River Inn", city: "Lisbon", pricePerNight: 120, stars: 4 },
  { id: "osl-fjord", name: "Fjord Lodge", city: "Oslo", pricePerNight: 160, stars: 4 }
]

const forecasts: Readonly<Record<string, ReadonlyArray<{ sky: string; high: number; low: number }>>> = {
  Lisbon: [
    { sky: "sunny", high: 23, low: 15 },
    { sky: "partly cloudy", high: 21, low: 14 },
    { sky: "showers", high: 19, low: 13 }
  ],
  Oslo: [
    { sky: "sleet", high: 3, low: -1 },
    { sky: "cloudy", high: 4, low: 0 },
    { sky: "snow", high: 1, low: -4 }
  ]
}

/** What the API saw: how many requests each route got, and the bookings made. */
export interface Traffic {
  readonly hits: Readonly<Record<string, number>>
  readonly bookings: ReadonlyArray<unknown>
}

/** A running API: its base URL (`http://127.0.0.1:<port>`) and what it saw so far. */
export interface HotelWeatherApi {
  readonly baseURL: string
  readonly traffic: Effect.Effect<Traffic>
}

const readBody = (request: Http.IncomingMessage, done: (text: string) => void) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Starts the API for the life of the scope. `apiKey` is the bearer token the
 * forecast route requires.
 */
export const make = (apiKey: string): Effect.Effect<HotelWeatherApi, never, Scope.Scope> =>
  Effect.gen(function* () {
    const hits: Record<string, number> = {}
    const bookings: Array<unknown> = []
    const count = (route: string) => {
      hits[route] = (hits[route] ?? 0) + 1
    }

    const handle = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json; charset=utf-8" })
        response.end(JSON.stringify(body))
      }
      const url = new URL(request.url ?? "/", "http://127.0.0.1")
      const segments = url.pathname
        .split("/")
        .filter((segment) => segment !== "")
        .map(decodeURIComponent)
      const route = `${request.method} /${segments.slice(0, 2).join("/")}`

      if (request.method === "GET" && segments[0] === "v1" && segments[1] === "forecast" && segments.length === 3) {
        count(route)
        if (request.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: "invalid_token" })
        const city = segments[2] ?? ""
        const days = forecasts[city]
        if (days === undefined) {
          return send(404, {
            error: `no forecast for ${city}`,
            request: { method: request.method, path: url.pathname, authorization: request.headers.authorization }
          })
        }
        return send(200, { city, days: days.map((day, i) => ({ day: i + 1, ...day })) })
      }
      if (request.method === "GET" && url.pathname === "/v1/hotels") {
        count(route)
        const city = url.searchParams.get("city") ?? ""
        const maxPrice = Number(url.searchParams.get("maxPrice") ?? Number.POSITIVE_INFINITY)
        const found = hotels
          .filter((hotel) => hotel.city === city && hotel.pricePerNight <= maxPrice)
          .sort((a, b) => a.pricePerNight - b.pricePerNight)
        return send(200, { city, hotels: found })
      }
      if (request.method === "POST" && (url.pathname === "/v1/quotes" || url.pathname === "/v1/bookings")) {
        count(route)
        return readBody(request, (text) => {
          const body = parseJson(text)
          const hotel = isRecord(body) ? hotels.find((h) => h.id === body.hotelId) : undefined
          if (!isRecord(body) || hotel === undefined || typeof body.nights !== "number" || body.nights < 1) {
            return send(400, { error: "expected a JSON body with a known hotelId and nights >= 1" })
          }
          const total = hotel.pricePerNight * body.nights
          if (url.pathname === "/v1/quotes") {
            const guests = typeof body.guests === "number" ? body.guests : 1
            return send(200, { hotelId: hotel.id, nights: body.nights, guests, total, currency: "EUR" })
          }
          const booking = {
            bookingId: `BK-${1000 + bookings.length + 1}`,
            hotel: hotel.name,
            checkIn: body.checkIn,
            nights: body.nights,
            guest: body.guest,
            total,
            currency: "EUR"
          }
          bookings.push(booking)
          return send(201, booking)
        })
      }
      if (request.method === "GET" && segments[0] === "v1" && segments[1] === "radar") {
        count(route)
        return send(503, { error: "the radar feed is down for maintenance" })
      }
      count("other")
      send(404, { error: `no route for ${request.method} ${url.pathname}` })
    }

    const { url } = yield* LocalHttpServer.serve(handle)
    return {
      baseURL: url,
      traffic: Effect.sync(() => ({ hits: { ...hits }, bookings: [...bookings] }))
    }
  })
