import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel, Telemetry } from "@rolecraft/testing"
import { Chunk, Effect, Fiber, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import { TransientFailure } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type * as Events from "../src/Events.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const secret = "s3cr3t-card-4111111111111111"

const travel = Role.make({
  identity: identity("travel"),
  actions: {
    pay: Action.local({
      description: "Pay with a card",
      parameters: { card: Schema.String, amount: Schema.Number },
      run: ({ amount }) => Effect.as(Effect.sleep("2 seconds"), `paid ${amount}`)
    }),
    flaky: Action.local({
      description: "Fails",
      parameters: { card: Schema.String },
      run: () => Effect.fail(new TransientFailure({ action: "flaky", message: "upstream busy", status: 503 }))
    })
  }
})

/** Starts collecting `n` events of the agent; waits until the subscription is live. */
const collect = (agent: Agent.Agent<any, any>, n: number) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(agent.events, n)))
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow
    return Effect.map(Fiber.join(fiber), (events) => Chunk.toReadonlyArray(Chunk.fromIterable(events)))
  })

describe("Events and spans (SPEC §5)", () => {
  it.effect("a call publishes started then succeeded or failed, with duration on the Clock and the request's ids", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const events = yield* collect(agent, 6)
      yield* TestClock.adjust("1 second")
      const paid = yield* Effect.forkChild(
        agent.execute({ action: "pay", params: { card: secret, amount: "12" }, correlationId: "req-7" })
      )
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(paid)
      yield* Effect.exit(agent.executeAction("flaky", { card: secret }))
      // @ts-expect-error an unknown name, on purpose: its event is checked
      yield* Effect.exit(agent.executeAction("nope", {}))
      const all = yield* events
      const common = { agentId: "planner", role: "travel", type: "local" } as const
      assert.deepStrictEqual(all, [
        { _tag: "ActionStarted", ...common, action: "pay", correlationId: "req-7", timestamp: 1000 },
        {
          _tag: "ActionSucceeded",
          ...common,
          action: "pay",
          correlationId: "req-7",
          timestamp: 3000,
          durationMs: 2000,
          usage: undefined
        },
        { _tag: "ActionStarted", ...common, action: "flaky", correlationId: undefined, timestamp: 3000 },
        {
          _tag: "ActionFailed",
          ...common,
          action: "flaky",
          correlationId: undefined,
          timestamp: 3000,
          durationMs: 0,
          error: "TransientFailure",
          category: "TRANSIENT",
          message: "upstream busy"
        },
        {
          _tag: "ActionStarted",
          agentId: "planner",
          action: "nope",
          role: undefined,
          type: undefined,
          correlationId: undefined,
          timestamp: 3000
        },
        {
          _tag: "ActionFailed",
          agentId: "planner",
          action: "nope",
          role: undefined,
          type: undefined,
          correlationId: undefined,
          timestamp: 3000,
          durationMs: 0,
          error: "ActionNotFound",
          category: "NOT_FOUND",
          message: 'no action "nope"; available: pay, flaky'
        }
      ] satisfies ReadonlyArray<Events.Event>)
      assert.notInclude(JSON.stringify(all), secret)
    })
  )

  it.effect("an llm action's ActionSucceeded carries the tokens of its model call; other calls carry none", () =>
    Effect.gen(function* () {
      const writer = Role.make({
        identity: identity("writer"),
        actions: {
          summarize: Action.llm({ description: "Summarize", parameters: { text: Schema.String } }),
          count: Action.local({ description: "Count", parameters: {}, run: () => 3 })
        }
      })
      const agent = yield* Agent.make({ id: "planner", roles: [writer] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.reply("Short.", { usage: { inputTokens: 20, outputTokens: 3 } })
      ])
      const events = yield* collect(agent, 4)
      yield* agent.executeAction("summarize", { text: "A long text" }).pipe(Effect.provide(scripted.layer))
      yield* agent.executeAction("count", {})
      const succeeded = (yield* events).filter((event) => event._tag === "ActionSucceeded")
      assert.deepStrictEqual(
        succeeded.map((event) => [event.action, event.usage]),
        [
          ["summarize", { inputTokens: 20, outputTokens: 3, totalTokens: 23 }],
          ["count", undefined]
        ]
      )
      yield* scripted.assertDone
    })
  )

  it.effect("an interrupted call ends with ActionInterrupted; every subscriber sees every event", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const first = yield* collect(agent, 2)
      const second = yield* collect(agent, 2)
      const call = yield* Effect.forkChild(agent.executeAction("pay", { card: "x", amount: 1 }))
      yield* TestClock.adjust("500 millis")
      yield* Fiber.interrupt(call)
      const [a, b] = [yield* first, yield* second]
      assert.deepStrictEqual(a, b)
      assert.deepStrictEqual(
        a.map((e) => [e._tag, "durationMs" in e ? e.durationMs : undefined]),
        [
          ["ActionStarted", undefined],
          ["ActionInterrupted", 500]
        ]
      )
    })
  )

  it.effect(
    "one span execute_tool <action> per call (kind internal) with agent, role, action, type; category on failure",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = Telemetry.make()
        yield* Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "planner", roles: [travel] })
          yield* Effect.exit(agent.executeAction("flaky", { card: secret }))
          yield* agent.execute({ action: "flaky", params: { card: secret }, correlationId: "req-9" })
        }).pipe(Effect.withTracer(tracer))
        assert.deepStrictEqual(
          spans.map((span) => span.name),
          ["execute_tool flaky", "execute_tool flaky"]
        )
        assert.strictEqual(spans[0]!.kind, "internal")
        assert.deepStrictEqual(Object.fromEntries(spans[0]!.attributes), {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "flaky",
          "error.type": "TRANSIENT",
          "rolecraft.agent": "planner",
          "rolecraft.action": "flaky",
          "rolecraft.role": "travel",
          "rolecraft.type": "local",
          "rolecraft.category": "TRANSIENT"
        })
        assert.strictEqual(spans[1]!.attributes.get("rolecraft.correlation_id"), "req-9")
        assert.strictEqual(spans[0]!.status._tag, "Ended")
        for (const span of spans) assert.notInclude(JSON.stringify([...span.attributes]), secret)
      })
  )

  it.effect("traceSteps: each step in a child span Rolecraft.step.<step>, in pipeline order", () =>
    Effect.gen(function* () {
      const { spans, tracer } = Telemetry.make()
      yield* Effect.gen(function* () {
        const untraced = yield* Agent.make({ id: "quiet", roles: [travel] })
        const fiber = yield* Effect.forkChild(untraced.executeAction("pay", { card: "x", amount: 1 }))
        yield* TestClock.adjust("2 seconds")
        yield* Fiber.join(fiber)
        const agent = yield* Agent.make({ id: "planner", roles: [travel], traceSteps: true })
        const traced = yield* Effect.forkChild(agent.executeAction("pay", { card: "x", amount: 1 }))
        yield* TestClock.adjust("2 seconds")
        yield* Fiber.join(traced)
      }).pipe(Effect.withTracer(tracer))
      const [quiet, root, ...steps] = spans
      assert.strictEqual(quiet!.name, "execute_tool pay")
      assert.strictEqual(root!.name, "execute_tool pay")
      assert.deepStrictEqual(
        steps.map((span) => span.name),
        [
          "authority",
          "approval",
          "beforeHook",
          "inputGuardrail",
          "conversion",
          "precondition",
          "retrieval",
          "run",
          "outputGuardrail",
          "postcondition",
          "afterHook"
        ].map((step) => `Rolecraft.step.${step}`)
      )
      for (const span of steps) {
        assert.strictEqual(span.parent._tag === "Some" && span.parent.value.spanId, root!.spanId)
      }
    })
  )
})
