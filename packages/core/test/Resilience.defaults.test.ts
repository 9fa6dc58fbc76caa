/**
 * The documented defaults of the resilience policies, each pinned so that a
 * changed default fails a test: the circuit breaker's `minimumCalls` (10),
 * `window` (20), `failureRateThreshold` (0.5) and `resetAfter` (30 seconds),
 * and retry's `maxDelay` (30 seconds). The breaker's window counts attempts
 * (each retry is one more), not calls.
 */
import { assert, describe, it } from "@effect/vitest"
import { ActionError } from "@rolecraft/core"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as RunStep from "../src/internal/resilience/runStep.ts"
import { circuitBreaker } from "../src/internal/resilience/breaker.ts"
import { noGuards } from "../src/internal/resilience/guard.ts"

const failure = new ActionError.ExecutionFailure({ action: "book", message: "refused" })

/** A breaker with every default, and a counter of the attempts it let through. */
const defaultBreaker = Effect.gen(function* () {
  const guard = yield* circuitBreaker("book", {})
  let ran = 0
  const attempt = (fails: boolean) =>
    Effect.exit(
      guard(
        Effect.suspend(() => {
          ran++
          return fails ? Effect.fail(failure) : Effect.succeed("ok")
        })
      )
    )
  const times = (n: number, fails: boolean) =>
    Effect.forEach(Array.from({ length: n }), () => attempt(fails), { discard: true })
  return { attempt, times, ran: () => ran }
})

const isOpenRejection = (exit: Exit.Exit<unknown, ActionError.ActionError>) =>
  Exit.isFailure(exit) && String(exit.cause).includes("circuit")

describe("circuit breaker defaults", () => {
  it.effect("minimumCalls is 10: nine failures leave it closed, the tenth opens it", () =>
    Effect.gen(function* () {
      const breaker = yield* defaultBreaker
      yield* breaker.times(9, true)
      yield* breaker.attempt(true)
      assert.strictEqual(breaker.ran(), 10)
      assert.isTrue(isOpenRejection(yield* breaker.attempt(true)))
      assert.strictEqual(breaker.ran(), 10)
    })
  )

  it.effect("failureRateThreshold is 0.5: 4 failures in 10 keep it closed, 5 in 10 open it", () =>
    Effect.gen(function* () {
      const below = yield* defaultBreaker
      yield* below.times(6, false)
      yield* below.times(4, true)
      assert.isFalse(isOpenRejection(yield* below.attempt(false)))
      const at = yield* defaultBreaker
      yield* at.times(5, false)
      yield* at.times(5, true)
      assert.isTrue(isOpenRejection(yield* at.attempt(false)))
    })
  )

  it.effect("window is 20: after 20 successes, 9 failures keep it closed and the 10th opens it", () =>
    Effect.gen(function* () {
      const breaker = yield* defaultBreaker
      yield* breaker.times(20, false)
      yield* breaker.times(9, true)
      assert.isFalse(isOpenRejection(yield* breaker.attempt(true)))
      assert.isTrue(isOpenRejection(yield* breaker.attempt(false)))
    })
  )

  it.effect("resetAfter is 30 seconds: still open a millisecond before, one probe let through at 30 s", () =>
    Effect.gen(function* () {
      const breaker = yield* defaultBreaker
      yield* breaker.times(10, true)
      yield* TestClock.adjust("29999 millis")
      assert.isTrue(isOpenRejection(yield* breaker.attempt(false)))
      assert.strictEqual(breaker.ran(), 10)
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* breaker.attempt(false), Exit.succeed("ok"))
      assert.strictEqual(breaker.ran(), 11)
    })
  )

  it.effect("the window counts attempts: one call retried 9 times records 10 failures and opens the circuit", () =>
    Effect.gen(function* () {
      const guard = yield* circuitBreaker("book", {})
      let ran = 0
      const flaky = Effect.suspend(() => {
        ran++
        return Effect.fail(new ActionError.TransientFailure({ action: "book", message: "503" }))
      })
      const call = RunStep.run({
        action: "book",
        policy: { retry: { maxAttempts: 9, initialDelay: "1 millis", jitter: false } },
        attemptTimeout: undefined,
        guards: { circuitBreaker: guard, bulkhead: noGuards.bulkhead },
        attempt: flaky
      })
      const fiber = yield* Effect.forkChild(Effect.exit(call))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.strictEqual(ran, 10)
      assert.isTrue(isOpenRejection(yield* Effect.exit(guard(flaky))))
      assert.strictEqual(ran, 10)
    })
  )
})

describe("retry defaults", () => {
  it.effect("maxDelay is 30 seconds: delays of 20 s then 40 s (capped to 30 s) put the third attempt at 50 s", () =>
    Effect.gen(function* () {
      let ran = 0
      const call = RunStep.run({
        action: "book",
        policy: { retry: { maxAttempts: 2, initialDelay: "20 seconds", jitter: false } },
        attemptTimeout: undefined,
        guards: noGuards,
        attempt: Effect.suspend(() => {
          ran++
          return Effect.fail(new ActionError.TransientFailure({ action: "book", message: "503" }))
        })
      })
      const fiber = yield* Effect.forkChild(Effect.exit(call))
      yield* TestClock.adjust("20 seconds")
      assert.strictEqual(ran, 2)
      yield* TestClock.adjust("29999 millis")
      assert.strictEqual(ran, 2)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(ran, 3)
      assert.isTrue(Exit.isFailure(yield* Fiber.join(fiber)))
    })
  )
})
