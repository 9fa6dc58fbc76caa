import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Action from "../src/Action.ts"

const summarize = Action.llm({
  description: "Summarise the text",
  parameters: { text: Schema.String },
  systemPrompt: "You are concise.",
  temperature: 0.2
})

describe("Action", () => {
  it("constructors record their type, description and parameters in declared order", () => {
    const forecast = Action.webService({
      description: "Get the forecast for a city",
      parameters: Schema.Struct({ city: Schema.String, days: Schema.Int }),
      endpoint: "https://api.example.com/v1/forecast/{city}",
      paramType: "PATH",
      auth: "BEARER",
      authTokenEnv: "WEATHER_API_KEY",
      timeout: 5000,
      headers: { Accept: "application/json" }
    })
    assert.strictEqual(forecast._tag, "webService")
    assert.deepStrictEqual(Object.keys(forecast.parameters.fields), ["city", "days"])
    assert.strictEqual(forecast.method, "GET")
    assert.strictEqual(forecast.auth, "BEARER")
    assert.deepStrictEqual(forecast.headers, { Accept: "application/json" })
    assert.strictEqual(summarize._tag, "llm")
    assert.strictEqual(summarize.temperature, 0.2)
    assert.strictEqual(Action.llm({ description: "x", parameters: {} }).temperature, -1)
    const tools = Action.mcpTool({ description: "Currency tools", server: "http://127.0.0.1:1/mcp", apiKeyEnv: "FX" })
    assert.strictEqual(tools._tag, "mcpTool")
    assert.deepStrictEqual(Object.keys(tools.parameters.fields), ["tool", "arguments"])
  })

  it("a local action keeps its body", () => {
    const nights = Action.local({
      description: "Count nights",
      parameters: { checkIn: Schema.String },
      run: ({ checkIn }) => checkIn.length
    })
    assert.strictEqual(nights._tag, "local")
    assert.strictEqual(typeof nights.run, "function")
  })

  it("policy combinators are dual and never mutate", () => {
    const guarded = Action.requireApproval(summarize, { reason: "costly" })
    const piped = summarize.pipe(Action.requireApproval({ reason: "costly" }))
    assert.deepStrictEqual(guarded.policies, { approval: { reason: "costly" } })
    assert.deepStrictEqual(piped.policies, guarded.policies)
    assert.deepStrictEqual(summarize.policies, {})
    assert.notStrictEqual(guarded, summarize)
    assert.isTrue(Action.isAction(guarded))
    assert.strictEqual(guarded.description, summarize.description)
  })

  it("every policy combinator adds its policy and keeps the others", () => {
    const fallback = (_args: { readonly text: string }) => "n/a"
    const action = summarize.pipe(
      Action.requireApproval({ reason: "r" }),
      Action.resilience({ retry: { maxAttempts: 2 } }),
      Action.fallback(fallback),
      Action.contract({
        pre: [{ rule: "text is short", check: (args: { readonly text: string }) => args.text.length < 10 }]
      }),
      Action.guardrails({ input: { maxLength: 10 } }),
      Action.retrieval({ topK: 3 }),
      Action.excludeFromModel
    )
    assert.deepStrictEqual(Object.keys(action.policies).sort(), [
      "approval",
      "contract",
      "excludeFromModel",
      "fallback",
      "guardrails",
      "resilience",
      "retrieval"
    ])
    assert.strictEqual(action.policies.fallback, fallback)
    assert.strictEqual(action.policies.excludeFromModel, true)
  })

  it("mapResult sets the mapper on a dispatched action without touching the original", () => {
    const temperature = Action.webService({
      description: "Current temperature",
      parameters: { city: Schema.String },
      endpoint: "https://api.example.com/v1/current"
    })
    const mapped = temperature.pipe(
      Action.mapResult((result, args: { readonly city: string }) =>
        Effect.map(result.asRecord, (body) => `${args.city}: ${String(body.temp)}`)
      )
    )
    assert.strictEqual(typeof mapped.mapResult, "function")
    assert.strictEqual(temperature.mapResult, undefined)
    assert.strictEqual(mapped.endpoint, temperature.endpoint)
  })
})
