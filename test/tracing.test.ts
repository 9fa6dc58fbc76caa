/**
 * OpenTelemetry GenAI spans of a whole chat turn with tool calls: exported through
 * @effect/opentelemetry to the trace SDK's InMemorySpanExporter (names, kinds,
 * attributes, parent links), and sent as real OTLP/HTTP JSON by Effect's own exporter
 * to a local receiver (the payload, metrics included). Arguments and results only
 * reach spans when the agent opts in.
 */
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { assert, describe, it } from "@effect/vitest"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions"
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS
} from "@opentelemetry/semantic-conventions/incubating"
import { Action, Agent, Role } from "@rolecraft/core"
import { OtlpReceiver, ScriptedModel } from "@rolecraft/testing"
import { Effect, Layer, Metric, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  spec: { model: { name: "gpt-test" } },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    quote: Action.local({
      description: "Price a stay",
      parameters: { nights: Schema.Int, guests: Schema.Int },
      run: ({ nights, guests }) => ({ total: nights * guests * 90 })
    })
  }
})

/** One turn: three tool calls (one to a tool never offered), then an answer. */
const script = () =>
  ScriptedModel.make([
    ScriptedModel.toolCalls(
      [
        { id: "c1", name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
        { id: "c2", name: "quote", arguments: { nights: 3, guests: "two" } },
        { id: "c3", name: "teleport", arguments: {} }
      ],
      { usage: { inputTokens: 100, outputTokens: 20 } }
    ),
    ScriptedModel.reply("Three nights.", { usage: { inputTokens: 150, outputTokens: 5 } })
  ])

const otel = () => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const layer = OtelTracer.layer.pipe(Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, provider)))
  return { exporter, layer }
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

describe("tracing: OpenTelemetry GenAI spans", () => {
  it.effect("a chat turn: invoke_agent holds a chat span per model call and an execute_tool span per tool call", () =>
    Effect.gen(function* () {
      const { exporter, layer } = otel()
      const scripted = yield* script()
      yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const result = yield* agent.chat("Three nights from 2 November: how much for two?")
        assert.strictEqual(result._tag, "Completed")
      }).pipe(Effect.scoped, Effect.provide([scripted.layer, layer]))

      const spans = exporter.getFinishedSpans()
      const root = spans.find((span) => span.name === "invoke_agent planner")
      assert.isDefined(root)
      if (root === undefined) return
      assert.isUndefined(parentOf(root))
      assert.strictEqual(root.kind, SpanKind.INTERNAL)
      assert.deepInclude(root.attributes, {
        [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
        [ATTR_GEN_AI_AGENT_NAME]: "planner",
        [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-test",
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 250,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 25,
        "rolecraft.agent": "planner",
        "rolecraft.chat.result": "Completed",
        "rolecraft.chat.steps": 2
      })

      const children = spans.filter((span) => parentOf(span) === root.spanContext().spanId)
      const names = children.map((span) => span.name)
      assert.deepStrictEqual([...names].sort(), [
        "chat gpt-test",
        "chat gpt-test",
        "execute_tool nights",
        "execute_tool quote",
        "execute_tool teleport"
      ])
      // Model calls first and last; the step's tool calls between them.
      assert.strictEqual(names[0], "chat gpt-test")
      assert.strictEqual(names[4], "chat gpt-test")
      assert.isTrue(spans.every((span) => span.spanContext().traceId === root.spanContext().traceId))

      const [firstChat, lastChat] = children.filter((span) => span.name === "chat gpt-test")
      assert.strictEqual(firstChat?.kind, SpanKind.CLIENT)
      assert.deepInclude(firstChat?.attributes, {
        [ATTR_GEN_AI_OPERATION_NAME]: "chat",
        [ATTR_GEN_AI_PROVIDER_NAME]: "scripted",
        [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-test",
        [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["tool_calls"],
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 100,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 20,
        "rolecraft.action": "chat"
      })
      assert.deepStrictEqual(lastChat?.attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS], ["stop"])
      assert.isUndefined(firstChat?.attributes["gen_ai.system"])

      const tool = (name: string) => children.find((span) => span.name === `execute_tool ${name}`)
      const nights = tool("nights")
      assert.strictEqual(nights?.kind, SpanKind.INTERNAL)
      assert.deepStrictEqual(nights?.attributes, {
        [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
        [ATTR_GEN_AI_TOOL_NAME]: "nights",
        [ATTR_GEN_AI_TOOL_CALL_ID]: "c1",
        "rolecraft.agent": "planner",
        "rolecraft.action": "nights",
        "rolecraft.role": "travel",
        "rolecraft.type": "local"
      })
      assert.strictEqual(nights?.status.code, SpanStatusCode.OK)
      // A failed call: its category, as error.type and rolecraft.category, and an error status.
      const quote = tool("quote")
      assert.deepInclude(quote?.attributes, {
        [ATTR_GEN_AI_TOOL_CALL_ID]: "c2",
        [ATTR_ERROR_TYPE]: "VALIDATION",
        "rolecraft.category": "VALIDATION"
      })
      assert.strictEqual(quote?.status.code, SpanStatusCode.ERROR)
      // A call to a tool never offered does not reach the pipeline; it still has its span.
      assert.deepInclude(tool("teleport")?.attributes, {
        [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
        [ATTR_GEN_AI_TOOL_NAME]: "teleport",
        [ATTR_GEN_AI_TOOL_CALL_ID]: "c3",
        [ATTR_ERROR_TYPE]: "NOT_FOUND"
      })
      assert.strictEqual(tool("teleport")?.status.code, SpanStatusCode.ERROR)
      // Arguments and results stay out of spans unless asked for.
      for (const span of spans) {
        assert.isUndefined(span.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS], span.name)
        assert.isUndefined(span.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT], span.name)
      }
      yield* scripted.assertDone
    })
  )

  it.effect("traceContent: arguments and results on execute_tool spans when the agent opts in", () =>
    Effect.gen(function* () {
      const { exporter, layer } = otel()
      yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [travel], traceContent: true })
        yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
        // @ts-expect-error a string for a number, on purpose: the failed call's span is checked
        yield* Effect.flip(agent.executeAction("quote", { nights: 3, guests: "two" }))
      }).pipe(Effect.scoped, Effect.provide(layer))
      const [nights, quote] = exporter.getFinishedSpans()
      assert.strictEqual(nights?.name, "execute_tool nights")
      assert.isUndefined(nights && parentOf(nights))
      assert.isUndefined(nights?.attributes[ATTR_GEN_AI_TOOL_CALL_ID])
      assert.strictEqual(
        nights?.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS],
        '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}'
      )
      assert.strictEqual(nights?.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT], "3")
      assert.strictEqual(quote?.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS], '{"nights":3,"guests":"two"}')
      assert.isUndefined(quote?.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT])
    })
  )

  it.live("Effect's OTLP/HTTP JSON exporter sends the turn's spans and Rolecraft's metrics to a collector", () =>
    Effect.gen(function* () {
      const receiver = yield* OtlpReceiver.start
      const scripted = yield* script()
      const exporter = Otlp.layerJson({ baseUrl: receiver.url, resource: { serviceName: "tracing-test" } }).pipe(
        Layer.provide(FetchHttpClient.layer)
      )
      // A registry of this test's own, so the counts are this turn's.
      yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        yield* agent.chat("Three nights from 2 November: how much for two?")
      }).pipe(
        Effect.scoped,
        Effect.provide([scripted.layer, exporter]),
        Effect.provideService(Metric.MetricRegistry, new Map())
      )

      assert.isTrue(receiver.received.some((request) => request.path === "/v1/traces"))
      const spans = receiver.spans().filter((span) => span.service === "tracing-test")
      const root = spans.find((span) => span.name === "invoke_agent planner")
      assert.isDefined(root)
      assert.isUndefined(root?.parentSpanId)
      assert.strictEqual(root?.kind, 1) // SPAN_KIND_INTERNAL
      const children = spans.filter((span) => span.parentSpanId === root?.spanId)
      assert.deepStrictEqual(children.map((span) => span.name).sort(), [
        "chat gpt-test",
        "chat gpt-test",
        "execute_tool nights",
        "execute_tool quote",
        "execute_tool teleport"
      ])
      const chat = children.find((span) => span.name === "chat gpt-test")
      assert.strictEqual(chat?.kind, 3) // SPAN_KIND_CLIENT
      assert.deepInclude(chat?.attributes, {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.response.finish_reasons": ["tool_calls"]
      })
      const quote = children.find((span) => span.name === "execute_tool quote")
      assert.strictEqual(quote?.statusCode, 2) // STATUS_CODE_ERROR
      assert.deepInclude(quote?.attributes, { "gen_ai.tool.call.id": "c2", "error.type": "VALIDATION" })
      assert.isTrue(spans.every((span) => span.traceId === root?.traceId))

      const metric = (name: string) => receiver.metrics().filter((m) => m.name === name)
      const calls = metric("rolecraft.action.calls").flatMap((m) => m.points)
      const nightsCalls = calls.find(
        (point) =>
          point.attributes["rolecraft.action"] === "nights" && point.attributes["rolecraft.agent"] === "planner"
      )
      assert.strictEqual(nightsCalls?.value, 1)
      const failures = metric("rolecraft.action.failures").flatMap((m) => m.points)
      assert.isTrue(
        failures.some(
          (point) =>
            point.attributes["rolecraft.action"] === "quote" &&
            point.attributes["rolecraft.category"] === "VALIDATION" &&
            point.value === 1
        )
      )
      const tokens = metric("gen_ai.client.token.usage").flatMap((m) => m.points)
      const input = tokens.find((point) => point.attributes["gen_ai.token.type"] === "input")
      assert.strictEqual(input?.sum, 250)
      assert.strictEqual(input?.count, 2)
    })
  )
})
