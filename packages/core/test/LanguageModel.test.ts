import { assert, describe, it } from "@effect/vitest"
import { Telemetry } from "@rolecraft/testing"
import { Effect, Exit, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ExecutionFailure, TransientFailure } from "../src/ActionError.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as ModelResponse from "../src/ModelResponse.ts"

const ask = (content: string, action = "ask"): LanguageModel.Request => ({
  messages: [{ role: "user", content }],
  action
})

describe("LanguageModel.make", () => {
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
          new Promise<ModelResponse.ProviderResponse>(() => {
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

describe("LanguageModel.addUsage", () => {
  it("adds every count; a cached, cache-write or reasoning part is present when either side reports it", () => {
    const plain = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
    const cached = {
      inputTokens: 4106,
      outputTokens: 320,
      totalTokens: 4426,
      cachedInputTokens: 3968,
      reasoningTokens: 256
    }
    assert.deepStrictEqual(LanguageModel.addUsage(plain, plain), { inputTokens: 20, outputTokens: 10, totalTokens: 30 })
    assert.deepStrictEqual(LanguageModel.addUsage(plain, cached), {
      inputTokens: 4116,
      outputTokens: 325,
      totalTokens: 4441,
      cachedInputTokens: 3968,
      reasoningTokens: 256
    })
    assert.deepStrictEqual(LanguageModel.addUsage(cached, { ...plain, cacheWriteInputTokens: 7 }), {
      inputTokens: 4116,
      outputTokens: 325,
      totalTokens: 4441,
      cachedInputTokens: 3968,
      cacheWriteInputTokens: 7,
      reasoningTokens: 256
    })
  })
})
