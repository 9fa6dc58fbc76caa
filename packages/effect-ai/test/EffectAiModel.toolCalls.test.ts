/**
 * A tool call's arguments through the bridge, whatever the order of its parts: every sequence of
 * `tool-params-start`, `tool-params-delta` (none or all of the arguments, in pieces), `tool-params-end` and
 * the final `tool-call` (present or absent; its params an object or a string), for several calls at once,
 * gives each call the arguments the provider gave — the final part's when no delta came, the deltas once when
 * they did; never both, never `{}`. And the case that failed: a start, an end, then the whole call, in
 * `agent.chatStream`, runs the tool with its arguments.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type LanguageModel, Role } from "@rolecraft/core"
import { EffectAiModel } from "@rolecraft/effect-ai"
import { Effect, Layer, Schema, Stream } from "effect"
import { LanguageModel as AiLanguageModel, type Response } from "effect/ai"
import * as fc from "fast-check"

interface CallPlan {
  readonly id: string
  readonly params: Readonly<Record<string, unknown>>
  readonly asString: boolean
  readonly start: boolean
  readonly cuts: ReadonlyArray<number> | undefined
  readonly end: boolean
  readonly final: boolean
  readonly endAfterFinal: boolean
}

const params = fc.dictionary(
  fc.constantFrom("location", "unit", "days", "note"),
  fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()),
  { minKeys: 1 }
)

const plan = (id: string): fc.Arbitrary<CallPlan> =>
  fc
    .record({
      params,
      asString: fc.boolean(),
      start: fc.boolean(),
      cuts: fc.option(fc.array(fc.nat(), { maxLength: 4 }), { nil: undefined }),
      end: fc.boolean(),
      final: fc.boolean(),
      endAfterFinal: fc.boolean()
    })
    // A call the provider never completes: deltas with no start are not a call, and neither is nothing.
    .filter((p) => p.final || (p.start && p.cuts !== undefined))
    .map((p) => ({ id, ...p }))

const partsOf = (call: CallPlan): ReadonlyArray<Response.StreamPartEncoded> => {
  const json = JSON.stringify(call.params)
  const parts: Array<Response.StreamPartEncoded> = []
  if (call.start) parts.push({ type: "tool-params-start", id: call.id, name: "lookup" })
  if (call.cuts !== undefined) {
    const points = [...new Set(call.cuts.map((cut) => cut % (json.length + 1)))].sort((a, b) => a - b)
    let from = 0
    for (const point of [...points, json.length]) {
      if (point > from) parts.push({ type: "tool-params-delta", id: call.id, delta: json.slice(from, point) })
      from = point
    }
  }
  const end: Response.StreamPartEncoded = { type: "tool-params-end", id: call.id }
  if (call.end && !call.endAfterFinal) parts.push(end)
  if (call.final) {
    parts.push({ type: "tool-call", id: call.id, name: "lookup", params: call.asString ? json : call.params })
  }
  if (call.end && call.endAfterFinal) parts.push(end)
  return parts
}

// effect/ai decodes a `tool-call` part only for a tool the request offers.
const lookup: LanguageModel.Request = {
  messages: [{ role: "user", content: "Look it up." }],
  tools: [
    {
      name: "lookup",
      description: "Looks a thing up",
      parameters: { type: "object", properties: {}, additionalProperties: true },
      strict: false
    }
  ]
}

const modelOver = (next: () => ReadonlyArray<Response.StreamPartEncoded>) =>
  Layer.effect(
    AiLanguageModel.LanguageModel,
    AiLanguageModel.make({
      generateText: () => Effect.die(new Error("not generated")),
      streamText: () => Stream.suspend(() => Stream.fromIterable(next()))
    })
  )

describe("a tool call's arguments through the effect/ai bridge, in every order of its parts", () => {
  it.effect("each call runs with the arguments the provider gave (500 runs)", () =>
    Effect.gen(function* () {
      let parts: ReadonlyArray<Response.StreamPartEncoded> = []
      const model = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(modelOver(() => parts)))
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.tuple(plan("fc_1"), plan("fc_2"), plan("fc_3")), fc.nat({ max: 3 }), async (calls, n) => {
            const used = calls.slice(0, n + 1)
            parts = [
              ...used.flatMap(partsOf),
              {
                type: "finish",
                reason: "tool-calls",
                usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }
              } as Response.StreamPartEncoded
            ]
            const read = await Effect.runPromise(Stream.runCollect(model.stream(lookup)))
            const last = read.at(-1)
            assert.strictEqual(last?._tag, "Finished")
            const response = last?._tag === "Finished" ? last.response : undefined
            assert.deepStrictEqual(
              response?.toolCalls.map((call) => ({ id: call.id, params: JSON.parse(call.arguments) })),
              used.map((call) => ({ id: call.id, params: call.params }))
            )
          }),
          { numRuns: 500 }
        )
      )
    })
  )

  it.effect("a start, an end, then the whole call: the tool runs with its arguments in agent.chatStream", () =>
    Effect.gen(function* () {
      const asked: Array<unknown> = []
      const role = Role.make({
        identity: { name: "weather", goal: "Report the weather", domain: "weather" },
        actions: {
          weather: Action.local({
            description: "The weather in a place",
            parameters: { location: Schema.String, unit: Schema.Literals(["c", "f"]) },
            run: (input) => {
              asked.push(input)
              return "18 degrees"
            }
          })
        }
      })
      const scripts: Array<ReadonlyArray<Response.StreamPartEncoded>> = [
        [
          { type: "tool-params-start", id: "fc_1", name: "weather" },
          { type: "tool-params-end", id: "fc_1" },
          { type: "tool-call", id: "fc_1", name: "weather", params: { location: "Lisbon", unit: "c" } },
          { type: "finish", reason: "tool-calls", usage: { inputTokens: { total: 5 }, outputTokens: { total: 5 } } }
        ] as ReadonlyArray<Response.StreamPartEncoded>,
        [
          { type: "text-delta", id: "t", delta: "18 degrees in Lisbon." },
          { type: "finish", reason: "stop", usage: { inputTokens: { total: 9 }, outputTokens: { total: 4 } } }
        ] as ReadonlyArray<Response.StreamPartEncoded>
      ]
      const agent = yield* Agent.make({ id: "forecaster", roles: [role] })
      const events = yield* Stream.runCollect(agent.chatStream("Weather in Lisbon?")).pipe(
        Effect.provide(
          EffectAiModel.layer({ name: "scripted" }).pipe(Layer.provide(modelOver(() => scripts.shift() ?? [])))
        )
      )
      assert.deepStrictEqual(asked, [{ location: "Lisbon", unit: "c" }])
      assert.strictEqual(events.at(-1)?._tag, "TurnFinished")
    })
  )
})
