import { assert, describe, it } from "@effect/vitest"
import { Telemetry } from "@rolecraft/testing"
import { Effect } from "effect"

describe("Telemetry", () => {
  it.effect("records spans with their attributes and log lines with their level and cause", () =>
    Effect.gen(function* () {
      const recorder = Telemetry.make()
      yield* Effect.logWarning("careful", 42).pipe(
        Effect.andThen(Effect.logError("broke", new Error("boom"))),
        Effect.withSpan("outer", { attributes: { "rolecraft.action": "nights" } }),
        Effect.withTracer(recorder.tracer),
        Effect.provide(recorder.layer)
      )
      assert.deepStrictEqual(
        recorder.spans.map((span) => [span.name, Object.fromEntries(span.attributes)]),
        [["outer", { "rolecraft.action": "nights" }]]
      )
      assert.deepStrictEqual(
        recorder.logs.map((line) => [line.level, line.message]),
        [
          ["Warn", "careful 42"],
          ["Error", "broke Error: boom"]
        ]
      )
    })
  )
})
