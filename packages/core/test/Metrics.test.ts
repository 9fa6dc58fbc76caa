/**
 * The metrics an agent records with Effect's Metric: calls and failures by action and
 * category, durations, and the tokens and durations of model calls — read back with
 * Metric.value from a registry of the test's own.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Fiber, Metric, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import { TransientFailure } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import * as Metrics from "../src/Metrics.ts"
import * as Role from "../src/Role.ts"

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  spec: { model: { name: "gpt-test" } },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    slow: Action.local({
      description: "Takes 250 ms",
      parameters: {},
      run: () => Effect.as(Effect.sleep("250 millis"), "done")
    }),
    flaky: Action.local({
      description: "Always unavailable",
      parameters: {},
      run: () => Effect.fail(new TransientFailure({ action: "flaky", message: "unavailable" }))
    }).pipe(Action.resilience({ retry: { maxAttempts: 2, initialDelay: "10 millis", jitter: false } }))
  }
})

const of = (action: string) => ({ "rolecraft.agent": "planner", "rolecraft.action": action })

const count = (metric: Metric.Counter<number>, attributes: Record<string, string>) =>
  Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (state) => state.count)

const histogram = (metric: Metric.Histogram<number>, attributes: Record<string, string>) =>
  Metric.value(Metric.withAttributes(metric, attributes))

describe("Metrics", () => {
  it.effect("calls and failures by action and category, and call durations, in milliseconds", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
      // @ts-expect-error a missing argument, on purpose: a failed call is counted
      yield* Effect.flip(agent.executeAction("nights", { checkIn: "2026-11-02" }))
      yield* agent.execute({ action: "nights", params: {} })
      const slow = yield* Effect.forkChild(agent.executeAction("slow"))
      yield* TestClock.adjust("250 millis")
      yield* Fiber.join(slow)
      const flaky = yield* Effect.forkChild(Effect.flip(agent.executeAction("flaky")))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(flaky)
      // @ts-expect-error an unknown name, on purpose: a refused call is counted
      yield* Effect.flip(agent.executeAction("teleport"))

      assert.strictEqual(yield* count(Metrics.actionCalls, of("nights")), 3)
      assert.strictEqual(
        yield* count(Metrics.actionFailures, { ...of("nights"), "rolecraft.category": "VALIDATION" }),
        2
      )
      // One call, however many attempts its retry policy makes.
      assert.strictEqual(yield* count(Metrics.actionCalls, of("flaky")), 1)
      assert.strictEqual(yield* count(Metrics.actionFailures, { ...of("flaky"), "rolecraft.category": "TRANSIENT" }), 1)
      // Unknown names share one series, so a model's inventions cannot grow the metrics without bound.
      assert.strictEqual(yield* count(Metrics.actionCalls, of("(unknown)")), 1)
      assert.strictEqual(
        yield* count(Metrics.actionFailures, { ...of("(unknown)"), "rolecraft.category": "NOT_FOUND" }),
        1
      )
      assert.strictEqual(yield* count(Metrics.actionCalls, of("teleport")), 0)

      const durations = yield* histogram(Metrics.actionDuration, of("slow"))
      assert.strictEqual(durations.count, 1)
      assert.strictEqual(durations.sum, 250)
      // Retries and their backoff (10 ms, then 20 ms) are part of the call.
      assert.strictEqual((yield* histogram(Metrics.actionDuration, of("flaky"))).sum, 30)
    }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map()))
  )

  it.effect("model calls: tokens in and out, and call durations in seconds, by provider and model", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } }], {
          usage: { inputTokens: 100, outputTokens: 20 }
        }),
        ScriptedModel.reply("Three nights.", { usage: { inputTokens: 150, outputTokens: 5 } })
      ])
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      yield* agent.chat("How many nights?").pipe(Effect.provide(scripted.layer))
      const model = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "gpt-test"
      }
      const input = yield* histogram(Metrics.tokenUsage, { ...model, "gen_ai.token.type": "input" })
      const output = yield* histogram(Metrics.tokenUsage, { ...model, "gen_ai.token.type": "output" })
      assert.deepStrictEqual([input.count, input.sum], [2, 250])
      assert.deepStrictEqual([output.count, output.sum], [2, 25])
      assert.strictEqual((yield* histogram(Metrics.operationDuration, model)).count, 2)
      // The tool call the model made is a call of its action like any other.
      assert.strictEqual(yield* count(Metrics.actionCalls, of("nights")), 1)
    }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map()))
  )
})
