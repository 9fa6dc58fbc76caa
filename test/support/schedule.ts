/**
 * The schedule harness: N operations of a stateful part run at once in one
 * process under an interleaving fast-check's scheduler chooses (seeded, see
 * ./seeded.ts). Every call of a service made `interleaved` first waits for
 * the scheduler to let it go, so the operations' steps — each read and each
 * write of a store — are released one at a time in the drawn order; a
 * property then checks the part's invariant over the exits of all of them.
 */
import { Effect, Exit } from "effect"
import type * as fc from "fast-check"

/** A scheduling point: the fiber waits until the scheduler releases `label`. */
export const point = (s: fc.Scheduler, label: string): Effect.Effect<void> =>
  Effect.promise(() => s.schedule(Promise.resolve(label), label)).pipe(Effect.asVoid)

/**
 * `service` with a scheduling point before each of its operations that
 * returns an Effect (the operations' own atomicity is kept: only their order
 * and what runs between them is drawn).
 */
export const interleaved = <S extends object>(s: fc.Scheduler, service: S, name: string): S => {
  const wrapped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(service)) {
    wrapped[key] =
      typeof value === "function"
        ? (...args: Array<unknown>) => {
            const result: unknown = value.apply(service, args)
            return Effect.isEffect(result) ? Effect.andThen(point(s, `${name}.${key}`), result) : result
          }
        : value
  }
  return wrapped as S
}

/** Runs `operations` at once under `s` until every one ended; their exits, in order. */
export const race = <A, E>(
  s: fc.Scheduler,
  operations: ReadonlyArray<Effect.Effect<A, E>>
): Promise<ReadonlyArray<Exit.Exit<A, E>>> =>
  s.waitFor(Effect.runPromise(Effect.all(operations.map(Effect.exit), { concurrency: "unbounded" })))

/** The successes among `exits`. */
export const successes = <A, E>(exits: ReadonlyArray<Exit.Exit<A, E>>): ReadonlyArray<A> =>
  exits.flatMap((exit) => (Exit.isSuccess(exit) ? [exit.value] : []))

/** The failures among `exits` (typed failures only; a defect or an interruption is thrown). */
export const failures = <A, E>(exits: ReadonlyArray<Exit.Exit<A, E>>): ReadonlyArray<E> =>
  exits.flatMap((exit) => {
    if (Exit.isSuccess(exit)) return []
    const found = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (found === undefined) throw new Error(`an operation died: ${String(exit.cause)}`)
    return [(found as { readonly error: E }).error]
  })
