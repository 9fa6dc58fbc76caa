/**
 * A timeout with the semantics of `Effect.timeoutOrElse` at a third of its
 * cost per call, for the attempt timeout every webService and llm call
 * carries (issue 8: `Effect.timeoutOrElse` races two forked fibers, the
 * effect and a sleep, ~10 µs a call here).
 *
 * On Effect's own clock the effect runs in one forked fiber and the timer is
 * a plain `setTimeout`, set only when the effect did not finish at once. On
 * any other clock (the TestClock) it is `Effect.timeoutOrElse` itself, so
 * tests drive it with `TestClock.adjust` as before.
 *
 * Semantics, as `Effect.timeoutOrElse`: the effect's own exit when it ends
 * first; when the time passes first, the effect is interrupted, its
 * interruption awaited, then `orElse` runs; interrupting the caller
 * interrupts the effect and awaits it.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

// The clock a fiber reads when no layer provides one: Effect caches a Reference's default value.
const defaultClock: Clock.Clock = Context.get(Context.empty(), Clock.Clock)

// setTimeout's largest delay; a larger one fires at once.
const maxTimerMillis = 2 ** 31 - 1

/**
 * `self`, cut off after `duration` by `orElse` (see the module doc).
 */
export const timeoutOrElse = <A, E, R, A2, E2, R2>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  orElse: () => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E | E2, R | R2> => {
  const millis = Duration.toMillis(duration)
  if (!(millis > 0 && millis <= maxTimerMillis)) return Effect.timeoutOrElse(self, { duration, orElse })
  return Effect.withFiber((parent) => {
    if (parent.getRef(Clock.Clock) !== defaultClock) return Effect.timeoutOrElse(self, { duration, orElse })
    const context = parent.context as Context.Context<R>
    return Effect.callback<A | A2, E | E2, R | R2>((resume) => {
      // Started here, in the registration, so no interruption can fall between the fork and the wait.
      const fiber = Effect.runForkWith(context)(self)
      const done = fiber.pollUnsafe()
      if (done !== undefined) {
        resume(done)
        return
      }
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        fiber.interruptUnsafe()
      }, millis)
      fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(timedOut ? orElse() : exit)
      })
      return Effect.suspend(() => {
        clearTimeout(timer)
        return Effect.asVoid(Fiber.interrupt(fiber))
      })
    })
  })
}
