import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema, Tracer } from "effect"
import * as Action from "../../../src/Action.ts"
import * as Agent from "../../../src/Agent.ts"
import * as Role from "../../../src/Role.ts"

// The action reports the span it runs in: its parent is the call's execute_tool span.
const seen: Array<Tracer.AnySpan> = []
const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights",
      parameters: { checkIn: Schema.String },
      run: () =>
        Effect.map(Effect.currentParentSpan, (span) => {
          seen.push(span)
          return 3
        })
    })
  }
})

const callSpan = Effect.gen(function* () {
  seen.length = 0
  const agent = yield* Agent.make({ id: "planner", roles: [travel] })
  yield* agent.executeAction("nights", { checkIn: "2026-11-02" })
  const span = seen[0]
  assert.isDefined(span)
  assert.strictEqual(span._tag, "Span")
  return span as Tracer.Span
}).pipe(Effect.scoped)

describe("execute_tool span attributes", () => {
  it.effect("with Effect's native tracer (no backend) the span is made, its attributes are not recorded", () =>
    Effect.gen(function* () {
      const span = yield* callSpan
      assert.strictEqual(span.name, "execute_tool nights")
      assert.strictEqual(span.attributes.size, 0)
    })
  )

  it.effect("with a tracer installed the span carries its attributes", () =>
    Effect.gen(function* () {
      const span = yield* callSpan.pipe(
        Effect.withTracer(Tracer.make({ span: (options) => new Tracer.NativeSpan(options) }))
      )
      assert.strictEqual(span.name, "execute_tool nights")
      assert.strictEqual(span.attributes.get("gen_ai.tool.name"), "nights")
      assert.strictEqual(span.attributes.get("rolecraft.role"), "travel")
    })
  )
})
