/**
 * Resilience of the run step (SPEC §9 step 7, the seeds' `@Resilience` and
 * `@Fallback`): the executor runs nested as
 * fallback( deadline( retry( circuit breaker( bulkhead( attempt timeout(
 * executor + mapResult )))))), on Effect's `Schedule` and `Clock`.
 *
 * @since 0.1.0
 */
import { Cause, Duration, Effect, Random, Schedule } from "effect"
import {
  type ActionError,
  type Category,
  ExecutionFailure,
  isActionError,
  Timeout,
  TransientFailure
} from "./ActionError.ts"

/**
 * Retry policy.
 *
 * - `maxAttempts`: retries after the first attempt (default 0: no retry).
 * - `initialDelay`: first backoff delay (default 1 second); each next delay
 *   is multiplied by `factor` (default 2) and capped at `maxDelay` (default
 *   30 seconds).
 * - `jitter`: scale each delay by a random factor in [0.8, 1.2) (default
 *   `true`); the cap still holds.
 * - `retryOn`: categories retried even when the error says it is not
 *   retryable (e.g. `["EXECUTION"]`). By default only retryable errors
 *   (TIMEOUT, TRANSIENT) are retried.
 * - `noRetryOn`: categories never retried; wins over `retryOn`.
 * - A failure whose outcome is unknown (`outcomeUnknown`, created not
 *   retryable) is never retried, whatever `retryOn` says: the request may have
 *   reached the server.
 * - A server's `retryAfter` replaces the backoff delay for that retry; when it
 *   asks for more than `maxDelay`, or more than what is left of the deadline,
 *   the call fails now with that error instead of sleeping past it.
 *
 * @since 0.1.0
 */
export interface RetryPolicy {
  readonly maxAttempts?: number | undefined
  readonly initialDelay?: Duration.Input | undefined
  readonly factor?: number | undefined
  readonly maxDelay?: Duration.Input | undefined
  readonly jitter?: boolean | undefined
  readonly retryOn?: ReadonlyArray<Category> | undefined
  readonly noRetryOn?: ReadonlyArray<Category> | undefined
}

/**
 * Circuit breaker policy, per agent and action: opens when the failure rate
 * over the last `window` calls (default 20) reaches `failureRateThreshold`
 * (default 0.5) with at least `minimumCalls` (default 10) recorded; while
 * open, calls fail at once with TRANSIENT; after `resetAfter` (default 30
 * seconds) one probe call is let through (half-open), and its outcome closes
 * or re-opens the circuit.
 *
 * @since 0.1.0
 */
export interface CircuitBreakerPolicy {
  readonly failureRateThreshold?: number | undefined
  readonly minimumCalls?: number | undefined
  readonly window?: number | undefined
  readonly resetAfter?: Duration.Input | undefined
}

/**
 * Bulkhead policy, per agent and action: at most `maxConcurrent` calls run at
 * once; up to `maxQueued` (default 0) wait for a place; others fail at once
 * with TRANSIENT.
 *
 * @since 0.1.0
 */
export interface BulkheadPolicy {
  readonly maxConcurrent: number
  readonly maxQueued?: number | undefined
}

/**
 * What `Action.resilience` attaches to an action.
 *
 * - `retry`: see {@link RetryPolicy}.
 * - `timeout`: the deadline for the whole run step, retries and backoff
 *   included (TIMEOUT when it passes; not retried).
 * - `attemptTimeout`: bounds each attempt (TIMEOUT, retryable); default the
 *   action's own `timeout` (webService: 30 seconds), none for local actions.
 * - `circuitBreaker`, `bulkhead`: see their policies.
 *
 * @since 0.1.0
 */
export interface Policy {
  readonly retry?: RetryPolicy | undefined
  readonly timeout?: Duration.Input | undefined
  readonly attemptTimeout?: Duration.Input | undefined
  readonly circuitBreaker?: CircuitBreakerPolicy | undefined
  readonly bulkhead?: BulkheadPolicy | undefined
}

/**
 * Per-agent, per-action guards wrapped around each attempt (circuit breaker
 * outside, bulkhead inside). The agent builds them once per action.
 *
 * @since 0.1.0
 */
export interface Guards {
  readonly circuitBreaker: <A, R>(attempt: Effect.Effect<A, ActionError, R>) => Effect.Effect<A, ActionError, R>
  readonly bulkhead: <A, R>(attempt: Effect.Effect<A, ActionError, R>) => Effect.Effect<A, ActionError, R>
}

/**
 * Guards that let every call through.
 *
 * @since 0.1.0
 */
export const noGuards: Guards = { circuitBreaker: (attempt) => attempt, bulkhead: (attempt) => attempt }

const defaults = {
  initialDelay: Duration.seconds(1),
  factor: 2,
  maxDelay: Duration.seconds(30)
}

/**
 * Whether a policy retries this error (see {@link RetryPolicy}).
 *
 * @since 0.1.0
 */
export const isRetried = (policy: RetryPolicy, error: ActionError): boolean => {
  if (policy.noRetryOn?.includes(error.category)) return false
  if (error._tag === "TransientFailure" && error.outcomeUnknown && !error.retryable) return false
  if (policy.retryOn?.includes(error.category)) return true
  return error.retryable
}

const toMillis = (input: Duration.Input | undefined, fallback: Duration.Duration): number =>
  Duration.toMillis(input === undefined ? fallback : Duration.fromInputUnsafe(input))

const retryAfterOf = (error: ActionError): number | undefined =>
  error._tag === "TransientFailure" && error.retryAfter !== undefined ? Duration.toMillis(error.retryAfter) : undefined

/**
 * The retry schedule of a policy: exponential backoff with jitter and a cap,
 * replaced by the server's `retryAfter` when given; it stops when attempts run
 * out, when the error is not retried, or when the next wait would pass the
 * cap or the deadline (`deadlineMs`, measured from the first attempt).
 *
 * @since 0.1.0
 */
export const schedule = (
  policy: RetryPolicy,
  deadlineMs: number | undefined
): Schedule.Schedule<unknown, ActionError> => {
  const maxAttempts = Math.max(0, Math.floor(policy.maxAttempts ?? 0))
  const initial = toMillis(policy.initialDelay, defaults.initialDelay)
  const factor = policy.factor ?? defaults.factor
  const cap = toMillis(policy.maxDelay, defaults.maxDelay)
  const jitter = policy.jitter ?? true
  const delayOf = (attempt: number, error: ActionError): Effect.Effect<number> => {
    const requested = retryAfterOf(error)
    if (requested !== undefined) return Effect.succeed(requested)
    const base = Math.min(cap, Math.round(initial * factor ** (attempt - 1)))
    // Whole milliseconds: fractional delays drift past the cap on the clock.
    return jitter
      ? Effect.map(Random.next, (r) => Math.min(cap, Math.round(base * (0.8 + 0.4 * r))))
      : Effect.succeed(base)
  }
  return Schedule.forever.pipe(
    Schedule.setInputType<ActionError>(),
    Schedule.while(({ input, attempt, elapsed }) => {
      if (attempt > maxAttempts || !isRetried(policy, input)) return Effect.succeed(false)
      const requested = retryAfterOf(input)
      if (requested !== undefined && requested > cap) return Effect.succeed(false)
      if (deadlineMs !== undefined && elapsed + (requested ?? 0) >= deadlineMs) return Effect.succeed(false)
      return Effect.succeed(true)
    }),
    Schedule.modifyDelay(({ input, attempt }) => delayOf(attempt, input))
  )
}

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
 * Runs one call's run step under its policy, nested as SPEC §9 step 7 says.
 *
 * - `attempt`: the executor and its result mapper, as one unit.
 * - `attemptTimeout`: the action's default per-attempt timeout, used when the
 *   policy sets none.
 * - `guards`: the agent's circuit breaker and bulkhead for this action.
 * - `timeoutRetryable`: whether an attempt cut off by its timeout may be
 *   retried (default `true`); `false` for a call whose request may already
 *   have reached a server and that is not idempotent (SPEC §6, C28).
 * - `fallback`: runs when the step still fails (not on interruption). Its own
 *   failure is `ExecutionFailure` whose `cause` is an `AggregateError` of
 *   both failures.
 *
 * Interruption is never turned into a category: an interrupted call stops its
 * attempt, its backoff sleep and its fallback.
 *
 * @since 0.1.0
 */
export const run = <A, R, B = A, R2 = never>(options: {
  readonly action: string
  readonly policy: Policy | undefined
  readonly attemptTimeout: Duration.Input | undefined
  readonly guards: Guards
  readonly timeoutRetryable?: boolean | undefined
  readonly attempt: Effect.Effect<A, ActionError, R>
  readonly fallback?: ((error: ActionError) => Effect.Effect<B, ActionError, R2>) | undefined
}): Effect.Effect<A | B, ActionError, R | R2> => {
  const { action, policy, guards } = options
  const attemptTimeout = policy?.attemptTimeout ?? options.attemptTimeout
  const deadline = policy?.timeout === undefined ? undefined : Duration.fromInputUnsafe(policy.timeout)

  let step: Effect.Effect<A, ActionError, R> = options.attempt
  if (attemptTimeout !== undefined) {
    const after = Duration.fromInputUnsafe(attemptTimeout)
    step = Effect.timeoutOrElse(step, {
      duration: after,
      orElse: () => Effect.fail(timeoutError(action, after, "attempt", options.timeoutRetryable ?? true))
    })
  }
  step = guards.circuitBreaker(guards.bulkhead(step))
  if (policy?.retry !== undefined && (policy.retry.maxAttempts ?? 0) > 0) {
    step = Effect.retry(step, schedule(policy.retry, deadline === undefined ? undefined : Duration.toMillis(deadline)))
  }
  if (deadline !== undefined) {
    step = Effect.timeoutOrElse(step, {
      duration: deadline,
      orElse: () => Effect.fail(timeoutError(action, deadline, "run step", false))
    })
  }
  const fallback = options.fallback
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
    const controller = new AbortController()
    let returned: unknown
    try {
      returned = call(controller.signal)
    } catch (thrown) {
      return Effect.fail(toActionError(action, what, thrown))
    }
    const effect: Effect.Effect<unknown, unknown, R> = Effect.isEffect(returned)
      ? (returned as Effect.Effect<unknown, unknown, R>)
      : isPromiseLike(returned)
        ? Effect.tryPromise({ try: () => returned as PromiseLike<unknown>, catch: (rejected) => rejected })
        : Effect.succeed(returned)
    return effect.pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.fail(toActionError(action, what, Cause.squash(cause)))
      ),
      Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
      Effect.map((value) => value as A)
    )
  })

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

const toActionError = (action: string, what: string, failure: unknown): ActionError =>
  isActionError(failure)
    ? failure
    : new ExecutionFailure({
        action,
        message: `${action}: ${what} failed: ${failure instanceof Error ? failure.message : String(failure)}`,
        cause: failure
      })

/**
 * A transient failure raised by a guard (open circuit, full bulkhead).
 *
 * @since 0.1.0
 */
export const rejected = (action: string, message: string): TransientFailure =>
  new TransientFailure({ action, message: `${action}: ${message}` })
