/**
 * The time limits of one model call: a whole-call deadline (`timeout`), for
 * a generated answer and a streamed one alike, and for a stream an idle
 * limit between batches of chunks (`idleTimeout`). Either ends the call as
 * TIMEOUT (retryable) naming the limit, with the provider's request aborted.
 *
 * A generated answer is cut off by the house's time limit (`run/timeLimit`).
 * A stream is watched by one timer set for the nearer limit and re-armed
 * only when it fires: reading a chunk costs a clock read, never a timer. On
 * Effect's own clock the timer is a plain `setTimeout` (cleared when the
 * stream's scope closes); on any other clock (the TestClock) it is a fiber
 * sleeping on that clock, so tests drive it with `TestClock.adjust`. When a
 * limit passes, the watch aborts the provider's request (the provider ends
 * its stream, as its contract asks) and the reader fails with the TIMEOUT —
 * at once when it is waiting, or at the next chunk it reads.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ActionError, Timeout } from "../../ActionError.ts"
import * as TimeLimit from "../resilience/timeLimit.ts"
import type { Reader } from "./streamReader.ts"

/** The default whole-call deadline of a model call. */
export const defaultTimeout = Duration.minutes(10)

/** The default idle limit between the chunks of a streamed model call. */
export const defaultIdleTimeout = Duration.minutes(2)

/** A call's limits, parsed: `undefined` for no limit. */
export interface CallLimits {
  readonly timeout: Duration.Duration | undefined
  readonly idleTimeout: Duration.Duration | undefined
}

const deadlinePassed = (action: string, after: Duration.Duration) =>
  new Timeout({
    action,
    after,
    message: `${action}: the model call did not finish within ${Duration.format(after)} (timeout)`
  })

const idlePassed = (action: string, after: Duration.Duration) =>
  new Timeout({
    action,
    after,
    message: `${action}: the model stream sent nothing for ${Duration.format(after)} (idleTimeout)`
  })

/** A generated answer within the whole-call deadline. */
export const deadline = <A, R>(
  effect: Effect.Effect<A, ActionError, R>,
  action: string,
  limits: CallLimits
): Effect.Effect<A, ActionError, R> => {
  const after = limits.timeout
  if (after === undefined) return effect
  return TimeLimit.timeoutOrElse(effect, after, () => Effect.fail(deadlinePassed(action, after)))
}

// The clock a fiber reads when no layer provides one: Effect caches a Reference's default value.
const defaultClock: Clock.Clock = Context.get(Context.empty(), Clock.Clock)

// setTimeout's largest delay; a larger one fires at once.
const maxTimerMillis = 2 ** 31 - 1

/**
 * What a streamed call's watch sees when it looks at `now`: the limit that passed, or how long until the
 * nearer one (the deadline from `start`, or the idle limit from the last batch `read` read — from `start`
 * before the first).
 */
const look = (read: Reader, action: string, limits: CallLimits, start: number, now: number): ActionError | number => {
  const { timeout, idleTimeout } = limits
  const deadlineAt = timeout === undefined ? Number.POSITIVE_INFINITY : start + Duration.toMillis(timeout)
  if (timeout !== undefined && now >= deadlineAt) return deadlinePassed(action, timeout)
  const last = read.lastBatchAt < 0 ? start : read.lastBatchAt
  const idleAt = idleTimeout === undefined ? Number.POSITIVE_INFINITY : last + Duration.toMillis(idleTimeout)
  if (idleTimeout !== undefined && now >= idleAt) return idlePassed(action, idleTimeout)
  return Math.min(deadlineAt, idleAt) - now
}

/** The watch on a test clock: a fiber sleeping on that clock until a limit passes. */
const watchOn = (
  clock: Clock.Clock,
  read: Reader,
  action: string,
  limits: CallLimits,
  expire: (error: ActionError) => void
): Effect.Effect<void, never, Scope.Scope> => {
  const start = clock.currentTimeMillisUnsafe()
  const loop: Effect.Effect<void> = Effect.suspend(() => {
    const seen = look(read, action, limits, start, clock.currentTimeMillisUnsafe())
    return typeof seen === "number" ? Effect.andThen(Effect.sleep(seen), loop) : Effect.sync(() => expire(seen))
  })
  return Effect.asVoid(Effect.forkScoped(loop))
}

/**
 * Watches a streamed call for the life of the scope (the stream's): when a limit passes, `read` expires with
 * its TIMEOUT and `abort` aborts the provider's request.
 */
export const watch = (
  read: Reader,
  action: string,
  limits: CallLimits,
  abort: () => void
): Effect.Effect<void, never, Scope.Scope> => {
  if (limits.timeout === undefined && limits.idleTimeout === undefined) return Effect.void
  const expire = (error: ActionError) => {
    read.expire(error)
    abort()
  }
  return Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    if (clock !== defaultClock) return watchOn(clock, read, action, limits, expire)
    const start = clock.currentTimeMillisUnsafe()
    let timer: ReturnType<typeof setTimeout> | undefined
    const arm = (delay: number) => {
      timer = setTimeout(fire, Math.min(delay, maxTimerMillis))
    }
    const fire = () => {
      const seen = look(read, action, limits, start, clock.currentTimeMillisUnsafe())
      if (typeof seen === "number") arm(seen)
      else expire(seen)
    }
    return Effect.acquireRelease(
      Effect.sync(() => fire()),
      () => Effect.sync(() => clearTimeout(timer))
    )
  })
}

/** The clock a reader stamps its batches with, so the idle watch measures on the same clock as it sleeps. */
export const clockNow: Effect.Effect<() => number> = Clock.clockWith((clock) =>
  Effect.succeed(() => clock.currentTimeMillisUnsafe())
)
