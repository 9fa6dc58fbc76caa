/**
 * The time limits of one model call: a whole-call deadline (`timeout`), for
 * a generated answer and a streamed one alike, and for a stream an idle
 * limit between batches of chunks (`idleTimeout`). Either ends the call as
 * TIMEOUT (retryable) naming the limit, with the provider's request aborted.
 *
 * A generated answer is cut off by the house's time limit (`run/timeLimit`).
 * A stream is watched by one fiber that sleeps until the nearer limit and is
 * re-armed only when it wakes: reading a chunk costs a clock read, never a
 * timer. When a limit passes, the watch aborts the provider's request (the
 * provider ends its stream, as its contract asks) and the reader fails with
 * the TIMEOUT — at once when it is waiting, or at the next chunk it reads.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ActionError, Timeout } from "../../ActionError.ts"
import * as TimeLimit from "../run/timeLimit.ts"
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

/**
 * The first limit a streamed call passes, once it passes: the deadline from its start, or the idle limit from
 * the last batch `read` read (from the start before the first). Sleeps until the nearer one, then looks again.
 */
const expiry = (read: Reader, action: string, limits: CallLimits): Effect.Effect<ActionError> =>
  Effect.clockWith((clock) => {
    const start = clock.currentTimeMillisUnsafe()
    const { timeout, idleTimeout } = limits
    const deadlineAt = timeout === undefined ? Number.POSITIVE_INFINITY : start + Duration.toMillis(timeout)
    const idleMs = idleTimeout === undefined ? Number.POSITIVE_INFINITY : Duration.toMillis(idleTimeout)
    const look: Effect.Effect<ActionError> = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      if (timeout !== undefined && now >= deadlineAt) return Effect.succeed(deadlinePassed(action, timeout))
      const last = read.lastBatchAt < 0 ? start : read.lastBatchAt
      const idleAt = last + idleMs
      if (idleTimeout !== undefined && now >= idleAt) return Effect.succeed(idlePassed(action, idleTimeout))
      return Effect.andThen(Effect.sleep(Math.min(deadlineAt, idleAt) - now), look)
    })
    return look
  })

/**
 * Watches a streamed call for the life of the scope (the stream's): when a limit passes, `read` expires with
 * its TIMEOUT and `abort` aborts the provider's request.
 */
export const watch = (
  read: Reader,
  action: string,
  limits: CallLimits,
  abort: () => void
): Effect.Effect<void, never, Scope.Scope> =>
  limits.timeout === undefined && limits.idleTimeout === undefined
    ? Effect.void
    : Effect.asVoid(
        Effect.forkScoped(
          Effect.map(expiry(read, action, limits), (error) => {
            read.expire(error)
            abort()
          })
        )
      )

/** The clock a reader stamps its batches with, so the idle watch measures on the same clock as it sleeps. */
export const clockNow: Effect.Effect<() => number> = Clock.clockWith((clock) =>
  Effect.succeed(() => clock.currentTimeMillisUnsafe())
)
