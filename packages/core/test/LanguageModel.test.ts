import { assert, describe, it } from "@effect/vitest"
import { Telemetry } from "@rolecraft/testing"
import { Duration, Effect, Exit, Fiber, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import { ExecutionFailure, TransientFailure } from "../src/ActionError.ts"
import * as LanguageModel from "../src/LanguageModel.ts"

const ask = (content: string, action = "ask"): LanguageModel.Request => ({
  messages: [{ role: "user", content }],
  action
})

describe("LanguageModel.make", () => {
  it.effect("normalises a provider's answer: null text, missing usage counts, total and finish reason", () =>
    Effect.gen(function* () {
      const answers: Array<LanguageModel.ProviderResponse> = [
        { text: null, usage: { inputTokens: 7 } },
        { text: "hi", usage: { inputTokens: 2, outputTokens: 3, totalTokens: 9 }, finishReason: "length" },
        { toolCalls: [{ id: "c1", name: "nights", arguments: "" }], usage: null },
        { text: "x", usage: { inputTokens: Number.NaN, outputTokens: -4 }, finishReason: "function_call" }
      ]
      let i = 0
      const model = LanguageModel.make(() => answers[i++] ?? {})
      const got = []
      for (let n = 0; n < answers.length; n++) got.push(yield* model.generate(ask("q")))
      assert.deepStrictEqual(got, [
        {
          text: "",
          toolCalls: [],
          usage: { inputTokens: 7, outputTokens: 0, totalTokens: 7 },
          finishReason: "stop"
        },
        {
          text: "hi",
          toolCalls: [],
          usage: { inputTokens: 2, outputTokens: 3, totalTokens: 9 },
          finishReason: "length"
        },
        {
          text: "",
          toolCalls: [{ id: "c1", name: "nights", arguments: "" }],
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          finishReason: "tool_calls"
        },
        {
          text: "x",
          toolCalls: [],
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          finishReason: "other"
        }
      ])
    })
  )

  it.effect("gives the provider the request, the default model unless the request names one, and the action", () =>
    Effect.gen(function* () {
      const calls: Array<Omit<LanguageModel.ProviderCall, "signal">> = []
      const model = LanguageModel.make(
        ({ request, model, action }) => {
          calls.push({ request, model, action })
          return { text: "ok", model: model ?? null }
        },
        { model: "default-model" }
      )
      const first = yield* model.generate(ask("a"))
      const second = yield* model.generate({ messages: [], model: "gpt-x" })
      assert.deepStrictEqual(
        calls.map((call) => [call.model, call.action]),
        [
          ["default-model", "ask"],
          ["gpt-x", "LanguageModel"]
        ]
      )
      assert.strictEqual(calls[0]?.request.messages[0]?.content, "a")
      assert.deepStrictEqual([first.model, second.model], ["default-model", "gpt-x"])
    })
  )

  it.effect("an ActionError passes through; any other failure, rejection, throw or defect is EXECUTION", () =>
    Effect.gen(function* () {
      const typed = new TransientFailure({ action: "ask", message: "busy", status: 503 })
      const cases: ReadonlyArray<readonly [LanguageModel.Provider, string]> = [
        [() => Effect.fail(typed), "busy"],
        [() => Effect.fail("plain"), "plain"],
        [() => Promise.reject(new Error("rejected")), "rejected"],
        [
          () => {
            throw new Error("thrown")
          },
          "thrown"
        ],
        [() => Effect.die(new Error("died")), "died"]
      ]
      for (const [provider, text] of cases) {
        const error = yield* Effect.flip(LanguageModel.make(provider).generate(ask("q")))
        assert.include(error.message, text)
        assert.strictEqual(error.action, "ask")
        if (text === "busy") assert.strictEqual(error, typed)
        else {
          assert.instanceOf(error, ExecutionFailure)
          assert.include(error.message, "ask: model call failed")
        }
      }
    })
  )

  it.effect("errors are scrubbed of the provider's secrets", () =>
    Effect.gen(function* () {
      const key = "sk-live-0123456789"
      const model = LanguageModel.make(
        () =>
          Effect.fail(
            LanguageModel.httpFailure({ action: "ask", status: 401, message: `Incorrect API key provided: ${key}` })
          ),
        { secrets: [Redacted.make(key)] }
      )
      const error = yield* Effect.flip(model.generate(ask("q")))
      assert.instanceOf(error, ExecutionFailure)
      assert.notInclude(error.message, key)
      assert.notInclude(JSON.stringify(error), key)
      assert.include(error.message, "[REDACTED]")
      assert.strictEqual(error._tag === "ExecutionFailure" && error.status, 401)
    })
  )

  it.effect("interruption aborts the provider's signal (an attempt timeout interrupts)", () =>
    Effect.gen(function* () {
      let signal: AbortSignal | undefined
      const model = LanguageModel.make(
        (call) =>
          new Promise<LanguageModel.ProviderResponse>(() => {
            signal = call.signal
          })
      )
      const fiber = yield* Effect.forkChild(model.generate(ask("q")).pipe(Effect.timeout("5 seconds")))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(signal?.aborted, false)
      yield* TestClock.adjust("5 seconds")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(signal?.aborted, true)
    })
  )

  it.effect("one span per call, chat <model> (kind client), with the GenAI attributes: provider, model, tokens", () =>
    Effect.gen(function* () {
      const { spans, tracer } = Telemetry.make()
      const model = LanguageModel.make(
        () => ({ text: "ok", model: "gpt-answered", usage: { inputTokens: 11, outputTokens: 4 } }),
        {
          name: "test",
          model: "gpt-asked"
        }
      )
      yield* Effect.withTracer(model.generate(ask("q", "packingTip")), tracer)
      const span = spans.find((s) => s.name === "chat gpt-asked")
      assert.isDefined(span)
      assert.strictEqual(span?.kind, "client")
      assert.deepStrictEqual(Object.fromEntries(span?.attributes ?? []), {
        "rolecraft.action": "packingTip",
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "test",
        "gen_ai.request.model": "gpt-asked",
        "gen_ai.response.model": "gpt-answered",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 4
      })
      assert.strictEqual(spans.length, 1)
    })
  )

  it.effect("usage goes to the meter in the context; a nested meter also adds to the outer one", () =>
    Effect.gen(function* () {
      const model = LanguageModel.make(() => ({ text: "ok", usage: { inputTokens: 10, outputTokens: 5 } }))
      const outer = yield* LanguageModel.makeUsageMeter
      const inner = yield* LanguageModel.makeUsageMeter.pipe(Effect.provideService(LanguageModel.UsageMeter, outer))
      yield* model.generate(ask("q")).pipe(Effect.provideService(LanguageModel.UsageMeter, outer))
      yield* Effect.repeat(model.generate(ask("q")), { times: 1 }).pipe(
        Effect.provideService(LanguageModel.UsageMeter, inner)
      )
      yield* model.generate(ask("no meter"))
      assert.deepStrictEqual(yield* inner.total, {
        usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
        calls: 2
      })
      assert.deepStrictEqual(yield* outer.total, {
        usage: { inputTokens: 30, outputTokens: 15, totalTokens: 45 },
        calls: 3
      })
    })
  )
})

describe("LanguageModel.httpFailure", () => {
  it("408, 429 and 5xx are TRANSIENT (409 too is EXECUTION, as SPEC §7 says of other 4xx) (with retryAfter); other statuses are EXECUTION with an excerpt", () => {
    const table: ReadonlyArray<readonly [number, string]> = [
      [408, "TRANSIENT"],
      [409, "EXECUTION"],
      [429, "TRANSIENT"],
      [500, "TRANSIENT"],
      [503, "TRANSIENT"],
      [400, "EXECUTION"],
      [401, "EXECUTION"],
      [403, "EXECUTION"],
      [404, "EXECUTION"],
      [422, "EXECUTION"]
    ]
    for (const [status, category] of table) {
      const error = LanguageModel.httpFailure({ action: "ask", status, message: "why" })
      assert.strictEqual(error.category, category, `HTTP ${status}`)
      assert.strictEqual(error.status, status)
      assert.include(error.message, `HTTP ${status}`)
    }
    const limited = LanguageModel.httpFailure({
      action: "ask",
      status: 429,
      message: "slow down",
      retryAfter: Duration.seconds(2)
    })
    assert.isTrue(
      limited._tag === "TransientFailure" && Duration.toMillis(limited.retryAfter ?? Duration.zero) === 2000
    )
    const long = LanguageModel.httpFailure({ action: "ask", status: 400, message: "x".repeat(1000) })
    assert.strictEqual(long._tag === "ExecutionFailure" && long.excerpt?.length, 200)
  })
})

describe("LanguageModel.Message", () => {
  it("decodes a chat history and names what is wrong in a bad one", () => {
    const history: ReadonlyArray<LanguageModel.Message> = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Nights?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "nights", arguments: '{"a":1}' }] },
      { role: "tool", toolCallId: "c1", content: "3" },
      { role: "assistant", content: "Three nights." }
    ]
    assert.deepStrictEqual(Schema.decodeUnknownSync(Schema.Array(LanguageModel.Message))(history), history)
    const bad = Schema.decodeUnknownExit(Schema.Array(LanguageModel.Message))([{ role: "tool", content: "3" }])
    assert.isTrue(Exit.isFailure(bad))
  })
})

describe("LanguageModel.retryAfter", () => {
  it("reads retry-after-ms, then Retry-After (seconds or an HTTP date), from a fetch Headers or a record; malformed is undefined", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:27:00 GMT")
    const ms = (duration: Duration.Duration | undefined) =>
      duration === undefined ? undefined : Duration.toMillis(duration)
    assert.strictEqual(ms(LanguageModel.retryAfter(new Headers({ "Retry-After-Ms": " 250 " }), now)), 250)
    assert.strictEqual(ms(LanguageModel.retryAfter({ "retry-after": "4" }, now)), 4000)
    assert.strictEqual(ms(LanguageModel.retryAfter({ "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }, now)), 60_000)
    assert.strictEqual(ms(LanguageModel.retryAfter({ "retry-after": "soon", "retry-after-ms": "-1" }, now)), undefined)
    assert.strictEqual(ms(LanguageModel.retryAfter(undefined, now)), undefined)
  })
})
