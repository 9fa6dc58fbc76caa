/**
 * The circuit breaker of one agent's action: a state machine held in memory
 * that stops calling an action whose recent attempts mostly failed, and
 * probes it again after a while. It refuses with a guard's TRANSIENT failure
 * while open.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { ActionError, Category } from "../../ActionError.ts"
import type { CircuitBreakerPolicy } from "../../Resilience.ts"
import { type Guards, isRejection, rejected } from "./guard.ts"

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
  return Option.isSome(error) && recordedCategories.has(error.value.category) && !isRejection(error.value)
    ? "failure"
    : "ignored"
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
 * The policy's settings are checked before (`Policy.makeGuards`).
 *
 * @since 0.1.0
 */
export const circuitBreaker = (
  action: string,
  policy: CircuitBreakerPolicy
): Effect.Effect<Guards["circuitBreaker"]> => {
  const threshold = policy.failureRateThreshold ?? 0.5
  const minimumCalls = policy.minimumCalls ?? 10
  const size = policy.window ?? 20
  const resetAfterMs = Duration.toMillis(Duration.fromInputUnsafe(policy.resetAfter ?? Duration.seconds(30)))

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
