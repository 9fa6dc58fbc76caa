/**
 * JSON helpers shared by every kernel that reads JSON from outside (a model's
 * arguments or reply, a web service's body, a JSON Schema): parsing with the
 * parser's own message, the plain-object test, and setting keys that come
 * from outside as own properties.
 */
import * as Result from "effect/Result"

/** Parses JSON text; the failure is the parser's message. */
export const parseJson = (text: string): Result.Result<unknown, string> =>
  Result.try({
    try: (): unknown => JSON.parse(text),
    catch: (cause) => (cause instanceof Error ? cause.message : String(cause))
  })

/**
 * Whether a value is a plain object, as JSON makes them: not an array, and
 * with `Object.prototype` or no prototype (a `Date`, a `Map` or a class
 * instance is not).
 */
export const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/**
 * Sets an own, enumerable data property, also for the key `__proto__`.
 *
 * Records built from keys that come from outside (a JSON Schema's property
 * names and keywords, a model's arguments) must take every key as a
 * property: `target[key] = value` with the key `__proto__` (which
 * `JSON.parse` makes an own key) would set the object's prototype instead.
 */
export const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}
