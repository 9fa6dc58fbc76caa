/**
 * A local OTLP/HTTP JSON receiver: a real `node:http` server on 127.0.0.1
 * that accepts what an OpenTelemetry exporter posts to `/v1/traces`,
 * `/v1/metrics` and `/v1/logs` (Effect's `Otlp.layerJson`, or any exporter
 * sending JSON), keeps every request, and reads the spans and metrics back as
 * plain records — for tests and examples that check what reaches a collector.
 *
 * @example
 * ```ts
 * import { OtlpReceiver } from "@rolecraft/testing"
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { Otlp } from "effect/observability"
 *
 * const program = Effect.gen(function* () {
 *   const receiver = yield* OtlpReceiver.start
 *   const exporter = Otlp.layerJson({ baseUrl: receiver.url, resource: { serviceName: "test" } }).pipe(
 *     Layer.provide(FetchHttpClient.layer)
 *   )
 *   yield* Effect.void.pipe(Effect.withSpan("work"), Effect.provide(exporter)) // exported when the layer closes
 *   return receiver.spans().map((span) => span.name) // ["work"]
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as Http from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as LocalHttpServer from "./LocalHttpServer.ts"

/**
 * One request the receiver accepted: its `path` (`/v1/traces`, …), its
 * `contentType` and its body parsed as JSON.
 *
 * @category models
 * @since 0.1.0
 */
export interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: unknown
}

/**
 * A span as the receiver read it from `resourceSpans[].scopeSpans[].spans[]`:
 * ids as hex strings (`parentSpanId` `undefined` for a root), `kind` as the
 * OTLP number (1 internal, 2 server, 3 client, 4 producer, 5 consumer), the
 * attributes decoded from their `AnyValue` form (`intValue` strings become
 * numbers, arrays become arrays), `status.code` (0 unset, 1 ok, 2 error),
 * `service` the resource's `service.name`, and `startTimeUnixNano` and
 * `endTimeUnixNano` as given (decimal strings of nanoseconds; `"0"` when
 * absent).
 *
 * @category models
 * @since 0.1.0
 */
export interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly statusCode: number
  readonly service: string | undefined
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
}

/**
 * A metric as the receiver read it from
 * `resourceMetrics[].scopeMetrics[].metrics[]`: its `name`, `unit`,
 * `description`, and the data points of its sum, gauge or histogram, each
 * with its decoded attributes and its value (`asInt`/`asDouble` for sums and
 * gauges, `count`/`sum` for histograms).
 *
 * @category models
 * @since 0.1.0
 */
export interface Metric {
  readonly name: string
  readonly unit: string | undefined
  readonly description: string | undefined
  readonly points: ReadonlyArray<{
    readonly attributes: Readonly<Record<string, unknown>>
    readonly value: number | undefined
    readonly count: number | undefined
    readonly sum: number | undefined
  }>
}

/**
 * A running receiver. `url` is its origin (`http://127.0.0.1:<port>`), the
 * `baseUrl` to give an OTLP exporter; `received` every accepted request so
 * far; `spans` and `metrics` what those requests carried, in arrival order.
 *
 * @category models
 * @since 0.1.0
 */
export interface OtlpReceiver {
  readonly url: string
  readonly received: ReadonlyArray<Received>
  readonly spans: () => ReadonlyArray<Span>
  readonly metrics: () => ReadonlyArray<Metric>
}

const paths: ReadonlySet<string> = new Set(["/v1/traces", "/v1/metrics", "/v1/logs"])

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const list = (u: unknown): ReadonlyArray<Json> => (Array.isArray(u) ? u.filter(isRecord) : [])

/**
 * Decodes an OTLP `AnyValue` (`{ stringValue }`, `{ intValue }`, …).
 *
 * @category getters
 * @since 0.1.0
 */
export const anyValue = (value: unknown): unknown => {
  if (!isRecord(value)) return undefined
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return value.doubleValue
  if ("arrayValue" in value) return list(isRecord(value.arrayValue) ? value.arrayValue.values : []).map(anyValue)
  if ("kvlistValue" in value) return attributesOf(isRecord(value.kvlistValue) ? value.kvlistValue.values : [])
  return undefined
}

/**
 * Decodes an OTLP attribute list (`[{ key, value: AnyValue }]`) into a record.
 *
 * @category getters
 * @since 0.1.0
 */
export const attributesOf = (attributes: unknown): Readonly<Record<string, unknown>> => {
  const out: Record<string, unknown> = {}
  for (const attribute of list(attributes)) {
    if (typeof attribute.key === "string") {
      Object.defineProperty(out, attribute.key, { value: anyValue(attribute.value), enumerable: true })
    }
  }
  return out
}

const hex = (u: unknown): string | undefined => (typeof u === "string" && u.length > 0 ? u : undefined)

const spansOf = (body: unknown): ReadonlyArray<Span> =>
  list(isRecord(body) ? body.resourceSpans : []).flatMap((resourceSpans) => {
    const resource = isRecord(resourceSpans.resource) ? attributesOf(resourceSpans.resource.attributes) : {}
    const service = typeof resource["service.name"] === "string" ? resource["service.name"] : undefined
    return list(resourceSpans.scopeSpans).flatMap((scope) =>
      list(scope.spans).map(
        (span): Span => ({
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          statusCode: Number(isRecord(span.status) ? (span.status.code ?? 0) : 0),
          service,
          startTimeUnixNano: String(span.startTimeUnixNano ?? "0"),
          endTimeUnixNano: String(span.endTimeUnixNano ?? "0")
        })
      )
    )
  })

const number = (u: unknown): number | undefined =>
  typeof u === "number" ? u : typeof u === "string" && u.length > 0 ? Number(u) : undefined

const metricsOf = (body: unknown): ReadonlyArray<Metric> =>
  list(isRecord(body) ? body.resourceMetrics : []).flatMap((resourceMetrics) =>
    list(resourceMetrics.scopeMetrics).flatMap((scope) =>
      list(scope.metrics).map((metric): Metric => {
        const data = [metric.sum, metric.gauge, metric.histogram].find(isRecord)
        return {
          name: String(metric.name),
          unit: typeof metric.unit === "string" ? metric.unit : undefined,
          description: typeof metric.description === "string" ? metric.description : undefined,
          points: list(data?.dataPoints).map((point) => ({
            attributes: attributesOf(point.attributes),
            value: number(point.asInt) ?? number(point.asDouble),
            count: number(point.count),
            sum: number(point.sum)
          }))
        }
      })
    )
  )

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/**
 * Starts a receiver for the life of the scope. It answers `POST` to
 * `/v1/traces`, `/v1/metrics` and `/v1/logs` with a JSON body with `200 {}`
 * (an OTLP success); anything else gets 404 or 415 and is not kept. A body
 * that is not JSON is answered 400.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { Otlp } from "effect/observability"
 * import { OtlpReceiver } from "@rolecraft/testing"
 *
 * const program = Effect.gen(function* () {
 *   const receiver = yield* OtlpReceiver.start
 *   const exporter = Otlp.layerJson({ baseUrl: receiver.url, resource: { serviceName: "demo" } }).pipe(
 *     Layer.provide(FetchHttpClient.layer)
 *   )
 *   yield* Effect.void.pipe(Effect.withSpan("hello"), Effect.provide(exporter))
 *   return receiver.spans().map((span) => span.name) // ["hello"]
 * }).pipe(Effect.scoped)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const start: Effect.Effect<OtlpReceiver, never, Scope.Scope> = Effect.gen(function* () {
  const received: Array<Received> = []
  const server = yield* LocalHttpServer.serve((request, response) => {
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname
    const contentType = request.headers["content-type"] ?? ""
    if (request.method !== "POST" || !paths.has(path)) {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found")
      return
    }
    if (!contentType.startsWith("application/json")) {
      response.writeHead(415, { "content-type": "text/plain" }).end("This receiver reads OTLP/HTTP JSON only")
      return
    }
    readBody(request).then(
      (text) => {
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          response.writeHead(400, { "content-type": "text/plain" }).end("The body is not JSON")
          return
        }
        received.push({ path, contentType, body })
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      },
      () => response.writeHead(400).end()
    )
  })
  return {
    url: server.url,
    received,
    spans: () => received.filter((r) => r.path === "/v1/traces").flatMap((r) => spansOf(r.body)),
    metrics: () => received.filter((r) => r.path === "/v1/metrics").flatMap((r) => metricsOf(r.body))
  }
})
