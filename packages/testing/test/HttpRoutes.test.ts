import { assert, describe, it } from "@effect/vitest"
import { Action, type ActionError, Agent, Role } from "@rolecraft/core"
import { ConfigProvider, Duration, Effect, Fiber, Schema, type Scope } from "effect"
import { TestClock } from "effect/testing"
import * as HttpRoutes from "../src/HttpRoutes.ts"

const identity = { name: "travel", goal: "Plan trips", domain: "travel" }

// The actions here need no services of their own.
const agentOf = (actions: Record<string, Action.Any>) =>
  Agent.make({ id: "routes", roles: [Role.make({ identity, actions })] }) as Effect.Effect<
    Agent.Agent<Record<string, Action.Any>, never>,
    ActionError.RoleDefinitionError,
    Scope.Scope
  >

const base = "https://api.example.test"

const forecast = Action.webService({
  description: "Get the forecast for a city",
  parameters: { city: Schema.String },
  endpoint: `${base}/v1/forecast`,
  method: "GET",
  paramType: "PATH",
  auth: "BEARER",
  authTokenEnv: "WEATHER_API_KEY",
  headers: { Accept: "application/json" },
  timeout: 5000
})

const env = Effect.provideService(
  ConfigProvider.ConfigProvider,
  ConfigProvider.fromEnv({ env: { WEATHER_API_KEY: "test-token" } })
)

describe("HttpRoutes", () => {
  it.effect("serves routes to the webService executor: path params, query, headers and a JSON reply", () =>
    Effect.gen(function* () {
      const routes = HttpRoutes.make({
        "GET /v1/forecast/:city": (request) =>
          HttpRoutes.json({ city: request.params.city, auth: request.headers.authorization }),
        "GET /v1/current": (request) => HttpRoutes.json({ temp: request.query.get("city") === "Vienna" ? 21 : 0 })
      })
      const agent = yield* agentOf({
        forecast,
        temperature: Action.webService({
          description: "Get the current temperature for a city",
          parameters: { city: Schema.String },
          endpoint: `${base}/v1/current`
        }).pipe(Action.mapResult((result, { city }) => Effect.map(result.asRecord, (body) => `${city}: ${body.temp}`)))
      })
      const result = yield* agent
        .executeAction("forecast", { city: "São Paulo" })
        .pipe(env, Effect.provide(routes.layer))
      assert.deepStrictEqual(result, { city: "São Paulo", auth: "Bearer test-token" })
      const temperature = yield* agent
        .executeAction("temperature", { city: "Vienna" })
        .pipe(Effect.provide(routes.layer))
      assert.strictEqual(temperature, "Vienna: 21")
      assert.deepStrictEqual(
        routes.requests.map((request) => [request.method, request.path, request.url.search, request.headers.accept]),
        [
          ["GET", "/v1/forecast/S%C3%A3o%20Paulo", "", "application/json"],
          ["GET", "/v1/current", "?city=Vienna", undefined]
        ]
      )
    })
  )

  it.effect("records a POST's JSON body; an unmatched request is a 404 the executor reports as EXECUTION", () =>
    Effect.gen(function* () {
      const routes = HttpRoutes.make({ "POST /orders": () => HttpRoutes.status(201) })
      const agent = yield* agentOf({
        order: Action.webService({
          description: "order",
          parameters: { sku: Schema.String, quantity: Schema.Int },
          endpoint: `${base}/orders`,
          method: "POST"
        }),
        cancel: Action.webService({
          description: "cancel",
          parameters: { id: Schema.String },
          endpoint: `${base}/orders/{id}`,
          method: "DELETE"
        })
      })
      const created = yield* agent
        .executeAction("order", { sku: "x-1", quantity: "2" })
        .pipe(Effect.provide(routes.layer))
      assert.strictEqual(created, null)
      assert.strictEqual(routes.requests[0]!.body, '{"sku":"x-1","quantity":2}')
      const missing = yield* Effect.flip(agent.executeAction("cancel", { id: "7" }).pipe(Effect.provide(routes.layer)))
      assert.strictEqual(missing._tag, "ExecutionFailure")
      assert.deepStrictEqual(missing._tag === "ExecutionFailure" && [missing.status, missing.excerpt], [
        404,
        "No route for DELETE /orders/7"
      ])
    })
  )

  it.effect("status replies, refused and reset connections classify as over a real client", () =>
    Effect.gen(function* () {
      let calls = 0
      const routes = HttpRoutes.make({
        "GET /busy": () => HttpRoutes.status(429, { "retry-after": "3" }),
        "POST /refused": () => HttpRoutes.refused,
        "POST /reset": () => {
          calls += 1
          return HttpRoutes.reset
        }
      })
      const post = (path: string) =>
        Action.webService({ description: path, parameters: {}, endpoint: `${base}${path}`, method: "POST" })
      const agent = yield* agentOf({
        busy: Action.webService({ description: "busy", parameters: {}, endpoint: `${base}/busy` }),
        refused: post("/refused"),
        reset: post("/reset").pipe(Action.resilience({ retry: { maxAttempts: 3 } }))
      })
      const run = (name: string) => Effect.flip(agent.executeAction(name, {}).pipe(Effect.provide(routes.layer)))
      const busy = yield* run("busy")
      assert.deepStrictEqual(
        busy._tag === "TransientFailure" && [busy.status, busy.retryAfter && Duration.toSeconds(busy.retryAfter)],
        [429, 3]
      )
      const refused = yield* run("refused")
      assert.deepStrictEqual(refused._tag === "TransientFailure" && [refused.outcomeUnknown, refused.retryable], [
        false,
        true
      ])
      const reset = yield* run("reset")
      assert.deepStrictEqual(reset._tag === "TransientFailure" && [reset.outcomeUnknown, reset.retryable], [
        true,
        false
      ])
      assert.strictEqual(calls, 1)
    })
  )

  it.effect("a handler's Effect runs on the TestClock: a slow route times out at the action's timeout", () =>
    Effect.gen(function* () {
      const routes = HttpRoutes.make({
        "GET /v1/forecast/:city": () => Effect.as(Effect.sleep("10 seconds"), HttpRoutes.json({ temp: 1 }))
      })
      const agent = yield* agentOf({ forecast })
      const fiber = yield* agent
        .executeAction("forecast", { city: "Vienna" })
        .pipe(env, Effect.provide(routes.layer), Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "Timeout")
    })
  )
})
