/**
 * Sequencing for the hot path of every call, the pipeline: most of a call's
 * steps are settled at once — a check that passes, a schema that decodes
 * synchronously — and come back as an `Exit`. `sequence` continues from a
 * settled step with a plain function call; only a step that really waits goes
 * through the runtime. In Effect 4 eleven settled steps cost about a sixth of
 * the same steps in `Effect.gen` (a generator resumption and an iterator per
 * `yield*`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * One step of a {@link sequence}: given the previous step's value (`undefined`
 * for the first), the Effect to run next. Each step declares the type it
 * expects; `sequence` passes on whatever the previous step succeeded with.
 */
export type Step<E, R> = (previous: never) => Effect.Effect<unknown, E, R>

/**
 * Runs `steps` in order, each given the previous one's value, and succeeds
 * with the last one's; the first failure ends it. A step that returns a
 * settled `Exit` costs a function call; any other Effect is run by the
 * runtime and the rest continue from its value. Must itself be called inside
 * a running Effect (a `suspend`, a continuation), where a throw from a step is
 * caught as a defect.
 */
export const sequence = <E, R>(steps: ReadonlyArray<Step<E, R>>): Effect.Effect<unknown, E, R> => {
  const from = (index: number, previous: unknown): Effect.Effect<unknown, E, R> => {
    let value = previous
    for (let i = index; i < steps.length; i++) {
      const effect = (steps[i] as (previous: unknown) => Effect.Effect<unknown, E, R>)(value)
      if (!Exit.isExit(effect)) return Effect.flatMap(effect, (next) => from(i + 1, next))
      if (Exit.isFailure(effect)) return effect
      value = effect.value
    }
    return Effect.succeed(value)
  }
  return from(0, undefined)
}
