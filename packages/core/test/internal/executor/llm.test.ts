import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, Schema } from "effect"
import * as Action from "../../../src/Action.ts"
import { TransientFailure } from "../../../src/ActionError.ts"
import * as Agent from "../../../src/Agent.ts"
import * as Llm from "../../../src/internal/executor/llm.ts"
import * as LanguageModel from "../../../src/LanguageModel.ts"
import type * as ModelResponse from "../../../src/ModelResponse.ts"
import * as Role from "../../../src/Role.ts"

const identity = { name: "travel", goal: "Plan trips", domain: "travel" }

// A model built with the production constructor: answers from a list, records requests.
const recording = (answers: ReadonlyArray<ModelResponse.ProviderResponse | TransientFailure>) => {
  const requests: Array<LanguageModel.Request> = []
  const layer = LanguageModel.layer(({ request }) => {
    const answer = answers[requests.length] ?? { text: "unscripted" }
    requests.push(request)
    return answer instanceof TransientFailure ? Effect.fail(answer) : answer
  })
  return { requests, layer }
}

const nights = Action.llm({
  description: "Count the nights between two dates",
  parameters: { checkIn: Schema.String, checkOut: Schema.String }
})

const run = <A>(
  roles: ReadonlyArray<Role.Any>,
  layer: Layer.Layer<LanguageModel.LanguageModel>,
  f: (
    agent: Agent.Agent<Record<string, Action.Any>, LanguageModel.LanguageModel>
  ) => Effect.Effect<A, unknown, LanguageModel.LanguageModel>
) =>
  Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "planner", roles })
    return yield* f(agent as unknown as Agent.Agent<Record<string, Action.Any>, LanguageModel.LanguageModel>)
  }).pipe(Effect.provide(layer), Effect.scoped)

describe("llm actions", () => {
  it.effect("the prompt: description, then an Input: block in declared order (pinned)", () =>
    Effect.gen(function* () {
      const model = recording([{ text: "3" }])
      const role = Role.make({
        identity,
        actions: {
          quote: Action.llm({
            description: "Quote a stay",
            parameters: {
              hotel: Schema.String,
              nights: Schema.Int,
              guests: Schema.Struct({ adults: Schema.Int, children: Schema.Int }),
              extras: Schema.Array(Schema.String),
              breakfast: Schema.Boolean,
              note: Schema.optionalKey(Schema.String),
              arrival: Schema.NullOr(Schema.String)
            }
          })
        }
      })
      // Given out of order, with strings to convert: the prompt follows the declared order and converted values.
      yield* run([role], model.layer, (agent) =>
        agent.executeAction("quote", {
          arrival: null,
          breakfast: "true",
          extras: ["late checkout", "parking"],
          guests: { children: 1, adults: "2" },
          nights: "3",
          hotel: "Hotel Sacher, Wien"
        })
      )
      assert.deepStrictEqual(model.requests[0]?.messages, [
        {
          role: "user",
          content: [
            "Quote a stay",
            "",
            "Input:",
            "hotel: Hotel Sacher, Wien",
            "nights: 3",
            'guests: {"adults":2,"children":1}',
            'extras: ["late checkout","parking"]',
            "breakfast: true",
            "arrival: null"
          ].join("\n")
        }
      ])
    })
  )

  it("the prompt with retrieved knowledge: a numbered Knowledge: block before Input: (pinned)", () => {
    const text = Llm.prompt(nights, { checkIn: "2026-11-02", checkOut: "2026-11-05" }, [
      { source: "guide.md", text: "Check-in is at 3 pm.", score: 2 },
      { source: "faq/rooms.md", text: "Late checkout costs extra.", score: 1 }
    ])
    assert.strictEqual(
      text,
      "Count the nights between two dates\n\nKnowledge:\n[1] (guide.md) Check-in is at 3 pm.\n" +
        "[2] (faq/rooms.md) Late checkout costs extra.\n\nInput:\ncheckIn: 2026-11-02\ncheckOut: 2026-11-05"
    )
    const none = Action.llm({ description: "Tell a joke", parameters: {} })
    assert.strictEqual(Llm.prompt(none, {}, []), "Tell a joke")
  })

  it.effect("systemPrompt is the system message, before the prompt", () =>
    Effect.gen(function* () {
      const model = recording([{ text: "ok" }])
      const role = Role.make({
        identity,
        actions: {
          summarize: Action.llm({
            description: "Summarise",
            parameters: { text: Schema.String },
            systemPrompt: "You are concise."
          })
        }
      })
      yield* run([role], model.layer, (agent) => agent.executeAction("summarize", { text: "long" }))
      assert.deepStrictEqual(model.requests[0]?.messages, [
        { role: "system", content: "You are concise." },
        { role: "user", content: "Summarise\n\nInput:\ntext: long" }
      ])
    })
  )

  it.effect("temperature: the action's when >= 0, else the role's spec.model.temperature, else none sent", () =>
    Effect.gen(function* () {
      const table: ReadonlyArray<readonly [number | undefined, number | undefined, number | undefined]> = [
        // action, role, sent
        [undefined, undefined, undefined],
        [-1, undefined, undefined],
        [0.3, undefined, 0.3],
        [0, 0.9, 0],
        [-1, 0.7, 0.7],
        [0.3, 0.7, 0.3],
        [-1, -1, undefined]
      ]
      for (const [actionTemperature, roleTemperature, sent] of table) {
        const model = recording([{ text: "ok" }])
        const role = Role.make({
          identity,
          ...(roleTemperature === undefined ? {} : { spec: { model: { temperature: roleTemperature } } }),
          actions: {
            tip: Action.llm({
              description: "Tip",
              parameters: {},
              ...(actionTemperature === undefined ? {} : { temperature: actionTemperature })
            })
          }
        })
        yield* run([role], model.layer, (agent) => agent.executeAction("tip"))
        const request = model.requests[0]
        assert.strictEqual(request?.temperature, sent, `action ${actionTemperature}, role ${roleTemperature}`)
        assert.strictEqual(request !== undefined && "temperature" in request, sent !== undefined)
      }
    })
  )

  it.effect("the role's spec.model.name is the model; without it none is named (the layer's default applies)", () =>
    Effect.gen(function* () {
      const model = recording([{ text: "a" }, { text: "b" }])
      const named = Role.make({
        identity,
        spec: { model: { name: "gpt-4.1-mini" } },
        actions: { tip: Action.llm({ description: "Tip", parameters: {} }) }
      })
      const plain = Role.make({
        identity: { ...identity, name: "plain" },
        actions: { joke: Action.llm({ description: "Joke", parameters: {} }) }
      })
      yield* run([named, plain], model.layer, (agent) =>
        Effect.andThen(agent.executeAction("tip"), agent.executeAction("joke"))
      )
      assert.strictEqual(model.requests[0]?.model, "gpt-4.1-mini")
      assert.isFalse(model.requests[1] !== undefined && "model" in model.requests[1])
      assert.deepStrictEqual(
        model.requests.map((request) => [request.action, request.tools]),
        [
          ["tip", undefined],
          ["joke", undefined]
        ]
      )
    })
  )

  it.effect("without success the reply text is the result; an empty reply or a refusal is EXECUTION", () =>
    Effect.gen(function* () {
      const model = recording([
        { text: "Pack layers." },
        { text: "  \n", finishReason: "stop" },
        { text: null, refusal: "I can't help with that." }
      ])
      const role = Role.make({ identity, actions: { tip: Action.llm({ description: "Tip", parameters: {} }) } })
      const [text, empty, refused] = yield* run([role], model.layer, (agent) =>
        Effect.all([
          agent.executeAction("tip"),
          Effect.flip(agent.executeAction("tip")),
          Effect.flip(agent.executeAction("tip"))
        ])
      )
      assert.strictEqual(text, "Pack layers.")
      assert.strictEqual(empty._tag, "ExecutionFailure")
      assert.strictEqual(empty.message, "tip: the model returned no text (finish reason: stop)")
      assert.strictEqual(refused._tag, "ExecutionFailure")
      assert.include(refused.message, "the model refused: I can't help with that.")
    })
  )

  it.effect("with success the reply is decoded as JSON: plain, fenced ```json or ``` with prose, converted", () =>
    Effect.gen(function* () {
      const Tip = Schema.Struct({ tip: Schema.String, layers: Schema.Int, rain: Schema.Boolean })
      const replies = [
        '{"tip":"Pack layers","layers":3,"rain":true}',
        'Here you go:\n```json\n{"tip":"Pack layers","layers":"3","rain":"TRUE"}\n```\nEnjoy!',
        '```\n{"tip":"Pack layers","layers":3,"rain":false,"extra":1}\n```'
      ]
      const model = recording(replies.map((text) => ({ text })))
      const role = Role.make({
        identity,
        actions: { tip: Action.llm({ description: "Tip", parameters: {}, success: Tip }) }
      })
      const results = yield* run([role], model.layer, (agent) =>
        Effect.all(replies.map(() => agent.executeAction("tip")))
      )
      assert.deepStrictEqual(results, [
        { tip: "Pack layers", layers: 3, rain: true },
        { tip: "Pack layers", layers: 3, rain: true },
        { tip: "Pack layers", layers: 3, rain: false }
      ])
    })
  )

  it.effect(
    "a reply that does not match success, is not JSON, or holds two fenced blocks is VALIDATION with a preview",
    () =>
      Effect.gen(function* () {
        const Tip = Schema.Struct({ tip: Schema.String, layers: Schema.Int })
        const long = `Sure! ${"blah ".repeat(100)}`
        const replies = [
          '{"tip":"Pack layers","layers":"three"}',
          long,
          '```json\n{"tip":"a","layers":1}\n```\nor\n```json\n{"tip":"b","layers":2}\n```'
        ]
        const model = recording(replies.map((text) => ({ text })))
        const role = Role.make({
          identity,
          actions: { tip: Action.llm({ description: "Tip", parameters: {}, success: Tip }) }
        })
        const [mismatch, prose, twoBlocks] = yield* run([role], model.layer, (agent) =>
          Effect.all(replies.map(() => Effect.flip(agent.executeAction("tip"))))
        )
        assert.strictEqual(mismatch?._tag, "ValidationError")
        assert.strictEqual(
          mismatch?.message,
          `tip: the model's reply does not match the success schema (layers: expected an integer, got "three"); ` +
            `reply: "{\\"tip\\":\\"Pack layers\\",\\"layers\\":\\"three\\"}"`
        )
        assert.deepStrictEqual(mismatch?._tag === "ValidationError" && mismatch.issues.map((issue) => issue.path), [
          "layers"
        ])
        assert.strictEqual(prose?._tag, "ValidationError")
        assert.include(prose?.message, "the model's reply is not JSON")
        const preview = JSON.parse(prose?.message.split("; reply: ")[1] ?? '""') as string
        assert.strictEqual(preview.length, 200)
        assert.isTrue(long.startsWith(preview.slice(0, -1)))
        assert.strictEqual(twoBlocks?._tag, "ValidationError")
      })
  )

  it.effect("a string success schema accepts a plain-text reply; an array schema a fenced array", () =>
    Effect.gen(function* () {
      const model = recording([{ text: "Bonjour" }, { text: '```json\n["a", "b"]\n```' }])
      const role = Role.make({
        identity,
        actions: {
          translate: Action.llm({ description: "Translate", parameters: {}, success: Schema.String }),
          list: Action.llm({ description: "List", parameters: {}, success: Schema.Array(Schema.String) })
        }
      })
      const [text, list] = yield* run([role], model.layer, (agent) =>
        Effect.all([agent.executeAction("translate"), agent.executeAction("list")])
      )
      assert.strictEqual(text, "Bonjour")
      assert.deepStrictEqual(list, ["a", "b"])
    })
  )

  it.effect(
    "no LanguageModel provided (its requirement cast away): VALIDATION inside the run step, so the fallback runs",
    () =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        const role = Role.make({
          identity,
          actions: {
            tip: Action.llm({ description: "Tip", parameters: {} }),
            safeTip: Action.llm({ description: "Tip", parameters: {} }).pipe(
              Action.fallback((_args, error) => {
                seen.push(`${error.category}: ${error.message}`)
                return "Pack an umbrella."
              })
            )
          }
        })
        const agent = yield* Agent.make({ id: "planner", roles: [role] })
        // The types ask for a LanguageModel; a program that casts that away meets a VALIDATION at run time.
        const untyped = <A, E>(effect: Effect.Effect<A, E, LanguageModel.LanguageModel>) =>
          effect as Effect.Effect<A, E>
        const error = yield* Effect.flip(untyped(agent.executeAction("tip")))
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, "LanguageModel not provided")
        assert.strictEqual(yield* untyped(agent.executeAction("safeTip")), "Pack an umbrella.")
        assert.strictEqual(seen.length, 1)
        assert.include(seen[0], "VALIDATION: safeTip: LanguageModel not provided")
      }).pipe(Effect.scoped)
  )

  it.effect("mapResult post-processes the reply as an ActionResult", () =>
    Effect.gen(function* () {
      const model = recording([{ text: "  Pack layers.  " }])
      const role = Role.make({
        identity,
        actions: {
          tip: Action.llm({ description: "Tip", parameters: { city: Schema.String } }).pipe(
            Action.mapResult((result, args) => Effect.map(result.asString, (text) => `${args.city}: ${text.trim()}`))
          )
        }
      })
      const tip = yield* run([role], model.layer, (agent) => agent.executeAction("tip", { city: "Oslo" }))
      assert.strictEqual(tip, "Oslo: Pack layers.")
    })
  )

  it.live("usage: ActionResponse.usage sums the call's model calls (retries included), also on failure", () =>
    Effect.gen(function* () {
      const model = recording([
        new TransientFailure({ action: "tip", message: "busy", status: 503 }),
        { text: "Pack layers.", usage: { inputTokens: 20, outputTokens: 5 } },
        { text: "not json", usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9 } }
      ])
      const role = Role.make({
        identity,
        actions: {
          tip: Action.llm({ description: "Tip", parameters: {} }).pipe(
            Action.resilience({ retry: { maxAttempts: 1, initialDelay: "1 millis", jitter: false } })
          ),
          count: Action.llm({ description: "Count", parameters: {}, success: Schema.Int }),
          local: Action.local({ description: "Local", parameters: {}, run: () => 1 })
        }
      })
      const [ok, failed, local, byName] = yield* run([role], model.layer, (agent) =>
        Effect.all([
          agent.execute({ action: "tip" }),
          agent.execute({ action: "count" }),
          agent.execute({ action: "local" }),
          agent.executeAction("local")
        ])
      )
      assert.isTrue(ok?.success)
      assert.deepStrictEqual(ok?.usage, { inputTokens: 20, outputTokens: 5, totalTokens: 25 })
      assert.isFalse(failed?.success)
      assert.strictEqual(failed?.error?._tag, "ValidationError")
      assert.deepStrictEqual(failed?.usage, { inputTokens: 7, outputTokens: 2, totalTokens: 9 })
      assert.isFalse(local !== undefined && "usage" in local)
      assert.strictEqual(byName, 1)
      assert.strictEqual(model.requests.length, 3)
    })
  )
})
