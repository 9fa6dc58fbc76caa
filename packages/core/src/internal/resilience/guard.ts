/**
 * The guards of one agent's action: what wraps each attempt to refuse calls
 * the action cannot take now — its circuit breaker (outside) and its bulkhead
 * (inside). A guard refuses with a TRANSIENT failure ({@link rejected}) that
 * a circuit breaker does not count against the action.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { type ActionError, TransientFailure } from "../../ActionError.ts"

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

/** Whether a failure is a guard's refusal ({@link rejected}). */
export const isRejection = (error: ActionError): boolean => guardRejections.has(error)
