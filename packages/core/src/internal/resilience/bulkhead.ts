/**
 * The bulkhead of one agent's action: at most `maxConcurrent` calls run at
 * once and `maxQueued` wait for a turn; a call beyond both is refused at once
 * with a guard's TRANSIENT failure.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { ActionError } from "../../ActionError.ts"
import type { BulkheadPolicy } from "../../Resilience.ts"
import { type Guards, rejected } from "./guard.ts"

/**
 * A bulkhead for one agent and action (see {@link BulkheadPolicy}): an
 * Effect `Semaphore` of `maxConcurrent` permits, and a count of the calls
 * admitted (running or waiting for a permit). A call that finds
 * `maxConcurrent + maxQueued` admitted fails at once with TRANSIENT; an
 * interrupted waiter leaves the queue.
 *
 * The policy's settings are checked before (`Policy.makeGuards`).
 *
 * @since 0.1.0
 */
export const bulkhead = (action: string, policy: BulkheadPolicy): Effect.Effect<Guards["bulkhead"]> => {
  const max = policy.maxConcurrent
  const queued = policy.maxQueued ?? 0
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
