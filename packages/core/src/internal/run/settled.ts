/**
 * `yield* settled(effect)` in an `Effect.gen` body: an effect that is already
 * a success (an `Exit`, as the pipeline's steps are for an action without
 * their policy) gives its value without suspending the generator, because
 * `yield*` on an iterator whose first result is done does not yield at all;
 * any other effect is yielded as usual.
 *
 * Each suspension of the generator is a trip through Effect's runtime:
 * ~0.35 µs in a tight loop, ~0.8 µs around real I/O (issue 8's profiles).
 *
 * Only for `yield*`: the value returned for a settled effect is an iterable,
 * typed as the effect it stands for, and is nothing else.
 */
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

// The iterator and its one result at once: `next()` answers done, with the value.
class Done<A> {
  readonly done = true
  readonly value: A
  constructor(value: A) {
    this.value = value
  }
  next(): this {
    return this
  }
  [Symbol.iterator](): this {
    return this
  }
}

/** `effect`, or for a success `Exit` an iterable that ends at once with its value (see the module doc). */
export const settled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Exit.isExit(effect) && Exit.isSuccess(effect)
    ? // The one boundary where a non-effect stands for an effect: it is only ever the operand of `yield*`.
      (new Done(effect.value) as unknown as Effect.Effect<A, E, R>)
    : effect
