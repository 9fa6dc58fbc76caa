/**
 * The run step of one action: its attempt (the executor and its result
 * mapper) bounded by the attempt timeout, wrapped in the action's guards,
 * retried by its policy, bounded by the step's deadline, and followed by its
 * fallback when it still fails. Everything fixed per action is prepared once,
 * when the agent is made, so a call only nests its attempt.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import { type ActionError, ExecutionFailure, Timeout } from "../../ActionError.ts"
import type { Policy } from "../../Resilience.ts"
import { type Guards, noGuards } from "./guard.ts"
import * as Retry from "./retry.ts"
import * as TimeLimit from "./timeLimit.ts"

/** An attempt timeout an executor applies itself: after `after`, the attempt fails with `error()`. */
export interface AttemptTimeout {
  readonly after: Duration.Duration
  readonly error: () => ActionError
}

// A policy's retry schedule is a pure description: built once per policy.
const schedules = new WeakMap<Policy, Schedule.Schedule<unknown, ActionError>>()

const timeoutError = (action: string, after: Duration.Duration, what: string, retryable: boolean) =>
  new Timeout({
    action,
    after,
    retryable,
    message:
      `${action}: ${what} timed out after ${Duration.format(after)}` +
      (retryable || what !== "attempt" ? "" : "; the request may have been processed, so it is not retried")
  })

/**
 * The failure of an attempt cut off by its timeout `after`: TIMEOUT,
 * retryable unless the call is not safe to repeat (`retryable` false).
 */
export const attemptTimedOut = (action: string, after: Duration.Duration, retryable: boolean): Timeout =>
  timeoutError(action, after, "attempt", retryable)

/** What is fixed for every call of one action's run step (see {@link prepare}). */
export interface StepOptions {
  readonly action: string
  readonly policy: Policy | undefined
  readonly attemptTimeout: Duration.Input | undefined
  readonly guards: Guards
  readonly timeoutRetryable?: boolean | undefined
  readonly executorTimesAttempt?: boolean | undefined
}

/**
 * One action's run step, prepared once (when the agent is made): its
 * durations parsed, its retry schedule built and its timeout failures
 * decided, so that a call only nests its attempt and fallback as the module
 * `Resilience` describes.
 *
 * - `attemptTimeout`: the action's default per-attempt timeout, used when the
 *   policy sets none.
 * - `guards`: the agent's circuit breaker and bulkhead for this action.
 * - `timeoutRetryable`: whether an attempt cut off by its timeout may be
 *   retried (default `true`); `false` for a call whose request may already
 *   have reached a server and that is not idempotent.
 * - `executorTimesAttempt`: the executor bounds each attempt itself (it was
 *   given the attempt timeout), so no timer races the attempt here.
 *
 * The step takes `attempt` (the executor and its result mapper, as one unit)
 * and `fallback`, which runs when the step still fails (not on
 * interruption); the fallback's own failure is `ExecutionFailure` whose
 * `cause` is an `AggregateError` of both failures. Interruption is never
 * turned into a category: an interrupted call stops its attempt, its backoff
 * sleep and its fallback.
 */
export const prepare = (
  options: StepOptions
): (<A, R, B = A, R2 = never>(
  attempt: Effect.Effect<A, ActionError, R>,
  fallback?: ((error: ActionError) => Effect.Effect<B, ActionError, R2>) | undefined
) => Effect.Effect<A | B, ActionError, R | R2>) => {
  const { action, policy, guards } = options
  const attemptInput =
    options.executorTimesAttempt === true ? undefined : (policy?.attemptTimeout ?? options.attemptTimeout)
  const after = attemptInput === undefined ? undefined : Duration.fromInputUnsafe(attemptInput)
  const attemptFailed =
    after === undefined ? undefined : Effect.fail(attemptTimedOut(action, after, options.timeoutRetryable ?? true))
  const deadline = policy?.timeout === undefined ? undefined : Duration.fromInputUnsafe(policy.timeout)
  const deadlineFailed =
    deadline === undefined ? undefined : Effect.fail(timeoutError(action, deadline, "run step", false))
  const retry =
    policy?.retry !== undefined && (policy.retry.maxAttempts ?? 0) > 0
      ? (schedules.get(policy) ??
        schedules
          .set(policy, Retry.schedule(policy.retry, deadline === undefined ? undefined : Duration.toMillis(deadline)))
          .get(policy))
      : undefined
  return <A, R, B = A, R2 = never>(
    attempt: Effect.Effect<A, ActionError, R>,
    fallback?: ((error: ActionError) => Effect.Effect<B, ActionError, R2>) | undefined
  ): Effect.Effect<A | B, ActionError, R | R2> => {
    let step: Effect.Effect<A, ActionError, R> = attempt
    if (after !== undefined && attemptFailed !== undefined) {
      step = TimeLimit.timeoutOrElse(step, after, () => attemptFailed)
    }
    step = guards.circuitBreaker(guards.bulkhead(step))
    if (retry !== undefined) {
      step = deadline === undefined ? Retry.retryAfterFirstFailure(step, retry) : Effect.retry(step, retry)
    }
    if (deadline !== undefined && deadlineFailed !== undefined) {
      step = TimeLimit.timeoutOrElse(step, deadline, () => deadlineFailed)
    }
    if (fallback === undefined) return step
    return Effect.catch(step, (error) =>
      Effect.mapError(
        fallback(error),
        (fallbackError) =>
          new ExecutionFailure({
            action,
            message: `${action}: fallback failed (${fallbackError.message}) after: ${error.message}`,
            cause: new AggregateError([error, fallbackError], "the run step and its fallback both failed")
          })
      )
    )
  }
}

/**
 * Whether a step prepared with `options` runs its attempt exactly once, at
 * once and unbounded (no retry, no timer, no circuit breaker or bulkhead),
 * so the attempt may be made when the step is: see `Callback.fromReturnedNow`.
 */
export const runsAtOnce = (options: StepOptions): boolean => {
  const { policy } = options
  const attempt = options.executorTimesAttempt === true ? undefined : (policy?.attemptTimeout ?? options.attemptTimeout)
  return (
    attempt === undefined &&
    policy?.timeout === undefined &&
    (policy?.retry?.maxAttempts ?? 0) === 0 &&
    options.guards === noGuards
  )
}

/**
 * Runs one call's run step under its policy: {@link prepare} and the call in
 * one, for a step run once (a chat turn's model call, tests).
 */
export const run = <A, R, B = A, R2 = never>(
  options: StepOptions & {
    readonly attempt: Effect.Effect<A, ActionError, R>
    readonly fallback?: ((error: ActionError) => Effect.Effect<B, ActionError, R2>) | undefined
  }
): Effect.Effect<A | B, ActionError, R | R2> => prepare(options)(options.attempt, options.fallback)
