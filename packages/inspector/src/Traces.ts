/**
 * The spans and metrics the inspector received: OTLP/HTTP JSON requests
 * (what Effect's `Otlp.layerJson` and the OpenTelemetry JS exporters send by
 * default) decoded with Effect Schema, kept in memory up to a bound, and a
 * change signal for the page's live view.
 *
 * A body that is not OTLP JSON is refused with a `TracesError` naming the
 * field (e.g. `resourceSpans.0.scopeSpans.0.spans.2.spanId`): nothing of it
 * is kept. Attributes are decoded from their `AnyValue` form to plain values
 * (`intValue` strings become numbers; arrays and key-value lists become
 * arrays and records).
 *
 * @example
 * ```ts
 * import { Traces } from "@rolecraft/inspector"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const traces = yield* Traces.make({ maxSpans: 1_000 })
 *   const spans = yield* Traces.decodeSpans({
 *     resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", name: "work" }] }] }]
 *   })
 *   yield* traces.add(spans)
 *   return (yield* traces.spans).map((span) => span.name) // ["work"]
 * })
 * ```
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/**
 * A span as the inspector keeps it: ids as hex strings (`parentSpanId`
 * `undefined` for a root), `kind` the OTLP number (1 internal, 2 server, 3
 * client, 4 producer, 5 consumer), times in epoch nanoseconds as bigints,
 * the decoded attributes, `statusCode` (0 unset, 1 ok, 2 error) and its
 * message, `service` the resource's `service.name`, and its events' names
 * and attributes.
 *
 * @category models
 * @since 0.3.0
 */
export interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly startTimeUnixNano: bigint
  readonly endTimeUnixNano: bigint
  readonly attributes: Readonly<Record<string, unknown>>
  readonly statusCode: number
  readonly statusMessage: string | undefined
  readonly service: string | undefined
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }>
}

/**
 * A metric's latest data points as received: its `name`, `unit`, and per
 * data point its attributes and value (`asInt`/`asDouble` of a sum or gauge;
 * `count` and `sum` of a histogram).
 *
 * @category models
 * @since 0.3.0
 */
export interface Metric {
  readonly name: string
  readonly unit: string | undefined
  readonly service: string | undefined
  readonly points: ReadonlyArray<{
    readonly attributes: Readonly<Record<string, unknown>>
    readonly value: number | undefined
    readonly count: number | undefined
    readonly sum: number | undefined
  }>
}

/**
 * An OTLP request the inspector could not read: `field` is the path of the
 * first problem in the body (`""` for the body as a whole).
 *
 * @category errors
 * @since 0.3.0
 */
export class TracesError extends Schema.TaggedError<TracesError>()("TracesError", {
  field: Schema.String,
  message: Schema.String
}) {}

// -----------------------------------------------------------------------------
// The OTLP JSON schema (only what the inspector reads; other fields pass)
// -----------------------------------------------------------------------------

interface AnyValueEncoded {
  readonly stringValue?: string | undefined
  readonly boolValue?: boolean | undefined
  readonly intValue?: string | number | undefined
  readonly doubleValue?: number | string | undefined
  readonly bytesValue?: string | undefined
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValueEncoded> | undefined } | undefined
  readonly kvlistValue?: { readonly values?: ReadonlyArray<KeyValueEncoded> | undefined } | undefined
}

interface KeyValueEncoded {
  readonly key: string
  readonly value?: AnyValueEncoded | undefined
}

const IntLike = Schema.Union([Schema.String, Schema.Number])

const AnyValue: Schema.Codec<AnyValueEncoded> = Schema.Struct({
  stringValue: Schema.optional(Schema.String),
  boolValue: Schema.optional(Schema.Boolean),
  intValue: Schema.optional(IntLike),
  doubleValue: Schema.optional(IntLike),
  bytesValue: Schema.optional(Schema.String),
  arrayValue: Schema.optional(
    Schema.Struct({
      values: Schema.optional(Schema.Array(Schema.suspend((): Schema.Codec<AnyValueEncoded> => AnyValue)))
    })
  ),
  kvlistValue: Schema.optional(
    Schema.Struct({
      values: Schema.optional(Schema.Array(Schema.suspend((): Schema.Codec<KeyValueEncoded> => KeyValue)))
    })
  )
})

const KeyValue: Schema.Codec<KeyValueEncoded> = Schema.Struct({ key: Schema.String, value: Schema.optional(AnyValue) })

const Attributes = Schema.optional(Schema.Array(KeyValue))

const Resource = Schema.optional(Schema.Struct({ attributes: Attributes }))

const Hex = Schema.String.check(Schema.isPattern(/^[0-9a-fA-F]*$/))

const Nanos = Schema.Union([Schema.String.check(Schema.isPattern(/^\d+$/)), Schema.Int])

const SpanJson = Schema.Struct({
  traceId: Hex,
  spanId: Hex,
  parentSpanId: Schema.optional(Schema.NullOr(Hex)),
  name: Schema.String,
  kind: Schema.optional(Schema.Int),
  startTimeUnixNano: Schema.optional(Nanos),
  endTimeUnixNano: Schema.optional(Nanos),
  attributes: Attributes,
  events: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, attributes: Attributes }))),
  status: Schema.optional(Schema.Struct({ code: Schema.optional(Schema.Int), message: Schema.optional(Schema.String) }))
})

const TraceRequest = Schema.Struct({
  resourceSpans: Schema.optional(
    Schema.Array(
      Schema.Struct({
        resource: Resource,
        scopeSpans: Schema.optional(Schema.Array(Schema.Struct({ spans: Schema.optional(Schema.Array(SpanJson)) })))
      })
    )
  )
})

const Point = Schema.Struct({
  attributes: Attributes,
  asInt: Schema.optional(IntLike),
  asDouble: Schema.optional(IntLike),
  count: Schema.optional(IntLike),
  sum: Schema.optional(IntLike)
})

const Points = Schema.optional(Schema.Struct({ dataPoints: Schema.optional(Schema.Array(Point)) }))

const MetricsRequest = Schema.Struct({
  resourceMetrics: Schema.optional(
    Schema.Array(
      Schema.Struct({
        resource: Resource,
        scopeMetrics: Schema.optional(
          Schema.Array(
            Schema.Struct({
              metrics: Schema.optional(
                Schema.Array(
                  Schema.Struct({
                    name: Schema.String,
                    unit: Schema.optional(Schema.String),
                    sum: Points,
                    gauge: Points,
                    histogram: Points
                  })
                )
              )
            })
          )
        )
      })
    )
  )
})

// -----------------------------------------------------------------------------
// Decoding
// -----------------------------------------------------------------------------

/**
 * An OTLP `AnyValue` as a plain value.
 *
 * @category getters
 * @since 0.3.0
 */
export const anyValue = (value: AnyValueEncoded | undefined): unknown => {
  if (value === undefined) return undefined
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return Number(value.doubleValue)
  if (value.bytesValue !== undefined) return value.bytesValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(anyValue)
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values)
  return undefined
}

/**
 * An OTLP attribute list as a record (a key given twice keeps its last value).
 *
 * @category getters
 * @since 0.3.0
 */
export const attributesOf = (attributes: ReadonlyArray<KeyValueEncoded> | undefined): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const attribute of attributes ?? []) {
    Object.defineProperty(out, attribute.key, {
      value: anyValue(attribute.value),
      enumerable: true,
      configurable: true,
      writable: true
    })
  }
  return out
}

const numberOf = (u: string | number | undefined): number | undefined => (u === undefined ? undefined : Number(u))

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const failure = (error: Schema.SchemaError): TracesError => {
  const [first] = formatter(error.issue).issues
  const field = (first?.path ?? [])
    .map((segment) => String(typeof segment === "object" && segment !== null ? segment.key : segment))
    .join(".")
  return new TracesError({
    field,
    message: `not an OTLP JSON request${field === "" ? "" : ` at ${field}`}: ${first?.message ?? error.message}`
  })
}

const serviceOf = (resource: { readonly attributes?: ReadonlyArray<KeyValueEncoded> | undefined } | undefined) => {
  const name = attributesOf(resource?.attributes)["service.name"]
  return typeof name === "string" ? name : undefined
}

/**
 * The spans of an OTLP/HTTP JSON traces request body (already parsed JSON).
 *
 * @category constructors
 * @since 0.3.0
 */
export const decodeSpans = (body: unknown): Effect.Effect<ReadonlyArray<Span>, TracesError> =>
  Effect.map(Effect.mapError(Schema.decodeUnknownEffect(TraceRequest)(body), failure), (request) =>
    (request.resourceSpans ?? []).flatMap((resourceSpans) => {
      const service = serviceOf(resourceSpans.resource)
      return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
        (scope.spans ?? []).map(
          (span): Span => ({
            traceId: span.traceId.toLowerCase(),
            spanId: span.spanId.toLowerCase(),
            parentSpanId:
              span.parentSpanId === undefined || span.parentSpanId === null || span.parentSpanId === ""
                ? undefined
                : span.parentSpanId.toLowerCase(),
            name: span.name,
            kind: span.kind ?? 0,
            startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
            endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            statusMessage: span.status?.message,
            service,
            events: (span.events ?? []).map((event) => ({
              name: event.name,
              attributes: attributesOf(event.attributes)
            }))
          })
        )
      )
    })
  )

/**
 * The metrics of an OTLP/HTTP JSON metrics request body (already parsed JSON).
 *
 * @category constructors
 * @since 0.3.0
 */
export const decodeMetrics = (body: unknown): Effect.Effect<ReadonlyArray<Metric>, TracesError> =>
  Effect.map(Effect.mapError(Schema.decodeUnknownEffect(MetricsRequest)(body), failure), (request) =>
    (request.resourceMetrics ?? []).flatMap((resourceMetrics) => {
      const service = serviceOf(resourceMetrics.resource)
      return (resourceMetrics.scopeMetrics ?? []).flatMap((scope) =>
        (scope.metrics ?? []).map(
          (metric): Metric => ({
            name: metric.name,
            unit: metric.unit,
            service,
            points:
              (metric.sum ?? metric.gauge ?? metric.histogram)?.dataPoints?.map((point) => ({
                attributes: attributesOf(point.attributes),
                value: numberOf(point.asInt) ?? numberOf(point.asDouble),
                count: numberOf(point.count),
                sum: numberOf(point.sum)
              })) ?? []
          })
        )
      )
    })
  )

// -----------------------------------------------------------------------------
// Keeping
// -----------------------------------------------------------------------------

/**
 * The received spans and metrics of one inspector: `add` keeps spans (the
 * oldest dropped past `maxSpans`; a span received again replaces its earlier
 * copy), `setMetrics` keeps each metric's latest points, `spans` and
 * `metrics` read what is kept, and `changes` is signalled after every
 * change (for the page's live view).
 *
 * @category models
 * @since 0.3.0
 */
export interface Traces {
  readonly add: (spans: ReadonlyArray<Span>) => Effect.Effect<void>
  readonly setMetrics: (metrics: ReadonlyArray<Metric>) => Effect.Effect<void>
  readonly spans: Effect.Effect<ReadonlyArray<Span>>
  readonly metrics: Effect.Effect<ReadonlyArray<Metric>>
  readonly changes: PubSub.PubSub<"spans" | "metrics">
}

/**
 * A fresh keeping of at most `maxSpans` spans (default 20,000; an integer
 * of at least 1).
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (options?: { readonly maxSpans?: number | undefined }): Effect.Effect<Traces> =>
  Effect.gen(function* () {
    const max = Math.max(1, Math.floor(options?.maxSpans ?? 20_000))
    const changes = yield* PubSub.sliding<"spans" | "metrics">(16)
    // A Map keeps insertion order: its first entries are the oldest.
    const kept = new Map<string, Span>()
    const metrics = new Map<string, Metric>()
    return {
      changes,
      add: (spans) =>
        Effect.suspend(() => {
          if (spans.length === 0) return Effect.void
          for (const span of spans) {
            const id = `${span.traceId}/${span.spanId}`
            kept.delete(id)
            kept.set(id, span)
          }
          for (const id of kept.keys()) {
            if (kept.size <= max) break
            kept.delete(id)
          }
          return PubSub.publish(changes, "spans")
        }),
      setMetrics: (received) =>
        Effect.suspend(() => {
          if (received.length === 0) return Effect.void
          for (const metric of received) metrics.set(`${metric.service ?? ""}/${metric.name}`, metric)
          return PubSub.publish(changes, "metrics")
        }),
      spans: Effect.sync(() => [...kept.values()]),
      metrics: Effect.sync(() => [...metrics.values()])
    }
  })
