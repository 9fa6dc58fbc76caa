/**
 * The run store in process memory: maps of statuses and of recorded steps, every operation synchronous (so
 * a conditional write is atomic within the process). Nothing is ever evicted: for tests and single-process
 * trials.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isFinal, type RunStatus } from "../status.ts"
import { checkKey, makeWatch, type Service } from "./boundary.ts"

const store = "the durable run store (memory)"

/** A fresh store in memory. */
export const make = (): Service => {
  const runs = new Map<string, RunStatus>()
  const steps = new Map<string, Map<string, string>>()
  const key = (workflow: string, runId: string) => JSON.stringify([workflow, runId])
  const { written, watch } = makeWatch()
  const stepsOf = (workflow: string, runId: string) => {
    const at = key(workflow, runId)
    const found = steps.get(at)
    if (found !== undefined) return found
    const made = new Map<string, string>()
    steps.set(at, made)
    return made
  }
  return {
    create: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.sync(() => {
          if (runs.has(key(workflow, runId))) return false
          runs.set(key(workflow, runId), { _tag: "Running" })
          return true
        })
      ),
    get: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.sync(() => Option.fromUndefinedOr(runs.get(key(workflow, runId))))
      ),
    set: (workflow, runId, status) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.sync(() => {
          const current = runs.get(key(workflow, runId))
          if (current !== undefined && isFinal(current)) return false
          runs.set(key(workflow, runId), status)
          return true
        })
      ).pipe(Effect.tap((wrote) => (wrote ? written(workflow, runId) : Effect.void))),
    recordStep: (workflow, runId, step, body) =>
      Effect.andThen(
        checkKey(store, workflow, runId, step),
        Effect.sync(() => {
          const recorded = stepsOf(workflow, runId)
          const first = recorded.get(step)
          if (first !== undefined) return first
          recorded.set(step, body)
          return body
        })
      ),
    readStep: (workflow, runId, step) =>
      Effect.andThen(
        checkKey(store, workflow, runId, step),
        Effect.sync(() => Option.fromUndefinedOr(steps.get(key(workflow, runId))?.get(step)))
      ),
    readSteps: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.sync((): ReadonlyMap<string, string> => new Map(steps.get(key(workflow, runId)) ?? []))
      ),
    watch
  }
}
