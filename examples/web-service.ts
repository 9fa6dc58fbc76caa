/**
 * webService actions: `forecast` (GET, PATH, BEARER with
 * WEATHER_API_KEY, an Accept header, 5 s timeout) and `temperature` (GET,
 * QUERY, post-processed with `mapResult` into "<city>: <temp>"), run by an
 * agent over Effect's HttpClient against a small weather service this script
 * starts on 127.0.0.1.
 *
 * Run: node examples/web-service.ts
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Role } from "@rolecraft/core"
import { LocalHttpServer } from "@rolecraft/testing"
import { ConfigProvider, Console, Effect, Layer, Schema } from "effect"

const apiKey = "demo-weather-key"

const forecasts: Record<string, ReadonlyArray<string>> = {
  Vienna: ["sunny", "cloudy", "rain"],
  "São Paulo": ["storms", "sunny", "sunny"]
}
const temperatures: Record<string, number> = { Vienna: 21, "São Paulo": 28 }

/** The weather service: GET /v1/forecast/<city> (bearer token required) and GET /v1/current?city=<city>. */
const weatherService = LocalHttpServer.serve((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost")
  const send = (status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(JSON.stringify(body))
  }
  if (url.pathname.startsWith("/v1/forecast/")) {
    if (request.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: "invalid_token" })
    const city = decodeURIComponent(url.pathname.slice("/v1/forecast/".length))
    const days = forecasts[city]
    return days === undefined ? send(404, { error: `no forecast for ${city}` }) : send(200, { city, days })
  }
  if (url.pathname === "/v1/current") {
    const city = url.searchParams.get("city") ?? ""
    const temp = temperatures[city]
    return temp === undefined ? send(404, { error: `no station in ${city}` }) : send(200, { city, temp })
  }
  send(404, { error: "not found" })
})

/** A travel role's web actions, against a service at `base`. */
const travelRole = (base: string) =>
  Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      forecast: Action.webService({
        description: "Get the forecast for a city",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/forecast`,
        method: "GET",
        paramType: "PATH",
        auth: "BEARER",
        authTokenEnv: "WEATHER_API_KEY",
        timeout: 5000,
        headers: { Accept: "application/json" }
      }),
      temperature: Action.webService({
        description: "Get the current temperature for a city",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/current`,
        method: "GET",
        paramType: "QUERY"
      }).pipe(Action.mapResult((result, { city }) => Effect.map(result.asRecord, (body) => `${city}: ${body.temp}`)))
    }
  })

const program = Effect.gen(function* () {
  const { url: base } = yield* weatherService
  const agent = yield* Agent.make({ id: "planner", roles: [travelRole(base)] })

  const forecast = yield* agent.executeAction("forecast", { city: "São Paulo" })
  yield* Console.log(`forecast(São Paulo) -> ${JSON.stringify(forecast)}`)

  const temperature = yield* agent.executeAction("temperature", { city: "Vienna" })
  yield* Console.log(`temperature(Vienna) -> ${temperature}`)

  const unknown = yield* agent.execute({ action: "forecast", params: { city: "Atlantis" } })
  yield* Console.log(
    unknown.success
      ? `unexpected success: ${JSON.stringify(unknown.value)}`
      : `forecast(Atlantis) -> ${unknown.error.category}: ${unknown.error.message}`
  )
}).pipe(Effect.scoped)

// The secret is read at call time through Effect Config. Without this layer Config reads process.env.
const services = Layer.mergeAll(
  NodeHttpClient.layerUndici,
  ConfigProvider.layer(ConfigProvider.fromEnv({ env: { WEATHER_API_KEY: apiKey } }))
)

NodeRuntime.runMain(program.pipe(Effect.provide(services)))
