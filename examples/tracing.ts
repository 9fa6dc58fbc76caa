/**
 * A chat turn traced to an OpenTelemetry collector, offline. The example
 * starts a local OTLP/HTTP JSON receiver (`@rolecraft/testing`'s
 * `OtlpReceiver`, standing in for a collector such as Jaeger or the
 * OpenTelemetry Collector) and a local OpenAI-compatible endpoint whose
 * script plays the model; Effect's own OTLP exporter (`Otlp.layerJson` from
 * `effect/observability`) sends the spans and metrics. The model calls two
 * tools in one step, then answers. The example prints the span tree the
 * receiver got — `invoke_agent`, a `chat` span per model call, an
 * `execute_tool` span per tool call — and the Rolecraft metrics.
 *
 * Against a real collector, point `baseUrl` at it (e.g.
 * `http://localhost:4318`) and drop the receiver.
 *
 * Run: node examples/tracing.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer, OtlpReceiver } from "@rolecraft/testing"
import { Console, Effect, Layer, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates (YYYY-MM-DD)",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
    }),
    quote: Action.local({
      description: "Price a stay",
      parameters: { nights: Schema.Int, guests: Schema.Int },
      run: ({ nights, guests }) => ({ total: nights * guests * 90, currency: "EUR" })
    })
  }
})

const kinds: Readonly<Record<number, string>> = {
  1: "internal",
  2: "server",
  3: "client",
  4: "producer",
  5: "consumer"
}

/** The attributes worth a glance, in a stable order. */
const shown = [
  "gen_ai.operation.name",
  "gen_ai.provider.name",
  "gen_ai.request.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.tool.name",
  "gen_ai.tool.call.id",
  "rolecraft.category"
]

/** The spans as an indented tree, children in the order they started (then by name). */
const tree = (spans: ReadonlyArray<OtlpReceiver.Span>): ReadonlyArray<string> => {
  const children = new Map<string | undefined, Array<OtlpReceiver.Span>>()
  const ids = new Set(spans.map((span) => span.spanId))
  for (const span of spans) {
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : undefined
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  const started = (a: OtlpReceiver.Span, b: OtlpReceiver.Span) => {
    const order = BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)
    return order < 0n ? -1 : order > 0n ? 1 : a.name.localeCompare(b.name)
  }
  const lines: Array<string> = []
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of [...(children.get(parent) ?? [])].sort(started)) {
      const attributes = shown
        .filter((key) => span.attributes[key] !== undefined)
        .map((key) => `${key}=${JSON.stringify(span.attributes[key])}`)
      lines.push(
        `${"  ".repeat(depth)}${span.name} [${kinds[span.kind] ?? span.kind}] ${attributes.join(" ")}`.trimEnd()
      )
      walk(span.spanId, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines
}

const program = Effect.gen(function* () {
  const receiver = yield* OtlpReceiver.start
  const endpoint = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.toolCalls(
      [
        { id: "call_nights", name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
        { id: "call_quote", name: "quote", arguments: { nights: 3, guests: 2 } }
      ],
      { usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 } }
    ),
    ChatCompletionsServer.reply("Three nights for two: 540 EUR.", {
      usage: { prompt_tokens: 200, completion_tokens: 12, total_tokens: 212 }
    })
  ])
  const model = OpenAiLanguageModel.layer({
    model: "gpt-4.1-mini",
    apiKey: Redacted.make("sk-local-example"),
    baseURL: endpoint.baseURL
  })
  const exporter = Otlp.layerJson({ baseUrl: receiver.url, resource: { serviceName: "rolecraft-example" } }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

  // The exporter sends what it buffered when its scope closes.
  const answer = yield* Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "planner", roles: [travel] })
    const result = yield* agent.chat("Three nights from 2 November for two: how much?")
    return result._tag === "Completed" ? result.text : result._tag
  }).pipe(Effect.scoped, Effect.provide(Layer.merge(model, exporter)))

  yield* Console.log(`answer: ${answer}`)
  yield* Console.log("\nspans received by the collector:")
  for (const line of tree(receiver.spans().filter((span) => span.service === "rolecraft-example"))) {
    yield* Console.log(`  ${line}`)
  }
  const metrics = receiver
    .metrics()
    .filter((metric) => metric.name.startsWith("rolecraft.") || metric.name.startsWith("gen_ai."))
  yield* Console.log("\nmetrics received by the collector:")
  for (const name of [...new Set(metrics.map((metric) => metric.name))].sort()) yield* Console.log(`  ${name}`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
