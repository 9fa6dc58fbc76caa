/**
 * A user's callback — an action's `run`, a result mapper, a hook, a
 * fallback, a provider's model call — lifted into an Effect: whatever it
 * returned (a value, a Promise or an Effect) becomes an Effect whose failures
 * are `ActionError`s. A throw, a rejection, a failure that is not an
 * `ActionError`, or a defect becomes EXECUTION naming the action and the
 * callback; interruption stays interruption and aborts the callback's signal.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import { type ActionError, ExecutionFailure, isActionError } from "../ActionError.ts"

/**
 * Turns whatever a user's function returned — a value, a Promise or an
 * Effect — into an Effect. A throw, a rejection, a failure that is not an
 * `ActionError`, or a defect becomes `ExecutionFailure` with `what` in its
 * message; an `ActionError` passes through; interruption stays interruption.
 * `signal` is aborted when the effect is interrupted.
 *
 * @since 0.1.0
 */
export const fromReturned = <A, R = never>(
  action: string,
  what: string,
  call: (signal: AbortSignal) => unknown
): Effect.Effect<A, ActionError, R> =>
  Effect.suspend(() => {
    // Only a callback that takes the signal gets a controller (hooks and mappers do not).
    const controller = call.length > 0 ? new AbortController() : undefined
    let returned: unknown
    try {
      returned = call(controller === undefined ? neverAborted : controller.signal)
    } catch (thrown) {
      return Effect.fail(toActionError(action, what, thrown))
    }
    return lift<A, R>(action, what, returned, controller === undefined ? undefined : () => controller.abort())
  })

/**
 * `fromReturned`, with the function called now, when the effect is made, for
 * a call made exactly once where its effect is run at once (the run step of
 * a local action that nothing repeats, delays or bounds): a plain value or a
 * throw comes back as an `Exit`, which the pipeline takes without a trip
 * through the runtime; a Promise or an Effect is run as `fromReturned` runs
 * it, its `signal` aborted when it is interrupted.
 */
export const fromReturnedNow = <A, R = never>(
  action: string,
  what: string,
  call: (signal: AbortSignal) => unknown
): Effect.Effect<A, ActionError, R> => {
  const controller = call.length > 0 ? new AbortController() : undefined
  let returned: unknown
  try {
    returned = call(controller === undefined ? neverAborted : controller.signal)
  } catch (thrown) {
    return Exit.fail(toActionError(action, what, thrown))
  }
  return lift<A, R>(action, what, returned, controller === undefined ? undefined : () => controller.abort())
}

// What a user's function returned, as an effect: a plain value at once; a Promise or Effect with its failures mapped.
const lift = <A, R>(
  action: string,
  what: string,
  returned: unknown,
  abort: (() => void) | undefined
): Effect.Effect<A, ActionError, R> => {
  // A plain value can neither fail nor be interrupted.
  if (!Effect.isEffect(returned) && !Predicate.isPromiseLike(returned)) return Exit.succeed(returned as A)
  const effect: Effect.Effect<unknown, unknown, R> = Effect.isEffect(returned)
    ? (returned as Effect.Effect<unknown, unknown, R>)
    : Effect.tryPromise({ try: () => returned as PromiseLike<unknown>, catch: (rejected) => rejected })
  const mapped = Effect.catchCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.fail(toActionError(action, what, Cause.squash(cause)))
  ) as Effect.Effect<A, ActionError, R>
  return abort === undefined ? mapped : Effect.onInterrupt(mapped, () => Effect.sync(abort))
}

const neverAborted: AbortSignal = new AbortController().signal

const toActionError = (action: string, what: string, failure: unknown): ActionError =>
  isActionError(failure)
    ? failure
    : new ExecutionFailure({
        action,
        message: `${action}: ${what} failed: ${failure instanceof Error ? failure.message : String(failure)}`,
        cause: failure
      })
