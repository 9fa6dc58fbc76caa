/**
 * An action's resilience policy, checked when the agent is made — every
 * number and duration in range, or `RoleDefinitionError` naming the first
 * that is not — and turned into the action's guards (its circuit breaker and
 * bulkhead).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RoleDefinitionError } from "../../ActionError.ts"
import type { BulkheadPolicy, CircuitBreakerPolicy, Policy } from "../../Resilience.ts"
import { circuitBreaker } from "./breaker.ts"
import { bulkhead } from "./bulkhead.ts"
import { type Guards, noGuards } from "./guard.ts"

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

// The first problem of a circuit breaker's settings (defaults included).
const circuitBreakerProblem = (policy: CircuitBreakerPolicy): string | undefined => {
  const threshold = policy.failureRateThreshold ?? 0.5
  const minimumCalls = policy.minimumCalls ?? 10
  const size = policy.window ?? 20
  if (!(threshold > 0 && threshold <= 1)) {
    return `circuitBreaker.failureRateThreshold must be in (0, 1], got ${threshold}`
  }
  if (!isCount(size, 1)) return `circuitBreaker.window must be an integer >= 1, got ${size}`
  if (!isCount(minimumCalls, 1) || minimumCalls > size) {
    return `circuitBreaker.minimumCalls must be an integer from 1 to window (${size}), got ${minimumCalls}`
  }
  const resetAfter = Duration.fromInput(policy.resetAfter ?? Duration.seconds(30))
  if (Option.isNone(resetAfter) || !Duration.isFinite(resetAfter.value)) {
    return "circuitBreaker.resetAfter must be a finite duration"
  }
  return undefined
}

// The first problem of a bulkhead's settings.
const bulkheadProblem = (policy: BulkheadPolicy): string | undefined => {
  const max = policy.maxConcurrent
  const queued = policy.maxQueued ?? 0
  if (!isCount(max, 1)) return `bulkhead.maxConcurrent must be an integer >= 1, got ${max}`
  if (!isCount(queued, 0)) return `bulkhead.maxQueued must be an integer >= 0, got ${queued}`
  return undefined
}

// The first problem of a policy's numbers and durations, in the order they are checked.
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
    durationProblem("retry.maxDelay", retry?.maxDelay, { zero: "allowed" }) ??
    (policy.circuitBreaker === undefined ? undefined : circuitBreakerProblem(policy.circuitBreaker)) ??
    (policy.bulkhead === undefined ? undefined : bulkheadProblem(policy.bulkhead))
  )
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
