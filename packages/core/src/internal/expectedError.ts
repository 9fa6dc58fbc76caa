/**
 * Expected failures (the action categories, a failed retrieval, the services'
 * typed errors that become their cause) are values a
 * caller matches on and may keep by the thousand in `ActionResponse`s, so
 * they are built as plain data:
 *
 * - No stack frames. A captured JavaScript stack says nothing about an
 *   expected failure — its frames are Effect's fiber loop — yet V8 holds the
 *   frames (then their text, ~1 KiB) as long as the error lives. Instances are
 *   built with `Error.stackTraceLimit` at 0, so `stack` is the `Tag: message`
 *   line; where a call failed is what its span says.
 * - Standalone strings. In V8 a string cut from a larger one may keep the
 *   larger one alive, and one joined from pieces (a message) keeps the
 *   pieces; each string field (and each string in an array
 *   field, or in its records, such as `issues`) is copied flat, so an error
 *   holds what its fields show and no more.
 * - A cause's stack as text. A `cause` (a thrown error, a library's error) is
 *   kept with its stack — defects keep theirs — but V8 holds a stack's frames
 *   unformatted, with each frame's receiver and function, until it is first
 *   read: a library's error would keep the client and the request that made
 *   it. The stacks of the cause, its causes and an `AggregateError`'s errors
 *   are read once, so only their text is kept.
 */
import * as Predicate from "effect/Predicate"

// A copy that shares no memory with `text`: JSON keeps every code unit, lone surrogates included.
const flat = (text: string): string => JSON.parse(JSON.stringify(text))

const plainValue = (value: unknown): unknown =>
  typeof value === "string"
    ? flat(value)
    : Array.isArray(value)
      ? value.map((element) =>
          typeof element === "string"
            ? flat(element)
            : Predicate.isObject(element) && Object.getPrototypeOf(element) === Object.prototype
              ? Object.fromEntries(
                  Object.entries(element).map(([key, field]) => [key, typeof field === "string" ? flat(field) : field])
                )
              : element
        )
      : value

// V8 keeps an error's stack frames unformatted — each with its receiver and function, and so whatever they
// hold (an SDK client, the request, an abort controller) — until `stack` is first read; reading it keeps the text.
const formatStacks = (cause: unknown, depth: number): void => {
  if (depth > 8 || !(cause instanceof Error)) return
  cause.stack
  formatStacks(cause.cause, depth + 1)
  if (cause instanceof AggregateError) for (const error of cause.errors) formatStacks(error, depth + 1)
}

const plainFields = (fields: unknown): unknown => {
  if (!Predicate.isObject(fields) || fields instanceof Error) return fields
  formatStacks(fields.cause, 0)
  return Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [key, key === "cause" ? value : plainValue(value)])
  )
}

// The mixin form TypeScript requires: a constructor taking `...args: Array<any>`.
type ErrorClass = new (...args: Array<any>) => Error

/** A subclass of `Base` whose instances capture no stack frames and hold standalone strings. */
export const expected = <Base extends ErrorClass>(Base: Base): Base =>
  class Expected extends Base {
    constructor(...[fields, ...rest]: Array<any>) {
      const limit = Error.stackTraceLimit
      Error.stackTraceLimit = 0
      try {
        super(plainFields(fields), ...rest)
      } finally {
        Error.stackTraceLimit = limit
      }
    }
  }
