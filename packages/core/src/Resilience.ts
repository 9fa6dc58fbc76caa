/**
 * Resilience policies of an action (set with `Action.resilience`): retry with
 * backoff, a timeout per attempt and a deadline over all of them, a circuit
 * breaker and a bulkhead, plus the fallback. The agent runs them nested as
 * fallback( deadline( retry( circuit breaker( bulkhead( attempt timeout(
 * executor + mapResult )))))), on Effect's `Schedule` and `Clock`.
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const radar = Action.webService({
 *   description: "Current conditions from the live radar",
 *   parameters: { city: Schema.String },
 *   endpoint: "https://api.example.com/v1/radar/{city}"
 * }).pipe(
 *   Action.resilience({
 *     retry: { maxAttempts: 3, initialDelay: "200 millis" },
 *     timeout: "10 seconds",
 *     circuitBreaker: { failureRateThreshold: 0.5, resetAfter: "30 seconds" },
 *     bulkhead: { maxConcurrent: 4 }
 *   }),
 *   Action.fallback(({ city }: { city: string }, error) => ({ city, sky: "unknown", because: error.category }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type { Category } from "./ActionError.ts"

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
 * - A failure whose outcome is unknown is never retried, whatever `retryOn`
 *   says: the request may have reached the server. That is a TRANSIENT with
 *   `outcomeUnknown` created not retryable, or a TIMEOUT created not retryable
 *   (the attempt timeout of a call that is not safe to repeat).
 * - A server's `retryAfter` replaces the backoff delay for that retry; when it
 *   asks for more than `maxDelay`, or more than what is left of the deadline,
 *   the call fails now with that error instead of sleeping past it.
 *
 * @category models
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
 * (default 0.5, in (0, 1]) with at least `minimumCalls` (default 10, at most
 * `window`) recorded; while open, calls fail at once with TRANSIENT
 * (`retryAfter`: the time left); after `resetAfter` (default 30 seconds, on
 * Effect's `Clock`) one probe call is let through (half-open), and its
 * outcome closes or re-opens the circuit. Only TIMEOUT, TRANSIENT and
 * EXECUTION failures count as failures (see `recordedCategories`); a full
 * bulkhead's rejection does not.
 *
 * @category models
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
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface Policy {
  readonly retry?: RetryPolicy | undefined
  readonly timeout?: Duration.Input | undefined
  readonly attemptTimeout?: Duration.Input | undefined
  readonly circuitBreaker?: CircuitBreakerPolicy | undefined
  readonly bulkhead?: BulkheadPolicy | undefined
}
