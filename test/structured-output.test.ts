/**
 * Structured output (SPEC §16) over the real openai SDK against the local
 * OpenAI-compatible server: `chat(input, { output })` sends the schema as
 * `response_format: json_schema` (strict when it can be) and returns the
 * decoded `Completed.output`; a mismatch is VALIDATION with a preview; an llm
 * action's `success` schema is sent the same way, and a `null` that strict
 * mode allowed for an optional key decodes as an absent key.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type LanguageModel, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Effect, Exit, Redacted, Schema, Stream } from "effect"

const Plan = Schema.Struct({
  city: Schema.String,
  nights: Schema.Int,
  note: Schema.optionalKey(Schema.String)
})

const packingList = Action.llm({
  description: "List what to pack",
  parameters: { destination: Schema.String },
  success: Schema.Array(Schema.String)
})

const checkIn = Action.llm({
  description: "Plan the check-in",
  parameters: { hotel: Schema.String },
  success: Schema.Struct({ time: Schema.String, desk: Schema.optionalKey(Schema.String) })
})

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: { packingList, checkIn }
})

const withAgent = <A, E>(
  script: ReadonlyArray<Server.Step>,
  f: (agent: Effect.Success<ReturnType<typeof makeAgent>>) => Effect.Effect<A, E, LanguageModel.LanguageModel>
) =>
  Effect.gen(function* () {
    const server = yield* Server.make(script)
    const agent = yield* makeAgent()
    const exit = yield* Effect.exit(
      Effect.provide(
        f(agent),
        OpenAiLanguageModel.layer({ model: "gpt-test", apiKey: Redacted.make("sk-test-key"), baseURL: server.baseURL })
      )
    )
    return { exit, requests: yield* server.requests }
  }).pipe(Effect.scoped)

const makeAgent = () => Agent.make({ id: "planner", roles: [travel] })

const bodyOf = (request: Server.Recorded | undefined) => request?.body as Record<string, unknown>

const planFormat = {
  type: "json_schema",
  json_schema: {
    name: "output",
    strict: true,
    schema: {
      type: "object",
      properties: {
        city: { type: "string" },
        nights: { type: "integer" },
        note: { type: ["string", "null"] }
      },
      required: ["city", "nights", "note"],
      additionalProperties: false
    }
  }
}

describe("structured output over the openai SDK", () => {
  it.live("chat with an output schema: response_format json_schema strict, Completed.output decoded and typed", () =>
    Effect.gen(function* () {
      const { exit, requests } = yield* withAgent([Server.reply('{"city":"Lisbon","nights":3,"note":null}')], (agent) =>
        agent.chat("Plan Lisbon", { output: Plan })
      )
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit) || exit.value._tag !== "Completed") return assert.fail("expected Completed")
      // typed: output is { city: string; nights: number; note?: string }
      const output: { readonly city: string; readonly nights: number; readonly note?: string } = exit.value.output
      assert.deepStrictEqual(output, { city: "Lisbon", nights: 3 })
      assert.deepStrictEqual(bodyOf(requests[0]).response_format, planFormat)
    })
  )

  it.live("chatStream asks for the same format and its TurnFinished carries the decoded output", () =>
    Effect.gen(function* () {
      const { exit, requests } = yield* withAgent(
        [Server.reply('{"city":"Porto","nights":"2","note":"late"}')],
        (agent) => Stream.runCollect(agent.chatStream("Plan Porto", { output: Plan }))
      )
      assert.isTrue(Exit.isSuccess(exit))
      const last = Exit.isSuccess(exit) ? exit.value.at(-1) : undefined
      assert.deepStrictEqual(
        last?._tag === "TurnFinished" && last.result._tag === "Completed" ? last.result.output : undefined,
        { city: "Porto", nights: 2, note: "late" }
      )
      assert.deepStrictEqual(bodyOf(requests[0]).response_format, planFormat)
      assert.strictEqual(bodyOf(requests[0]).stream, true)
    })
  )

  it.live("an answer that does not match the output schema fails the turn with VALIDATION and a preview", () =>
    Effect.gen(function* () {
      const { exit } = yield* withAgent([Server.reply('{"city":"Lisbon","nights":"three"}')], (agent) =>
        agent.chat("Plan Lisbon", { output: Plan })
      )
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      const failure = error?._tag === "Fail" ? (error.error as { category: string; message: string }) : undefined
      assert.strictEqual(failure?.category, "VALIDATION")
      assert.include(failure?.message, "chat: the model's reply does not match the output schema (nights:")
      assert.include(failure?.message, 'reply: "{\\"city\\":\\"Lisbon\\",\\"nights\\":\\"three\\"}"')
    })
  )

  it.live("an llm action's success schema is sent as response_format; a wrapped array and a strict null decode", () =>
    Effect.gen(function* () {
      const { exit, requests } = yield* withAgent(
        [Server.reply('{"value":["wool socks","rain shell"]}'), Server.reply('{"time":"15:00","desk":null}')],
        (agent) =>
          Effect.all([
            agent.executeAction("packingList", { destination: "Oslo" }),
            agent.executeAction("checkIn", { hotel: "Casa Alfama" })
          ])
      )
      assert.isTrue(Exit.isSuccess(exit), String(Exit.isFailure(exit) ? exit.cause : ""))
      assert.deepStrictEqual(Exit.isSuccess(exit) ? exit.value : undefined, [
        ["wool socks", "rain shell"],
        { time: "15:00" }
      ])
      assert.deepStrictEqual(bodyOf(requests[0]).response_format, {
        type: "json_schema",
        json_schema: {
          name: "packingList",
          strict: true,
          schema: {
            type: "object",
            properties: { value: { type: "array", items: { type: "string" } } },
            required: ["value"],
            additionalProperties: false
          }
        }
      })
      assert.deepStrictEqual(bodyOf(requests[1]).response_format, {
        type: "json_schema",
        json_schema: {
          name: "checkIn",
          strict: true,
          schema: {
            type: "object",
            properties: { time: { type: "string" }, desk: { type: ["string", "null"] } },
            required: ["time", "desk"],
            additionalProperties: false
          }
        }
      })
    })
  )
})
