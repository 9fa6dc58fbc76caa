import { assert, describe, it } from "@effect/vitest"
import { OtlpReceiver } from "@rolecraft/testing"
import { Effect, Layer, Metric } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"

describe("OtlpReceiver", () => {
  it.live("receives the spans and metrics Effect's OTLP/HTTP JSON exporter sends, with parent links", () =>
    Effect.gen(function* () {
      const receiver = yield* OtlpReceiver.start
      const exporter = Otlp.layerJson({ baseUrl: receiver.url, resource: { serviceName: "receiver-test" } }).pipe(
        Layer.provide(FetchHttpClient.layer)
      )
      const counter = Metric.counter("receiver_test_calls", { description: "calls", incremental: true })
      // The exporter flushes when its layer's scope closes.
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Metric.update(counter, 2)
          yield* Effect.void.pipe(
            Effect.withSpan("child", { attributes: { n: 1, ok: true, tags: ["a", "b"] } }),
            Effect.withSpan("parent", { kind: "client" })
          )
        }).pipe(Effect.provide(exporter))
      )
      const spans = receiver.spans()
      const parent = spans.find((span) => span.name === "parent")
      const child = spans.find((span) => span.name === "child")
      assert.isDefined(parent)
      assert.isDefined(child)
      assert.strictEqual(child?.parentSpanId, parent?.spanId)
      assert.strictEqual(child?.traceId, parent?.traceId)
      assert.isUndefined(parent?.parentSpanId)
      assert.strictEqual(parent?.kind, 3)
      assert.strictEqual(parent?.service, "receiver-test")
      assert.deepStrictEqual(child?.attributes, { n: 1, ok: true, tags: ["a", "b"] })
      const metric = receiver.metrics().find((m) => m.name === "receiver_test_calls")
      assert.strictEqual(metric?.points[0]?.value, 2)
      assert.isTrue(receiver.received.every((request) => request.contentType.startsWith("application/json")))
    })
  )

  it.live("refuses what is not an OTLP JSON post", () =>
    Effect.gen(function* () {
      const receiver = yield* OtlpReceiver.start
      const post = (path: string, contentType: string, body: string) =>
        Effect.promise(() =>
          fetch(`${receiver.url}${path}`, { method: "POST", headers: { "content-type": contentType }, body })
        ).pipe(Effect.map((response) => response.status))
      assert.strictEqual(yield* post("/v1/other", "application/json", "{}"), 404)
      assert.strictEqual(yield* post("/v1/traces", "application/x-protobuf", "x"), 415)
      assert.strictEqual(yield* post("/v1/traces", "application/json", "{"), 400)
      assert.strictEqual(yield* post("/v1/traces", "application/json", '{"resourceSpans":[]}'), 200)
      assert.strictEqual(receiver.received.length, 1)
      assert.deepStrictEqual(receiver.spans(), [])
    })
  )
})
