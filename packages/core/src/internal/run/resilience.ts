/**
 * TODO
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as RandomModule from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import {
  type ActionError,
  type Category,
  ExecutionFailure,
  isActionError,
  RoleDefinitionError,
  Timeout,
  TransientFailure
} from "../../ActionError.ts"
import * as Lazy from "../lazy.ts"
import * as TimeLimit from "./timeLimit.ts"
import type { BulkheadPolicy, CircuitBreakerPolicy, Policy, RetryPolicy } from "../../Resilience.ts"
import * as Predicate from "effect/Predicate"

// Effect's Random is loaded by the first jittered retry delay.
const Random = Lazy.make((): Promise<typeof RandomModule> => import("effect/Random"))

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
  if (error._tag === "Timeout" && !error.retryable) return false
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
      ? Random.use((Random) => Effect.map(Random.next, (r) => Math.min(cap, Math.round(base * (0.8 + 0.4 * r)))))
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
          .set(policy, schedule(policy.retry, deadline === undefined ? undefined : Duration.toMillis(deadline)))
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
      step = deadline === undefined ? retryAfterFirstFailure(step, retry) : Effect.retry(step, retry)
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
 * so the attempt may be made when the step is: see `fromReturnedNow`.
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

/**
 * `Effect.retry(attempt, schedule)` that sets the schedule up only once the
 * first attempt has failed: a call that succeeds at once (the common case)
 * pays nothing for its retry policy, where `Effect.retry` builds the
 * schedule's state and provides its metadata to every attempt. Measured
 * reason (Node 24, Effect 4.1, this module's schedule for `maxAttempts: 3`
 * around a synchronous success, 100 000 calls, median of 11 runs, on 2
 * shared and loaded cores): `Effect.retry` 1.3–3.4 µs a call, this one
 * 0.27–0.61 µs. The schedule sees the same failures and attempt numbers and
 * waits the same delays, on any clock (it is `Effect.retry` from the first
 * failure on; a test compares its tries with `Effect.retry`'s on the
 * TestClock); only its `elapsed` starts at the first failure instead of
 * the first attempt, which is why a policy with a deadline (whose schedule
 * reads `elapsed`) keeps `Effect.retry`.
 */
const retryAfterFirstFailure = <A, R>(
  attempt: Effect.Effect<A, ActionError, R>,
  retry: Schedule.Schedule<unknown, ActionError>
): Effect.Effect<A, ActionError, R> =>
  Effect.catch(attempt, (first) => {
    // The schedule's first input is the failure already seen; the attempts after it are real ones.
    let replayed = false
    const again = Effect.suspend(() => {
      if (replayed) return attempt
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(again, retry)
  })

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

const guardRejections = new WeakSet<object>()

/**
 * A transient failure raised by a guard (open circuit, full bulkhead), with
 * the wait the guard suggests as `retryAfter` when it knows one. A circuit
 * breaker does not count such a failure against the action.
 *
 * @since 0.1.0
 */
export const rejected = (action: string, message: string, retryAfter?: Duration.Duration): TransientFailure => {
  const error = new TransientFailure({
    action,
    message: `${action}: ${message}`,
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
  guardRejections.add(error)
  return error
}

/**
 * The categories a circuit breaker records as failures: those that say the
 * work reached something that failed (TIMEOUT, TRANSIENT, EXECUTION). Other
 * failures (VALIDATION, a misconfiguration), guard rejections and
 * interruptions are not recorded at all.
 *
 * @since 0.1.0
 */
export const recordedCategories: ReadonlySet<Category> = new Set<Category>(["TIMEOUT", "TRANSIENT", "EXECUTION"])

type Outcome = "success" | "failure" | "ignored"

const outcomeOf = (exit: Exit.Exit<unknown, ActionError>): Outcome => {
  if (Exit.isSuccess(exit)) return "success"
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) && recordedCategories.has(error.value.category) && !guardRejections.has(error.value)
    ? "failure"
    : "ignored"
}

const invalid = (action: string, message: string) =>
  new RoleDefinitionError({ key: action, message: `Action ${action}: ${message}` })

const isCount = (n: number, min: number) => Number.isInteger(n) && n >= min

/**
 * Why a duration option is out of range (`undefined` when it is fine or not
 * given): it must parse, be finite, and be positive (or, for a delay, not
 * negative).
 *
 * @since 0.1.0
 */
export const durationProblem = (
  name: string,
  input: Duration.Input | undefined,
  options: { readonly zero: "allowed" | "refused" }
): string | undefined => {
  if (input === undefined) return undefined
  const parsed = Duration.fromInput(input)
  if (Option.isNone(parsed) || !Duration.isFinite(parsed.value))
    return `${name} must be a finite duration, got ${String(input)}`
  const millis = Duration.toMillis(parsed.value)
  if (millis < 0 || (millis === 0 && options.zero === "refused")) {
    return `${name} must be ${options.zero === "refused" ? "positive" : "zero or positive"}, got ${String(input)}`
  }
  return undefined
}

// The first problem of a policy's numbers and durations, checked when the agent is made.
const problemOf = (policy: Policy): string | undefined => {
  const retry = policy.retry
  if (retry?.maxAttempts !== undefined && !isCount(retry.maxAttempts, 0)) {
    return `retry.maxAttempts must be an integer >= 0, got ${retry.maxAttempts}`
  }
  if (retry?.factor !== undefined && !(Number.isFinite(retry.factor) && retry.factor >= 1)) {
    return `retry.factor must be a number >= 1, got ${retry.factor}`
  }
  return (
    durationProblem("timeout", policy.timeout, { zero: "refused" }) ??
    durationProblem("attemptTimeout", policy.attemptTimeout, { zero: "refused" }) ??
    durationProblem("retry.initialDelay", retry?.initialDelay, { zero: "allowed" }) ??
    durationProblem("retry.maxDelay", retry?.maxDelay, { zero: "allowed" })
  )
}

/**
 * A circuit breaker for one agent and action (see
 * {@link CircuitBreakerPolicy}): a state machine held in memory.
 *
 * - closed: every call runs; outcomes of {@link recordedCategories} and
 *   successes fill a window of the last `window` calls; when at least
 *   `minimumCalls` are recorded and the failure share reaches
 *   `failureRateThreshold`, the circuit opens (at that moment on `Clock`).
 * - open: calls fail at once with TRANSIENT (`retryAfter` the time left).
 * - after `resetAfter`, half-open: one probe call runs (others fail at once);
 *   its success closes the circuit with an empty window, its recorded
 *   failure re-opens it, anything else (interruption, VALIDATION) lets the
 *   next call probe.
 *
 * Fails `RoleDefinitionError` for a policy out of range.
 *
 * @since 0.1.0
 */
export const circuitBreaker = (
  action: string,
  policy: CircuitBreakerPolicy
): Effect.Effect<Guards["circuitBreaker"], RoleDefinitionError> => {
  const threshold = policy.failureRateThreshold ?? 0.5
  const minimumCalls = policy.minimumCalls ?? 10
  const size = policy.window ?? 20
  if (!(threshold > 0 && threshold <= 1)) {
    return Effect.fail(invalid(action, `circuitBreaker.failureRateThreshold must be in (0, 1], got ${threshold}`))
  }
  if (!isCount(size, 1))
    return Effect.fail(invalid(action, `circuitBreaker.window must be an integer >= 1, got ${size}`))
  if (!isCount(minimumCalls, 1) || minimumCalls > size) {
    return Effect.fail(
      invalid(action, `circuitBreaker.minimumCalls must be an integer from 1 to window (${size}), got ${minimumCalls}`)
    )
  }
  const resetAfter = Duration.fromInput(policy.resetAfter ?? Duration.seconds(30))
  if (Option.isNone(resetAfter) || !Duration.isFinite(resetAfter.value)) {
    return Effect.fail(invalid(action, "circuitBreaker.resetAfter must be a finite duration"))
  }
  const resetAfterMs = Duration.toMillis(resetAfter.value)

  // The window is a ring of the last `size` recorded outcomes (1 = failure).
  const outcomes = new Uint8Array(size)
  let recorded = 0
  let failures = 0
  let next = 0
  let state: "closed" | "open" | "halfOpen" = "closed"
  let openedAt = 0
  let probing = false

  const record = (failed: boolean): boolean => {
    if (recorded === size) failures -= outcomes[next]!
    else recorded += 1
    outcomes[next] = failed ? 1 : 0
    failures += outcomes[next]!
    next = (next + 1) % size
    return recorded >= minimumCalls && failures / recorded >= threshold
  }
  const open = Effect.map(Clock.currentTimeMillis, (now) => {
    state = "open"
    openedAt = now
  })
  const close = () => {
    outcomes.fill(0)
    recorded = 0
    failures = 0
    next = 0
    state = "closed"
  }
  const closedCall = <A, R>(attempt: Effect.Effect<A, ActionError, R>) =>
    Effect.onExit(attempt, (exit) =>
      Effect.suspend(() => {
        const outcome = outcomeOf(exit)
        if (outcome === "ignored" || state !== "closed") return Effect.void
        return record(outcome === "failure") ? open : Effect.void
      })
    )
  const probe = <A, R>(attempt: Effect.Effect<A, ActionError, R>) =>
    Effect.onExit(attempt, (exit) =>
      Effect.suspend(() => {
        probing = false
        const outcome = outcomeOf(exit)
        if (outcome === "failure") return open
        if (outcome === "success") close()
        return Effect.void
      })
    )

  return Effect.succeed(<A, R>(attempt: Effect.Effect<A, ActionError, R>) =>
    Effect.suspend(() => {
      if (state === "closed") return closedCall(attempt)
      return Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<A, ActionError, R> => {
        if (state === "closed") return closedCall(attempt)
        if (state === "open") {
          const left = openedAt + resetAfterMs - now
          if (left > 0) return Effect.fail(rejected(action, "the circuit breaker is open", Duration.millis(left)))
          state = "halfOpen"
          probing = false
        }
        if (probing)
          return Effect.fail(rejected(action, "the circuit breaker is half-open and its probe call is running"))
        probing = true
        return probe(attempt)
      })
    })
  )
}

/**
 * A bulkhead for one agent and action (see {@link BulkheadPolicy}): an
 * Effect `Semaphore` of `maxConcurrent` permits, and a count of the calls
 * admitted (running or waiting for a permit). A call that finds
 * `maxConcurrent + maxQueued` admitted fails at once with TRANSIENT; an
 * interrupted waiter leaves the queue.
 *
 * Fails `RoleDefinitionError` for a policy out of range.
 *
 * @since 0.1.0
 */
export const bulkhead = (
  action: string,
  policy: BulkheadPolicy
): Effect.Effect<Guards["bulkhead"], RoleDefinitionError> => {
  const max = policy.maxConcurrent
  const queued = policy.maxQueued ?? 0
  if (!isCount(max, 1))
    return Effect.fail(invalid(action, `bulkhead.maxConcurrent must be an integer >= 1, got ${max}`))
  if (!isCount(queued, 0))
    return Effect.fail(invalid(action, `bulkhead.maxQueued must be an integer >= 0, got ${queued}`))
  return Effect.map(Semaphore.make(max), (semaphore) => {
    const limit = max + queued
    let admitted = 0
    const admit = Effect.suspend(() => {
      if (admitted >= limit) {
        return Effect.fail(rejected(action, `the bulkhead is full (${max} running, ${queued} waiting at most)`))
      }
      admitted += 1
      return Effect.void
    })
    const leave = Effect.sync(() => {
      admitted -= 1
    })
    const run = semaphore.withPermits(1)
    return <A, R>(attempt: Effect.Effect<A, ActionError, R>) =>
      Effect.acquireUseRelease(
        admit,
        () => run(attempt),
        () => leave
      )
  })
}

/**
 * The guards of one agent's action: its circuit breaker and bulkhead when
 * the policy has them, {@link noGuards} otherwise (no per-call cost). The
 * agent makes them once per action, so their state is per agent and action.
 *
 * Fails `RoleDefinitionError` for a policy out of range: a duration that
 * does not parse, is not finite or not positive (`timeout`,
 * `attemptTimeout`; delays may be zero), `maxAttempts` not an integer >= 0,
 * `factor` < 1, or a circuit breaker or bulkhead setting out of range.
 *
 * @since 0.1.0
 */
export const makeGuards = (action: string, policy: Policy | undefined): Effect.Effect<Guards, RoleDefinitionError> => {
  const problem = policy === undefined ? undefined : problemOf(policy)
  if (problem !== undefined) return Effect.fail(invalid(action, problem))
  if (policy?.circuitBreaker === undefined && policy?.bulkhead === undefined) return Effect.succeed(noGuards)
  return Effect.gen(function* () {
    const breaker =
      policy.circuitBreaker === undefined ? undefined : yield* circuitBreaker(action, policy.circuitBreaker)
    const limit = policy.bulkhead === undefined ? undefined : yield* bulkhead(action, policy.bulkhead)
    return { circuitBreaker: breaker ?? noGuards.circuitBreaker, bulkhead: limit ?? noGuards.bulkhead }
  })
}
