/**
 * The pipeline's sequencing: a typed chain of steps, each given the previous
 * one's value. Most of a call's steps are settled at once — a check that
 * passes, a schema that decodes synchronously — and come back as an `Exit`;
 * a {@link Chain} continues from a settled step with a plain function call,
 * and only a step that really waits goes through the runtime. In Effect 4
 * the pipeline's ten steps (eleven effects: step 3 is the before hook and the
 * input guardrail) cost about a sixth of the same steps in `Effect.gen` when
 * they are settled (a generator resumption and an iterator per `yield*`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * Steps to run in order, each given the previous one's value: `next` adds a
 * step (typed by the value before it), `effect` is the whole, succeeding
 * with the last step's value; the first failure ends it.
 */
export interface Chain<A, E, R> {
  readonly next: <B, E2, R2>(f: (a: A) => Effect.Effect<B, E2, R2>) => Chain<B, E | E2, R | R2>
  readonly effect: Effect.Effect<A, E, R>
}

type Step = (previous: unknown) => Effect.Effect<unknown, unknown, unknown>

class Steps {
  readonly first: Effect.Effect<unknown, unknown, unknown>
  readonly steps: Array<Step> = []
  constructor(first: Effect.Effect<unknown, unknown, unknown>) {
    this.first = first
  }
  next(f: Step): this {
    this.steps.push(f)
    return this
  }
  get effect(): Effect.Effect<unknown, unknown, unknown> {
    return from(this.first, this.steps, 0)
  }
}

/**
 * Starts a chain with `first`. Its steps run when `effect` is read: read it
 * inside a running Effect (a `suspend`, a continuation), where a throw from a
 * step is caught as a defect.
 */
export const chain = <A, E, R>(first: Effect.Effect<A, E, R>): Chain<A, E, R> =>
  new Steps(first) as unknown as Chain<A, E, R>

// Runs `steps` from `index` on the value of `effect`: settled values are passed on at once.
const from = (
  effect: Effect.Effect<unknown, unknown, unknown>,
  steps: ReadonlyArray<Step>,
  index: number
): Effect.Effect<any, any, any> => {
  let current = effect
  for (let i = index; i < steps.length; i++) {
    if (!Exit.isExit(current)) {
      const next = i
      return Effect.flatMap(current, (value) => from((steps[next] as Step)(value), steps, next + 1))
    }
    if (Exit.isFailure(current)) return current
    current = (steps[i] as Step)(current.value)
  }
  return current
}
