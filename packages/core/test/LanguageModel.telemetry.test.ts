/**
 * One model call is observed the same way whatever its path: `generate` and `stream` give the `chat {model}`
 * span the same attributes (request, answer and failure) and count the same metrics, for every outcome — an
 * answer, a failure, a stream cut before its end, and a stream its consumer stops.
 */
import { assert, describe, it } from "@effect/vitest"
import { Telemetry } from "@rolecraft/testing"
import { Effect, Exit, Metric, Stream } from "effect"
import { TransientFailure } from "../src/ActionError.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import * as Metrics from "../src/Metrics.ts"
import type * as ModelResponse from "../src/ModelResponse.ts"

const request: LanguageModel.Request = {
  messages: [{ role: "user", content: "Where to?" }],
  temperature: 0.2,
  action: "plan"
}

const answer: ModelResponse.ProviderResponse = {
  text: "Lisbon.",
  finishReason: "stop",
  model: "gpt-test-0601",
  usage: { inputTokens: 12, outputTokens: 3 }
}

const chunks: ReadonlyArray<ModelResponse.ProviderChunk> = [
  { text: "Lis", model: "gpt-test-0601" },
  { text: "bon." },
  { finishReason: "stop", usage: { inputTokens: 12, outputTokens: 3 } },
  // Azure's trailing content-filter chunk: an empty model must not blank the known one.
  { model: "" }
]

type Outcome = "answer" | "failure" | "cut" | "stopped"

const unavailable = new TransientFailure({ action: "plan", message: "plan: the model is unavailable" })

/** A model whose one call ends with `outcome`, by `generate` or by `stream`. */
const modelOf = (path: "generate" | "stream", outcome: Outcome) => {
  const options = { name: "test", model: "gpt-test" }
  if (path === "generate") {
    return LanguageModel.make(
      () => (outcome === "answer" || outcome === "stopped" ? Effect.succeed(answer) : Effect.fail(unavailable)),
      options
    )
  }
  const stream =
    outcome === "answer" || outcome === "stopped"
      ? Stream.fromIterable(chunks)
      : outcome === "failure"
        ? Stream.concat(Stream.fromIterable(chunks.slice(0, 1)), Stream.fail(unavailable))
        : // cut: the stream ends before a finish reason
          Stream.fromIterable(chunks.slice(0, 2))
  return LanguageModel.make({ stream: () => stream }, options)
}

const call = (path: "generate" | "stream", outcome: Outcome): Effect.Effect<Exit.Exit<unknown, unknown>> => {
  const model = modelOf(path, outcome)
  if (path === "generate") return Effect.exit(model.generate(request))
  const parts = model.stream(request)
  return Effect.exit(Stream.runDrain(outcome === "stopped" ? Stream.take(parts, 1) : parts))
}

const modelSeries = {
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "test",
  "gen_ai.request.model": "gpt-test"
}

/** The `chat` span's attributes and the metric counts of one call by `path`, ending with `outcome`. */
const observed = (path: "generate" | "stream", outcome: Outcome) =>
  Effect.gen(function* () {
    const recorder = Telemetry.make()
    const exit = yield* call(path, outcome).pipe(Effect.withTracer(recorder.tracer))
    const spans = recorder.spans.filter((span) => span.name.startsWith("chat"))
    assert.strictEqual(spans.length, 1, `${path} ${outcome}: one chat span`)
    const span = spans[0]!
    assert.strictEqual(span.status._tag, "Ended", `${path} ${outcome}: the span is ended`)
    const histogram = (metric: Metric.Histogram<number>, attributes: Record<string, string>) =>
      Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (state) => state.count)
    return {
      succeeded: Exit.isSuccess(exit),
      name: span.name,
      attributes: Object.fromEntries(span.attributes),
      duration: yield* histogram(Metrics.operationDuration, modelSeries),
      failedDuration: yield* histogram(Metrics.operationDuration, { ...modelSeries, "error.type": "TRANSIENT" }),
      inputTokens: yield* histogram(Metrics.tokenUsage, { ...modelSeries, "gen_ai.token.type": "input" }),
      outputTokens: yield* histogram(Metrics.tokenUsage, { ...modelSeries, "gen_ai.token.type": "output" })
    }
  }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))

const request_ = {
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "test",
  "gen_ai.request.model": "gpt-test",
  "gen_ai.request.temperature": 0.2,
  "rolecraft.action": "plan"
}

describe("the chat span and model metrics, streamed or not", () => {
  it.effect("an answer: the same attributes and one count of each metric on both paths", () =>
    Effect.gen(function* () {
      const generated = yield* observed("generate", "answer")
      const streamed = yield* observed("stream", "answer")
      assert.deepStrictEqual(streamed, generated)
      assert.deepStrictEqual(generated, {
        succeeded: true,
        name: "chat gpt-test",
        attributes: {
          ...request_,
          "gen_ai.response.model": "gpt-test-0601",
          "gen_ai.response.finish_reasons": ["stop"],
          "gen_ai.usage.input_tokens": 12,
          "gen_ai.usage.output_tokens": 3
        },
        duration: 1,
        failedDuration: 0,
        inputTokens: 1,
        outputTokens: 1
      })
    })
  )

  it.effect("a failure, and a stream cut before its end: error.type and the category, the failed duration", () =>
    Effect.gen(function* () {
      const generated = yield* observed("generate", "failure")
      const failed = { ...request_, "error.type": "TRANSIENT", "rolecraft.category": "TRANSIENT" }
      assert.deepStrictEqual(generated, {
        succeeded: false,
        name: "chat gpt-test",
        attributes: failed,
        duration: 0,
        failedDuration: 1,
        inputTokens: 0,
        outputTokens: 0
      })
      assert.deepStrictEqual(yield* observed("stream", "failure"), generated)
      assert.deepStrictEqual(yield* observed("stream", "cut"), generated)
    })
  )

  it.effect("a stream its consumer stops: the span ends with the request's attributes, and no metric counts it", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* observed("stream", "stopped"), {
        succeeded: true,
        name: "chat gpt-test",
        attributes: request_,
        duration: 0,
        failedDuration: 0,
        inputTokens: 0,
        outputTokens: 0
      })
    })
  )

  it.effect('an attribute with no known value is left out: a body and a stream that only name the model as ""', () =>
    Effect.gen(function* () {
      const recorder = Telemetry.make()
      const options = { name: "test" }
      const body = LanguageModel.make(() => ({ ...answer, model: "" }), options)
      const stream = LanguageModel.make(
        { stream: () => Stream.fromIterable(chunks.map((c) => ({ ...c, model: "" }))) },
        options
      )
      const generated = yield* body.generate(request).pipe(Effect.withTracer(recorder.tracer))
      yield* Stream.runDrain(stream.stream(request)).pipe(Effect.withTracer(recorder.tracer))
      assert.isUndefined(generated.model)
      for (const span of recorder.spans) assert.isFalse(span.attributes.has("gen_ai.response.model"), span.name)
      assert.strictEqual(recorder.spans.length, 2)
    })
  )
})
