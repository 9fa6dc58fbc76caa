import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as TimeLimit from "../../../src/internal/resilience/timeLimit.ts"

const timedOut = () => Effect.succeed("timed out" as const)

class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}

describe("timeLimit.timeoutOrElse on Effect's own clock", () => {
  it.live("an effect that ends first gives its own exit: a value, a failure, a value computed at once", () =>
    Effect.gen(function* () {
      const limit = Duration.seconds(5)
      assert.strictEqual(yield* TimeLimit.timeoutOrElse(Effect.as(Effect.sleep("5 millis"), 1), limit, timedOut), 1)
      const failed = yield* Effect.exit(
        TimeLimit.timeoutOrElse(Effect.andThen(Effect.sleep("5 millis"), Effect.fail("boom")), limit, timedOut)
      )
      assert.deepStrictEqual(failed, Exit.fail("boom"))
      assert.strictEqual(yield* TimeLimit.timeoutOrElse(Effect.succeed(2), limit, timedOut), 2)
    })
  )

  it.live("when the time passes first, the effect is interrupted and its finalizer has run before orElse", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const result = yield* TimeLimit.timeoutOrElse(
        Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => log.push("interrupted")))),
        Duration.millis(20),
        () => Effect.sync(() => log.push("orElse")).pipe(Effect.as("timed out"))
      )
      assert.strictEqual(result, "timed out")
      assert.deepStrictEqual(log, ["interrupted", "orElse"])
    })
  )

  it.live("interrupting the caller interrupts the effect and waits for it; the timer does not fire later", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const fiber = yield* Effect.forkChild(
        TimeLimit.timeoutOrElse(
          Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => log.push("interrupted")))),
          Duration.millis(30),
          () => Effect.sync(() => log.push("orElse"))
        )
      )
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(log, ["interrupted"])
      yield* Effect.sleep("60 millis")
      assert.deepStrictEqual(log, ["interrupted"])
    })
  )

  it.live("the effect sees the caller's services and span", () =>
    Effect.gen(function* () {
      const seen = yield* TimeLimit.timeoutOrElse(
        Effect.gen(function* () {
          yield* Effect.sleep("1 millis")
          const greeting = yield* Greeting
          const span = yield* Effect.currentSpan
          return `${greeting.text} ${span.name}`
        }),
        Duration.seconds(5),
        timedOut
      ).pipe(Effect.withSpan("caller"), Effect.provideService(Greeting, { text: "hello" }))
      assert.strictEqual(seen, "hello caller")
    })
  )
})

describe("timeLimit.timeoutOrElse on the TestClock", () => {
  it.effect("is driven by TestClock.adjust, as Effect.timeoutOrElse is", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(TimeLimit.timeoutOrElse(Effect.never, Duration.seconds(30), timedOut))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(fiber), "timed out")
    })
  )
})

/**
 * I/O registered on the calling scope, as an HttpClient request made under
 * `HttpClient.withScope` is: it ends with `value` after `ms`, or fails with
 * "aborted" as soon as the scope closes. `log` records an abort.
 */
const io = (ms: number, value: string, log: Array<string>) =>
  Effect.gen(function* () {
    let abort: (() => void) | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => abort?.()))
    return yield* Effect.callback<string, string>((resume) => {
      const timer = setTimeout(() => resume(Effect.succeed(value)), ms)
      abort = () => {
        log.push("aborted")
        clearTimeout(timer)
        resume(Effect.fail("aborted"))
      }
      return Effect.sync(() => clearTimeout(timer))
    })
  })

describe("timeLimit.abortAfter on Effect's own clock", () => {
  it.live("I/O that ends first gives its value, and a success leaves its I/O alone", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      assert.strictEqual(yield* TimeLimit.abortAfter(io(5, "done", log), Duration.seconds(5), timedOut), "done")
      yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(log, [])
    })
  )

  it.live("when the time passes first, the scope is closed, the I/O aborted and its failure replaced by orElse", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const result = yield* TimeLimit.abortAfter(io(10_000, "late", log), Duration.millis(20), () =>
        Effect.sync(() => log.push("orElse")).pipe(Effect.as("timed out"))
      )
      assert.strictEqual(result, "timed out")
      assert.deepStrictEqual(log, ["aborted", "orElse"])
    })
  )

  it.live("a failure of its own before the deadline is kept", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.exit(
        TimeLimit.abortAfter(Effect.andThen(io(5, "done", []), Effect.fail("boom")), Duration.seconds(5), timedOut)
      )
      assert.deepStrictEqual(failed, Exit.fail("boom"))
    })
  )

  it.live("interrupting the caller aborts the I/O; orElse never runs, the timer never fires", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const fiber = yield* Effect.forkChild(
        TimeLimit.abortAfter(io(10_000, "late", log), Duration.millis(30), () => Effect.sync(() => log.push("orElse")))
      )
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(log, ["aborted"])
      yield* Effect.sleep("60 millis")
      assert.deepStrictEqual(log, ["aborted"])
    })
  )
})

describe("timeLimit.abortAfter on the TestClock", () => {
  it.effect("is driven by TestClock.adjust, and the I/O is aborted when the time passes", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const fiber = yield* Effect.forkChild(
        TimeLimit.abortAfter(
          Effect.andThen(
            Effect.addFinalizer(() => Effect.sync(() => log.push("closed"))),
            Effect.never
          ),
          Duration.seconds(30),
          timedOut
        )
      )
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(fiber), "timed out")
      assert.deepStrictEqual(log, ["closed"])
    })
  )
})

// The same scenarios on both clocks: the fast path runs on Effect's own clock, Effect.timeoutOrElse on the TestClock.
describe("timeLimit.timeoutOrElse behaves the same on every clock", () => {
  const clocks = [
    { name: "Effect's own clock", test: it.live, elapse: (_: Duration.Input) => Effect.void },
    { name: "the TestClock", test: it.effect, elapse: (d: Duration.Input) => TestClock.adjust(d) }
  ] as const
  for (const clock of clocks) {
    clock.test(
      `on ${clock.name}: first to end wins; a timed-out effect is interrupted before orElse; a caller's interrupt reaches the effect`,
      () =>
        Effect.gen(function* () {
          const log: Array<string> = []
          const settle = <A, E>(effect: Effect.Effect<A, E>, elapse: Duration.Input) =>
            Effect.gen(function* () {
              const fiber = yield* Effect.forkChild(effect)
              yield* clock.elapse(elapse)
              return yield* Fiber.await(fiber)
            })
          const orElse = () => Effect.sync(() => log.push("orElse")).pipe(Effect.as("timed out" as const))
          // A value and a failure that come before the limit.
          const value = Effect.as(Effect.sleep("5 millis"), 1)
          assert.deepStrictEqual(
            yield* settle(TimeLimit.timeoutOrElse(value, Duration.seconds(5), orElse), "5 millis"),
            Exit.succeed(1)
          )
          const failure = Effect.andThen(Effect.sleep("5 millis"), Effect.fail("boom"))
          assert.deepStrictEqual(
            yield* settle(TimeLimit.timeoutOrElse(failure, Duration.seconds(5), orElse), "5 millis"),
            Exit.fail("boom")
          )
          // The limit comes first.
          const never = Effect.onInterrupt(Effect.never, () => Effect.sync(() => log.push("interrupted")))
          assert.deepStrictEqual(
            yield* settle(TimeLimit.timeoutOrElse(never, Duration.millis(20), orElse), "20 millis"),
            Exit.succeed("timed out")
          )
          assert.deepStrictEqual(log, ["interrupted", "orElse"])
          // The caller is interrupted before either.
          log.length = 0
          const fiber = yield* Effect.forkChild(TimeLimit.timeoutOrElse(never, Duration.seconds(30), orElse))
          yield* Effect.yieldNow
          yield* Fiber.interrupt(fiber)
          yield* clock.elapse("30 seconds")
          assert.deepStrictEqual(log, ["interrupted"])
        })
    )
  }
})
