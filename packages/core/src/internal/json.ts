/**
 * JSON helpers shared by every kernel that reads or writes JSON from outside
 * (a model's arguments or reply, a web service's body, a JSON Schema, an
 * action's result): parsing with the parser's own message, the plain-object
 * test, setting keys that come from outside as own properties, and writing a
 * value's JSON one way for every reader — a tool's result as a model or an
 * MCP client gets it (`ToolContent`), the output guardrail,
 * `ActionResult.asString`, and, with sorted keys, the digest of an approval's
 * arguments — with a bound on depth, so deep data never overflows the stack.
 */
import * as Result from "effect/Result"

// V8 quotes a window of about 20 characters around a bad token (`Unexpected token 's', ..."b": sk-abcdefg"...
// is not valid JSON`): a piece of the text that may be the middle of an echoed secret, which no redaction
// can recognise. The message keeps the token and drops the window; callers quote the text themselves,
// redacted before it is cut.
const quotedWindow = /^(Unexpected token '[\s\S]*?'), (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/

/** Parses JSON text; the failure is the parser's message, without the piece of the text it may quote. */
export const parseJson = (text: string): Result.Result<unknown, string> =>
  Result.try({
    try: (): unknown => JSON.parse(text),
    catch: (cause) =>
      (cause instanceof Error ? cause.message : String(cause)).replace(quotedWindow, "$1 is not valid JSON")
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

/** How deep outside data may nest (objects and arrays) before it is refused: 1,000 levels. */
export const maxDepth = 1_000

/** Why a value has no JSON text: a cycle, or nesting deeper than {@link maxDepth}, at `path` (`$` is the value). */
export interface Unwritable {
  readonly reason: "cycle" | "depth"
  readonly path: string
  readonly message: string
}

const pathOf = (parent: string, key: string | number): string =>
  typeof key === "number"
    ? `${parent}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(key)
      ? `${parent}.${key}`
      : `${parent}[${JSON.stringify(key)}]`

class Stop {
  readonly problem: Unwritable
  constructor(problem: Unwritable) {
    this.problem = problem
  }
}

const isScalar = (value: unknown): boolean =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/** A scalar, or a plain object or array of scalars without `toJSON`: no cycle, no depth, nothing to convert. */
const isFlat = (value: unknown): boolean => {
  if (isScalar(value)) return true
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false
    for (const element of value) if (!isScalar(element)) return false
    return true
  }
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return false
  for (const key in value) {
    if (!isScalar((value as Record<string, unknown>)[key])) return false
  }
  return true
}

/** Options of {@link write}. */
export interface WriteOptions {
  /** Write object keys sorted by code unit at every depth (a canonical text, for digests). Default `false`. */
  readonly sortKeys?: boolean | undefined
}

/**
 * The JSON text of a value, as `JSON.stringify` writes it (`toJSON` honoured,
 * so a Date is its ISO string; `undefined`, functions and symbols left out of
 * objects and `null` in arrays, holes of a sparse array included; non-finite
 * numbers `null`), except that a bigint is its decimal string, a Map an
 * object of its entries (a key as its string, or its JSON when it is an
 * object) and a Set an array. A value with no JSON at all (`undefined`, a
 * function) is `null`. With `sortKeys`, object keys are sorted by code unit.
 * Fails with the path where a cycle closes, or where nesting passes
 * {@link maxDepth}.
 */
export const write = (value: unknown, options?: WriteOptions): Result.Result<string, Unwritable> => {
  const sortKeys = options?.sortKeys === true
  // Most results are a scalar or one level of scalars, which JSON.stringify writes exactly as below, natively.
  if (sortKeys ? isScalar(value) : isFlat(value)) return Result.succeed(JSON.stringify(value))
  const ancestors: Array<object> = []
  const go = (raw: unknown, path: string, depth: number): string | undefined => {
    let value = raw
    if (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
      value = (value as { toJSON: (key: string) => unknown }).toJSON("")
    }
    switch (typeof value) {
      case "string":
        return JSON.stringify(value)
      case "number":
        return Number.isFinite(value) ? String(value) : "null"
      case "boolean":
        return value ? "true" : "false"
      case "bigint":
        return JSON.stringify(value.toString())
      case "object": {
        if (value === null) return "null"
        if (ancestors.includes(value)) {
          throw new Stop({ reason: "cycle", path, message: `the value refers to itself at ${path}` })
        }
        if (depth >= maxDepth) {
          throw new Stop({
            reason: "depth",
            path,
            message: `the value is nested more than ${maxDepth} levels deep at ${path}`
          })
        }
        ancestors.push(value)
        let out: string
        if (Array.isArray(value) || value instanceof Set) {
          const items: ReadonlyArray<unknown> = Array.isArray(value) ? value : [...value]
          // A plain loop, not `map`: `map` skips the holes of a sparse array, which JSON writes as null.
          const parts: Array<string> = []
          for (let i = 0; i < items.length; i++) parts.push(go(items[i], pathOf(path, i), depth + 1) ?? "null")
          out = `[${parts.join(",")}]`
        } else {
          const entries: Array<readonly [string, unknown]> =
            value instanceof Map
              ? [...value].map(
                  ([key, item]) =>
                    [
                      typeof key === "object" && key !== null
                        ? (go(key, `${path}<key>`, depth + 1) ?? "null")
                        : String(key),
                      item
                    ] as const
                )
              : Object.entries(value as Record<string, unknown>)
          if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          const parts: Array<string> = []
          for (const [key, item] of entries) {
            const written = go(item, pathOf(path, key), depth + 1)
            if (written !== undefined) parts.push(`${JSON.stringify(key)}:${written}`)
          }
          out = `{${parts.join(",")}}`
        }
        ancestors.pop()
        return out
      }
      default:
        return undefined
    }
  }
  try {
    return Result.succeed(go(value, "$", 0) ?? "null")
  } catch (error) {
    if (error instanceof Stop) return Result.fail(error.problem)
    throw error
  }
}

/**
 * Where a value from outside nests deeper than `limit` objects and arrays,
 * or `undefined`: an iterative walk (no recursion), visiting each object
 * once.
 */
export const tooDeep = (value: unknown, limit: number = maxDepth): string | undefined => {
  const seen = new Set<object>()
  const stack: Array<readonly [unknown, string, number]> = [[value, "$", 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, path, depth] = next
    if (typeof item !== "object" || item === null || seen.has(item)) continue
    if (depth >= limit) return path
    seen.add(item)
    if (Array.isArray(item)) for (let i = 0; i < item.length; i++) stack.push([item[i], pathOf(path, i), depth + 1])
    else for (const key in item) stack.push([(item as Record<string, unknown>)[key], pathOf(path, key), depth + 1])
  }
  return undefined
}
