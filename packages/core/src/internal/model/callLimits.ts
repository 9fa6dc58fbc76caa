/**
 * The time limits of one model call: a whole-call deadline (`timeout`), for
 * a generated answer and a streamed one alike, and for a stream an idle
 * limit between batches of chunks (`idleTimeout`). Either ends the call as
 * TIMEOUT (retryable) naming the limit, and interrupts it, so the provider's
 * request is aborted. A stream is watched by one timer, re-armed only when
 * it fires: reading a chunk costs a clock read, never a timer.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ActionError, Timeout } from "../../ActionError.ts"
import type { Reader, StreamPart } from "./streamReader.ts"

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
  return Effect.timeoutOrElse(effect, { duration: after, orElse: () => Effect.fail(deadlinePassed(action, after)) })
}

/**
 * Fails with the first limit a streamed call passes: the deadline from its start, or the idle limit from the
 * last batch `read` read (from the start before the first). Sleeps until the nearer one, then looks again.
 */
const watch = (read: Reader, action: string, limits: CallLimits): Effect.Effect<never, ActionError> =>
  Effect.clockWith((clock) => {
    const start = clock.currentTimeMillisUnsafe()
    const { timeout, idleTimeout } = limits
    const deadlineAt = timeout === undefined ? Number.POSITIVE_INFINITY : start + Duration.toMillis(timeout)
    const idleMs = idleTimeout === undefined ? Number.POSITIVE_INFINITY : Duration.toMillis(idleTimeout)
    const look: Effect.Effect<never, ActionError> = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      if (timeout !== undefined && now >= deadlineAt) return Effect.fail(deadlinePassed(action, timeout))
      const last = read.lastBatchAt < 0 ? start : read.lastBatchAt
      const idleAt = last + idleMs
      if (idleTimeout !== undefined && now >= idleAt) return Effect.fail(idlePassed(action, idleTimeout))
      return Effect.andThen(Effect.sleep(Math.min(deadlineAt, idleAt) - now), look)
    })
    return look
  })

/** A streamed call's parts within its limits (see the module's header). */
export const bounded = <R>(
  parts: Stream.Stream<StreamPart, ActionError, R>,
  read: Reader,
  action: string,
  limits: CallLimits
): Stream.Stream<StreamPart, ActionError, R> =>
  limits.timeout === undefined && limits.idleTimeout === undefined
    ? parts
    : Stream.interruptWhen(parts, watch(read, action, limits))

/** The clock a reader stamps its batches with, so the idle watch measures on the same clock as it sleeps. */
export const clockNow: Effect.Effect<() => number> = Clock.clockWith((clock) =>
  Effect.succeed(() => clock.currentTimeMillisUnsafe())
)
