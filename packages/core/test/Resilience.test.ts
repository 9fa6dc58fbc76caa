import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import {
  type ActionError,
  ExecutionFailure,
  type Timeout,
  TransientFailure,
  ValidationError
} from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type * as Resilience from "../src/Resilience.ts"
import * as Callback from "../src/internal/callback.ts"
import * as RunStep from "../src/internal/resilience/runStep.ts"
import { noGuards } from "../src/internal/resilience/guard.ts"
import * as Retry from "../src/internal/resilience/retry.ts"
import * as Role from "../src/Role.ts"

/** An attempt that records the (TestClock) time of each try and fails with the errors given, then succeeds. */
const scripted = (errors: ReadonlyArray<ActionError>) =>
  Effect.gen(function* () {
    const times = yield* Ref.make<ReadonlyArray<number>>([])
    const attempt = Effect.gen(function* () {
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const done = yield* Ref.modify(times, (ts) => [ts.length, [...ts, now]] as const)
      const error = errors[done]
      if (error !== undefined) return yield* Effect.fail(error)
      return "ok"
    })
    return { times, attempt }
  })

const transient = (fields: Partial<ConstructorParameters<typeof TransientFailure>[0]> = {}) =>
  new TransientFailure({ action: "a", message: "busy", ...fields })

const run = (policy: Resilience.Policy, attempt: Effect.Effect<string, ActionError>) =>
  RunStep.run({ action: "a", policy, attemptTimeout: undefined, guards: noGuards, attempt })

describe("Resilience", () => {
  it.effect("an attempt its executor bounds itself is raced by no timer; otherwise the attempt timeout cuts it", () =>
    Effect.gen(function* () {
      const slow = Effect.as(Effect.sleep("2 seconds"), "ok")
      const step = (executorTimesAttempt: boolean) =>
        RunStep.prepare({
          action: "a",
          policy: undefined,
          attemptTimeout: "1 second",
          guards: noGuards,
          executorTimesAttempt
        })(slow)
      const own = yield* Effect.forkChild(step(true))
      const raced = yield* Effect.forkChild(Effect.flip(step(false)))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(own), "ok")
      assert.strictEqual((yield* Fiber.join(raced))._tag, "Timeout")
    })
  )

  it.effect("retries with exponential backoff (1 s, ×2) and gives up after maxAttempts retries", () =>
    Effect.gen(function* () {
      const errors = Array.from({ length: 10 }, () => transient())
      const { times, attempt } = yield* scripted(errors)
      const fiber = yield* Effect.forkChild(run({ retry: { maxAttempts: 3, jitter: false } }, attempt))
      yield* TestClock.adjust("1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error, errors[3])
      assert.deepStrictEqual(yield* Ref.get(times), [0, 1000, 3000, 7000])
    })
  )

  // Without a deadline the schedule is set up only after the first failure (a fast path): the same tries as Effect.retry.
  it.effect("the first-failure retry tries at the same times as Effect.retry with the same schedule (TestClock)", () =>
    Effect.gen(function* () {
      const errors = [transient(), transient({ retryAfter: Duration.seconds(5) }), transient()]
      const policy = { maxAttempts: 3, jitter: false }
      const viaRun = yield* scripted(errors)
      const viaRetry = yield* scripted(errors)
      const fibers = [
        yield* Effect.forkChild(run({ retry: policy }, viaRun.attempt)),
        yield* Effect.forkChild(Effect.retry(viaRetry.attempt, Retry.schedule(policy, undefined)))
      ]
      yield* TestClock.adjust("1 minute")
      for (const fiber of fibers) assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(yield* Ref.get(viaRun.times), [0, 1000, 6000, 10000])
      assert.deepStrictEqual(yield* Ref.get(viaRun.times), yield* Ref.get(viaRetry.times))
    })
  )

  it.live("the first-failure retry on Effect's own clock: the same tries and outcome as on the TestClock", () =>
    Effect.gen(function* () {
      const errors = [transient(), transient({ retryAfter: Duration.millis(5) }), transient()]
      const { times, attempt } = yield* scripted(errors)
      assert.strictEqual(
        yield* run({ retry: { maxAttempts: 3, jitter: false, initialDelay: "1 millis" } }, attempt),
        "ok"
      )
      assert.strictEqual((yield* Ref.get(times)).length, 4)
      const exhausted = yield* scripted(Array.from({ length: 5 }, () => transient()))
      const error = yield* Effect.flip(
        run({ retry: { maxAttempts: 2, jitter: false, initialDelay: "1 millis" } }, exhausted.attempt)
      )
      assert.strictEqual(error.category, "TRANSIENT")
      assert.strictEqual((yield* Ref.get(exhausted.times)).length, 3)
    })
  )

  it.effect("caps each delay at maxDelay", () =>
    Effect.gen(function* () {
      const { times, attempt } = yield* scripted(Array.from({ length: 4 }, () => transient()))
      const fiber = yield* Effect.forkChild(
        run({ retry: { maxAttempts: 4, jitter: false, initialDelay: "1 second", maxDelay: "1500 millis" } }, attempt)
      )
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(yield* Ref.get(times), [0, 1000, 2500, 4000, 5500])
    })
  )

  it.effect("jitter keeps each delay within 0.8–1.2 of the backoff and under the cap", () =>
    Effect.gen(function* () {
      const { times, attempt } = yield* scripted(Array.from({ length: 5 }, () => transient()))
      const fiber = yield* Effect.forkChild(run({ retry: { maxAttempts: 5, maxDelay: "3 seconds" } }, attempt))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      const ts = yield* Ref.get(times)
      const delays = ts.slice(1).map((t, i) => t - ts[i]!)
      const bases = [1000, 2000, 3000, 3000, 3000]
      delays.forEach((delay, i) => {
        // Delays are differences of fractional clock times: allow float rounding.
        assert.isAtLeast(delay, bases[i]! * 0.8 - 1e-6)
        assert.isAtMost(delay, Math.min(3000, bases[i]! * 1.2) + 1e-6)
      })
    })
  )

  it.effect("honours retryAfter in place of the backoff; 0 retries at once", () =>
    Effect.gen(function* () {
      const { times, attempt } = yield* scripted([
        transient({ retryAfter: Duration.seconds(5) }),
        transient({ retryAfter: Duration.zero })
      ])
      const fiber = yield* Effect.forkChild(run({ retry: { maxAttempts: 3, jitter: false } }, attempt))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(yield* Ref.get(times), [0, 5000, 5000])
    })
  )

  it.effect("a retryAfter past the cap or past the deadline fails now instead of sleeping", () =>
    Effect.gen(function* () {
      const tooLong = transient({ retryAfter: Duration.seconds(600), status: 429 })
      const capped = yield* scripted([tooLong])
      const error = yield* Effect.flip(run({ retry: { maxAttempts: 3 } }, capped.attempt))
      assert.strictEqual(error, tooLong)
      assert.deepStrictEqual(yield* Ref.get(capped.times), [0])

      const pastDeadline = transient({ retryAfter: Duration.seconds(20) })
      const bounded = yield* scripted([pastDeadline])
      const fiber = yield* Effect.forkChild(run({ retry: { maxAttempts: 3 }, timeout: "10 seconds" }, bounded.attempt))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Effect.flip(Fiber.join(fiber)), pastDeadline)
      assert.deepStrictEqual(yield* Ref.get(bounded.times), [0])
    })
  )

  it.effect("only retryable errors are retried unless retryOn says so; noRetryOn wins", () =>
    Effect.gen(function* () {
      const permanent = new ExecutionFailure({ action: "a", message: "no" })
      const cases: ReadonlyArray<[Resilience.RetryPolicy, ActionError, number]> = [
        [{ maxAttempts: 2, jitter: false }, permanent, 1],
        [{ maxAttempts: 2, jitter: false, retryOn: ["EXECUTION"] }, permanent, 3],
        [{ maxAttempts: 2, jitter: false, retryOn: ["EXECUTION"], noRetryOn: ["EXECUTION"] }, permanent, 1],
        [{ maxAttempts: 2, jitter: false, noRetryOn: ["TRANSIENT"] }, transient(), 1],
        [
          { maxAttempts: 2, jitter: false, retryOn: ["TRANSIENT"] },
          transient({ outcomeUnknown: true, retryable: false }),
          1
        ],
        [{ maxAttempts: 2, jitter: false }, transient({ outcomeUnknown: true, retryable: true }), 3]
      ]
      for (const [retry, error, expected] of cases) {
        const { times, attempt } = yield* scripted([error, error, error])
        const fiber = yield* Effect.forkChild(run({ retry }, attempt))
        yield* TestClock.adjust("1 minute")
        yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual((yield* Ref.get(times)).length, expected, JSON.stringify(retry))
      }
    })
  )

  it.effect("an attempt timeout is a retryable TIMEOUT; the deadline bounds the whole step", () =>
    Effect.gen(function* () {
      const tries = yield* Ref.make(0)
      const slow = Effect.andThen(
        Ref.update(tries, (n) => n + 1),
        Effect.sleep("10 seconds").pipe(Effect.as("late"))
      )
      const fiber = yield* Effect.forkChild(
        run({ attemptTimeout: "2 seconds", retry: { maxAttempts: 1, jitter: false } }, slow)
      )
      yield* TestClock.adjust("1 minute")
      const error = (yield* Effect.flip(Fiber.join(fiber))) as Timeout
      assert.strictEqual(error._tag, "Timeout")
      assert.strictEqual(Duration.toMillis(error.after), 2000)
      assert.strictEqual(yield* Ref.get(tries), 2)

      const deadline = yield* Effect.forkChild(
        run({ attemptTimeout: "2 seconds", timeout: "5 seconds", retry: { maxAttempts: 10, jitter: false } }, slow)
      )
      yield* TestClock.adjust("5 seconds")
      const late = (yield* Effect.flip(Fiber.join(deadline))) as Timeout
      assert.strictEqual(Duration.toMillis(late.after), 5000)
      assert.isFalse(late.retryable)
    })
  )

  it.effect("an attempt timeout of a call that may have reached the server is never retried, even under retryOn", () =>
    Effect.gen(function* () {
      const tries = yield* Ref.make(0)
      const slow = Effect.andThen(
        Ref.update(tries, (n) => n + 1),
        Effect.sleep("10 seconds").pipe(Effect.as("late"))
      )
      for (const retry of [{ maxAttempts: 2 }, { maxAttempts: 2, retryOn: ["TIMEOUT"] as const }]) {
        yield* Ref.set(tries, 0)
        const fiber = yield* Effect.forkChild(
          RunStep.run({
            action: "a",
            policy: { attemptTimeout: "2 seconds", retry: { ...retry, jitter: false } },
            attemptTimeout: undefined,
            guards: noGuards,
            timeoutRetryable: false,
            attempt: slow
          })
        )
        yield* TestClock.adjust("1 minute")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual(error._tag, "Timeout")
        assert.isFalse(error.retryable)
        assert.strictEqual(yield* Ref.get(tries), 1, JSON.stringify(retry))
      }
    })
  )

  it.live("interrupting a running body aborts its signal", () =>
    Effect.gen(function* () {
      let aborted = false
      const body = Callback.fromReturned("a", "run", (signal) => {
        signal.addEventListener("abort", () => {
          aborted = true
        })
        return new Promise(() => {})
      })
      const fiber = yield* Effect.forkChild(body)
      yield* Effect.sleep("10 millis")
      yield* Fiber.interrupt(fiber)
      assert.isTrue(aborted)
    })
  )
})

describe("a local action's run step made at once (nothing repeats, delays or bounds it)", () => {
  const identity = { name: "r", goal: "g", domain: "d" }

  it.live(
    "an action reading context.signal gets a signal that interruption aborts; a plain value and a throw still arrive",
    () =>
      Effect.gen(function* () {
        let aborted = false
        const actions = {
          wait: Action.local({
            description: "waits",
            parameters: {},
            run: (_args, context) => {
              context.signal.addEventListener("abort", () => {
                aborted = true
              })
              return new Promise(() => {})
            }
          }),
          plain: Action.local({ description: "plain", parameters: {}, run: () => 7 }),
          throws: Action.local({
            description: "throws",
            parameters: {},
            run: (): number => {
              throw new Error("boom")
            }
          })
        }
        const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity, actions })] })
        const fiber = yield* Effect.forkChild(agent.executeAction("wait", {}))
        yield* Effect.sleep("10 millis")
        yield* Fiber.interrupt(fiber)
        assert.isTrue(aborted)
        assert.strictEqual(yield* agent.executeAction("plain", {}), 7)
        const error = yield* Effect.flip(agent.executeAction("throws", {}))
        assert.instanceOf(error, ExecutionFailure)
        assert.include(error.message, "boom")
      })
  )

  it.effect("with a retry policy the function is called again for each attempt", () =>
    Effect.gen(function* () {
      let calls = 0
      const flaky = Action.local({
        description: "flaky",
        parameters: {},
        run: () => {
          calls += 1
          if (calls < 3) throw new TransientFailure({ action: "flaky", message: "busy" })
          return "ok"
        }
      }).pipe(Action.resilience({ retry: { maxAttempts: 3, jitter: false, initialDelay: "1 millis" } }))
      const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity, actions: { flaky } })] })
      const fiber = yield* Effect.forkChild(agent.executeAction("flaky", {}))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.strictEqual(calls, 3)
    })
  )
})

describe("fallback", () => {
  const identity = { name: "r", goal: "g", domain: "d" }
  const failing = (message: string) =>
    Action.local({
      description: "fails",
      parameters: { city: Schema.String },
      run: () => Effect.fail(new TransientFailure({ action: "x", message }))
    })

  it.effect("runs for failures of the run step and returns its value", () =>
    Effect.gen(function* () {
      const forecast = failing("down").pipe(
        Action.fallback(({ city }: { readonly city: string }, error) => `${city}: n/a (${error.category})`)
      )
      const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity, actions: { forecast } })] })
      assert.strictEqual(yield* agent.executeAction("forecast", { city: "Oslo" }), "Oslo: n/a (TRANSIENT)")
    })
  )

  it.effect("does not run for failures of other steps", () =>
    Effect.gen(function* () {
      let ran = false
      const forecast = failing("down").pipe(
        Action.fallback(() => {
          ran = true
          return "fallback"
        })
      )
      const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity, actions: { forecast } })] })
      // @ts-expect-error a number for a string field, on purpose: VALIDATION is what this pins
      const error = yield* Effect.flip(agent.executeAction("forecast", { city: 42 }))
      assert.instanceOf(error, ValidationError)
      assert.isFalse(ran)
    })
  )

  it.effect("a fallback that fails is EXECUTION carrying both causes", () =>
    Effect.gen(function* () {
      const forecast = failing("primary down").pipe(Action.fallback(() => Promise.reject(new Error("fallback down"))))
      const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity, actions: { forecast } })] })
      const error = yield* Effect.flip(agent.executeAction("forecast", { city: "Oslo" }))
      assert.instanceOf(error, ExecutionFailure)
      assert.include(error.message, "fallback down")
      assert.include(error.message, "primary down")
      const cause = error.cause as AggregateError
      assert.instanceOf(cause, AggregateError)
      assert.deepStrictEqual(
        cause.errors.map((e: ActionError) => e._tag),
        ["TransientFailure", "ExecutionFailure"]
      )
    })
  )
})
