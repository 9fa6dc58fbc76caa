/**
 * Everything that leaves an agent, gathered as text for tests that look for
 * secrets there: errors (every form a reporter could print), `agent.events`,
 * spans exported through @effect/opentelemetry (names, attributes, status,
 * events), log lines of a test logger, the metric registry, and the tool
 * messages a model is sent. `leaks` lists which secret (in any of the forms
 * an encoder gives it) shows where.
 */
import { inspect } from "node:util"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import type { Events, Prompt } from "@rolecraft/core"
import { Telemetry } from "@rolecraft/testing"
import { Effect, Layer, Metric, Stream } from "effect"
import type * as Scope from "effect/Scope"

const safely = (f: () => string): string => {
  try {
    return f()
  } catch (error) {
    return `<unserialisable: ${String(error)}>`
  }
}

/** Every way a reporter could show a value: its string, JSON, `inspect`, and its message, stack and causes. */
export const show = (value: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = value
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    parts.push(
      safely(() => String(current)),
      safely(() => JSON.stringify(current) ?? ""),
      safely(() => inspect(current, { depth: 8 }))
    )
    if (current instanceof Error) parts.push(current.message, current.stack ?? "")
    current = (current as { readonly cause?: unknown }).cause
  }
  return parts.join("\n")
}

/** What an exported span says: name, attributes, status and its events (exceptions included). */
export const spanText = (span: ReadableSpan): string =>
  [
    span.name,
    JSON.stringify(span.attributes),
    span.status.message ?? "",
    ...span.events.map((event) => `${event.name} ${JSON.stringify(event.attributes ?? {})}`)
  ].join("\n")

/** The forms a secret takes when encoded: as is, URL-encoded, base64, inside a JSON string. */
export const formsOf = (secret: string): ReadonlyArray<string> => [
  ...new Set([
    secret,
    encodeURIComponent(secret),
    Buffer.from(secret).toString("base64"),
    JSON.stringify(secret).slice(1, -1)
  ])
]

/** Which secrets show, in which exit: `[]` when none does. */
export const leaks = (exits: Readonly<Record<string, string>>, secrets: ReadonlyArray<string>): ReadonlyArray<string> =>
  Object.entries(exits).flatMap(([where, text]) =>
    secrets.flatMap((secret) =>
      formsOf(secret)
        .filter((form) => text.includes(form))
        .map((form) => `${where} holds ${JSON.stringify(form)}${form === secret ? "" : ` (a form of ${secret})`}`)
    )
  )

/** The tool messages of a history. */
export const toolMessages = (messages: ReadonlyArray<Prompt.Message>): string =>
  messages
    .filter((message) => message.role === "tool")
    .map((message) => message.content)
    .join("\n")

/**
 * A place to gather what leaves: provide `layer` (the OpenTelemetry tracer and the test logger), subscribe
 * to an agent's events with `listen`, then read `texts()`.
 */
export const make = () => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const recorder = Telemetry.make()
  const events: Array<Events.Event> = []
  const errors: Array<unknown> = []
  const messages: Array<string> = []
  const registry: Metric.MetricRegistry = new Map()
  const layer = Layer.mergeAll(
    OtelTracer.layer.pipe(Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, provider))),
    recorder.layer,
    Layer.succeed(Metric.MetricRegistry, registry)
  )
  /** Gathers an agent's events from now until the scope closes. */
  const listen = (stream: Stream.Stream<Events.Event>): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function* () {
      yield* Effect.forkScoped(Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))))
      // Let the subscription start before anything is published.
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
    })
  const metricText = (): string =>
    JSON.stringify(
      [...registry.values()].map(({ id, description, attributes }) => ({ id, description, attributes })),
      (_key, value) => (typeof value === "bigint" ? String(value) : value)
    )
  const texts = (): Record<string, string> => ({
    errors: errors.map(show).join("\n"),
    events: events.map(show).join("\n"),
    spans: exporter.getFinishedSpans().map(spanText).join("\n"),
    logs: recorder.logs.map((line) => `${line.message}\n${line.cause}`).join("\n"),
    metrics: metricText(),
    "tool messages": messages.join("\n")
  })
  const reset = () => {
    exporter.reset()
    events.length = 0
    errors.length = 0
    messages.length = 0
    registry.clear()
    ;(recorder.logs as Array<unknown>).length = 0
  }
  return { layer, listen, events, errors, messages, exporter, recorder, texts, reset }
}
