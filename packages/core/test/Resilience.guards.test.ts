import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import { type ActionError, TransientFailure, ValidationError } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type * as Resilience from "../src/Resilience.ts"
import * as RunStep from "../src/internal/resilience/runStep.ts"
import * as ResiliencePolicy from "../src/internal/resilience/policy.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

type Step = "ok" | "fail" | "invalid" | "slow-ok" | "slow-fail"

/** An attempt that plays the steps given, one per call, counting its calls. */
const scripted = (steps: ReadonlyArray<Step>) =>
  Effect.gen(function* () {
    const calls = yield* Ref.make(0)
    const attempt: Effect.Effect<string, ActionError> = Effect.gen(function* () {
      const n = yield* Ref.getAndUpdate(calls, (c) => c + 1)
      const step = steps[n] ?? "ok"
      if (step.startsWith("slow")) yield* Effect.sleep("1 second")
      if (step === "fail" || step === "slow-fail") return yield* new TransientFailure({ action: "a", message: "down" })
      if (step === "invalid") {
        return yield* new ValidationError({ action: "a", message: "bad", issues: [{ path: "x", message: "bad" }] })
      }
      return `ok ${n}`
    })
    return { calls, attempt }
  })

const breaker = { window: 4, minimumCalls: 4, failureRateThreshold: 0.5, resetAfter: "10 seconds" } as const

const runWith = (policy: Resilience.Policy) =>
  Effect.gen(function* () {
    const guards = yield* ResiliencePolicy.makeGuards("a", policy)
    return (attempt: Effect.Effect<string, ActionError>) =>
      RunStep.run({ action: "a", policy, attemptTimeout: undefined, guards, attempt })
  })

const failure = (exit: Exit.Exit<unknown, ActionError>) => Option.getOrThrow(Exit.findErrorOption(exit))

describe("Resilience guards (SPEC §9 step 7)", () => {
  describe("circuit breaker", () => {
    it.effect("opens at the failure rate over the window, half-opens after resetAfter, closes on a good probe", () =>
      Effect.gen(function* () {
        const { calls, attempt } = yield* scripted(["fail", "ok", "fail", "ok", "slow-fail", "slow-ok", "fail"])
        const run = yield* runWith({ circuitBreaker: breaker })
        for (let i = 0; i < 4; i++) yield* Effect.exit(run(attempt))
        assert.strictEqual(yield* Ref.get(calls), 4)

        // Open: calls fail at once, TRANSIENT, with the time left, and never reach the attempt.
        yield* TestClock.adjust("3 seconds")
        const open = failure(yield* Effect.exit(run(attempt)))
        assert.deepStrictEqual([open._tag, open.category, open.retryable], ["TransientFailure", "TRANSIENT", true])
        assert.include(open.message, "circuit breaker is open")
        assert.deepStrictEqual(open._tag === "TransientFailure" ? open.retryAfter : undefined, Duration.millis(7000))
        yield* TestClock.adjust("6999 millis")
        assert.strictEqual(failure(yield* Effect.exit(run(attempt)))._tag, "TransientFailure")
        assert.strictEqual(yield* Ref.get(calls), 4)

        // Half-open: one probe; others fail at once while it runs; a failed probe re-opens.
        yield* TestClock.adjust("1 milli")
        const probe = yield* Effect.forkChild(Effect.exit(run(attempt)))
        yield* Effect.yieldNow
        const during = failure(yield* Effect.exit(run(attempt)))
        assert.include(during.message, "half-open")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(failure(yield* Fiber.join(probe)).message, "down")
        assert.strictEqual(yield* Ref.get(calls), 5)
        assert.include(failure(yield* Effect.exit(run(attempt))).message, "circuit breaker is open")

        // After another resetAfter, a good probe closes the circuit with an empty window.
        yield* TestClock.adjust("10 seconds")
        const good = yield* Effect.forkChild(run(attempt))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(good), "ok 5")
        assert.strictEqual(failure(yield* Effect.exit(run(attempt))).message, "down", "closed: the attempt runs")
        assert.strictEqual(yield* run(attempt), "ok 7", "one failure in a fresh window does not open it")
      })
    )

    it.effect("does not open before minimumCalls, nor on failures it does not record (VALIDATION)", () =>
      Effect.gen(function* () {
        const { calls, attempt } = yield* scripted(["fail", "fail", "fail", "invalid", "invalid", "invalid", "invalid"])
        const run = yield* runWith({ circuitBreaker: breaker })
        for (let i = 0; i < 7; i++) yield* Effect.exit(run(attempt))
        assert.strictEqual(yield* Ref.get(calls), 7, "3 recorded failures < minimumCalls 4; VALIDATION not recorded")
        assert.strictEqual(yield* run(attempt), "ok 7")
      })
    )

    it.effect("an interrupted probe lets the next call probe", () =>
      Effect.gen(function* () {
        const { calls, attempt } = yield* scripted(["fail", "fail", "fail", "fail", "slow-ok", "ok"])
        const run = yield* runWith({ circuitBreaker: breaker })
        for (let i = 0; i < 4; i++) yield* Effect.exit(run(attempt))
        yield* TestClock.adjust("10 seconds")
        const probe = yield* Effect.forkChild(run(attempt))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(probe)
        assert.strictEqual(yield* run(attempt), "ok 5")
        assert.strictEqual(yield* Ref.get(calls), 6)
      })
    )

    it.effect("retry sits outside the breaker: it waits the open circuit's retryAfter, then probes", () =>
      Effect.gen(function* () {
        const { calls, attempt } = yield* scripted(["fail", "fail", "fail", "fail", "fail", "ok"])
        const run = yield* runWith({
          circuitBreaker: { ...breaker, resetAfter: "5 seconds" },
          retry: { maxAttempts: 10, initialDelay: "1 second", jitter: false }
        })
        const fiber = yield* Effect.forkChild(run(attempt))
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(yield* Fiber.join(fiber), "ok 5")
        assert.strictEqual(yield* Ref.get(calls), 6, "no attempt ran while the circuit was open")
      })
    )

    it.effect("is per agent and per action", () =>
      Effect.gen(function* () {
        const calls = yield* Ref.make(0)
        const down = Action.local({
          description: "Always down",
          parameters: {},
          run: () =>
            Effect.andThen(
              Ref.update(calls, (n) => n + 1),
              Effect.fail(new TransientFailure({ action: "down", message: "down" }))
            )
        }).pipe(Action.resilience({ circuitBreaker: { ...breaker, window: 2, minimumCalls: 2 } }))
        const role = Role.make({ identity: identity("r"), actions: { down, alsoDown: down } })
        const first = yield* Agent.make({ id: "first", roles: [role] })
        const second = yield* Agent.make({ id: "second", roles: [role] })
        for (let i = 0; i < 3; i++) yield* Effect.exit(first.executeAction("down", {}))
        assert.strictEqual(yield* Ref.get(calls), 2, "open after two failures")
        yield* Effect.exit(first.executeAction("alsoDown", {}))
        yield* Effect.exit(second.executeAction("down", {}))
        assert.strictEqual(yield* Ref.get(calls), 4, "another action and another agent still run")
      })
    )
  })

  describe("bulkhead", () => {
    it.effect("runs at most maxConcurrent, queues maxQueued, rejects the rest at once as TRANSIENT", () =>
      Effect.gen(function* () {
        const running = yield* Ref.make(0)
        const peak = yield* Ref.make(0)
        const slow = Effect.gen(function* () {
          const now = yield* Ref.updateAndGet(running, (n) => n + 1)
          yield* Ref.update(peak, (p) => Math.max(p, now))
          yield* Effect.sleep("1 second")
          yield* Ref.update(running, (n) => n - 1)
          return "done"
        })
        const run = yield* runWith({ bulkhead: { maxConcurrent: 2, maxQueued: 1 } })
        const admitted = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(run(slow)))
        yield* Effect.yieldNow
        const full = failure(yield* Effect.exit(run(slow)))
        assert.deepStrictEqual([full._tag, full.retryable], ["TransientFailure", true])
        assert.include(full.message, "bulkhead is full")
        yield* TestClock.adjust("1 second")
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* Fiber.joinAll(admitted), ["done", "done", "done"])
        assert.strictEqual(yield* Ref.get(peak), 2)
        const again = yield* Effect.forkChild(run(slow))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(again), "done", "places are given back")
      })
    )

    it.effect("maxQueued defaults to 0; an interrupted waiter or runner gives its place back", () =>
      Effect.gen(function* () {
        const run = yield* runWith({ bulkhead: { maxConcurrent: 1 } })
        const slow = Effect.as(Effect.sleep("1 second"), "done")
        const holder = yield* Effect.forkChild(run(slow))
        yield* Effect.yieldNow
        assert.strictEqual(failure(yield* Effect.exit(run(slow)))._tag, "TransientFailure")
        yield* Fiber.interrupt(holder)
        const next = yield* Effect.forkChild(run(slow))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(next), "done")
      })
    )

    it.effect("bulkhead rejections are not counted by the circuit breaker around it", () =>
      Effect.gen(function* () {
        const run = yield* runWith({
          circuitBreaker: { ...breaker, window: 2, minimumCalls: 2 },
          bulkhead: { maxConcurrent: 1 }
        })
        const slow = Effect.as(Effect.sleep("1 second"), "done")
        const holder = yield* Effect.forkChild(run(slow))
        yield* Effect.yieldNow
        for (let i = 0; i < 5; i++) assert.include(failure(yield* Effect.exit(run(slow))).message, "bulkhead is full")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(holder), "done")
        assert.strictEqual(yield* run(Effect.succeed("still closed")), "still closed")
      })
    )

    it.effect("is per agent and action: a full one rejects through executeAction", () =>
      Effect.gen(function* () {
        const slow = Action.local({
          description: "Slow",
          parameters: { n: Schema.Number },
          run: ({ n }) => Effect.as(Effect.sleep("1 second"), n)
        }).pipe(Action.resilience({ bulkhead: { maxConcurrent: 1 } }))
        const role = Role.make({ identity: identity("r"), actions: { slow } })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        const other = yield* Agent.make({ id: "b", roles: [role] })
        const first = yield* Effect.forkChild(agent.executeAction("slow", { n: 1 }))
        const elsewhere = yield* Effect.forkChild(other.executeAction("slow", { n: 3 }))
        yield* Effect.yieldNow
        const rejected = yield* agent.execute({ action: "slow", params: { n: 2 } })
        assert.deepStrictEqual([rejected.success, rejected.error?.category], [false, "TRANSIENT"])
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual([yield* Fiber.join(first), yield* Fiber.join(elsewhere)], [1, 3])
      })
    )
  })

  it.effect("a policy out of range is a RoleDefinitionError naming role and action when the agent is made", () =>
    Effect.gen(function* () {
      const bad: ReadonlyArray<Resilience.Policy> = [
        { bulkhead: { maxConcurrent: 0 } },
        { bulkhead: { maxConcurrent: 1.5 } },
        { bulkhead: { maxConcurrent: 1, maxQueued: -1 } },
        { circuitBreaker: { failureRateThreshold: 0 } },
        { circuitBreaker: { failureRateThreshold: 1.5 } },
        { circuitBreaker: { window: 5, minimumCalls: 6 } },
        { circuitBreaker: { window: 0 } }
      ]
      for (const policy of bad) {
        const action = Action.local({ description: "x", parameters: {}, run: () => 1 }).pipe(Action.resilience(policy))
        const role = Role.make({ identity: identity("r"), actions: { guarded: action } })
        const error = yield* Effect.flip(Agent.make({ id: "a", roles: [role] }))
        assert.deepStrictEqual([error._tag, error.role, error.key], ["RoleDefinitionError", "r", "guarded"])
        assert.include(error.message, "guarded")
      }
    })
  )
})
