/**
 * The raw result of a webService, llm or mcpTool action, as
 * `Action.mapResult((result, args) => …)` receives it, with readers for
 * each shape the value may have: text, a JSON object or array, any JSON
 * value, or a value decoded with a schema.
 *
 * An `ActionResult` is an immutable value: `value` is the raw result,
 * `isNull` and `isEmpty` are checks on it, and the conversions (`asString`,
 * `asRecord`, `asArray`, `asJson`, `decode(schema)`) are Effects failing with
 * a `ValidationError` whose `action` is the action's name. Each conversion is
 * also a function of this module (`ActionResult.asRecord(result)`); the
 * getters call those functions.
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const Forecast = Schema.Struct({ temp: Schema.Finite, sky: Schema.String })
 *
 * const forecast = Action.webService({
 *   description: "Today's forecast for a city",
 *   parameters: { city: Schema.String },
 *   endpoint: "https://api.example.com/v1/forecast/{city}"
 * }).pipe(Action.mapResult((result) => result.decode(Forecast))) // the action's result: { temp, sky }
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Pipeable from "effect/Pipeable"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { dual } from "effect/Function"
import { ValidationError } from "./ActionError.ts"
import { shorten } from "./internal/text.ts"
import * as Json from "./internal/json.ts"
import { isPlainObject, parseJson } from "./internal/json.ts"

/**
 * The type id carried by every {@link ActionResult}.
 *
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/ActionResult"

/**
 * @category models
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * A raw action result with its conversions.
 *
 * - `action`: the name of the action that produced it (used in errors).
 * - `value`: the raw result, unchanged.
 * - `isNull`: `value` is `null` or `undefined`.
 * - `isEmpty`: `isNull`, or `""`/whitespace only, `[]`, `{}` (a plain object
 *   without keys), or an empty `Uint8Array`.
 * - `asString`, `asRecord`, `asArray`, `asJson`: see the functions of the
 *   same name; each read gives a new (lazy) Effect.
 * - `decode(schema)`: see {@link decode}.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionResult<out A = unknown> extends Pipeable.Pipeable {
  readonly [TypeId]: TypeId
  readonly action: string
  readonly value: A
  readonly isNull: boolean
  readonly isEmpty: boolean
  readonly asString: Effect.Effect<string, ValidationError>
  readonly asRecord: Effect.Effect<Record<string, unknown>, ValidationError>
  readonly asArray: Effect.Effect<ReadonlyArray<unknown>, ValidationError>
  readonly asJson: Effect.Effect<Schema.Json, ValidationError>
  readonly decode: <S extends Schema.Top>(schema: S) => Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]>
}

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  },
  get asString() {
    return asString(this as unknown as ActionResult)
  },
  get asRecord() {
    return asRecord(this as unknown as ActionResult)
  },
  get asArray() {
    return asArray(this as unknown as ActionResult)
  },
  get asJson() {
    return asJson(this as unknown as ActionResult)
  },
  decode<S extends Schema.Top>(this: ActionResult, schema: S) {
    return decode(this, schema)
  },
  toJSON(this: ActionResult) {
    return { _id: "ActionResult", action: this.action, value: this.value }
  },
  toString(this: ActionResult) {
    return `ActionResult(${this.action})`
  }
}

/**
 * Wraps a raw result. `options.action` names the action that produced it; it
 * becomes the `action` of every `ValidationError` a conversion fails with.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as ActionResult from "@rolecraft/core/ActionResult"
 *
 * const program = Effect.gen(function* () {
 *   const result = ActionResult.make('{"temp":21}', { action: "temperature" })
 *   const body = yield* result.asRecord // { temp: 21 }
 *   return `Vienna: ${body.temp}`
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <A>(value: A, options: { readonly action: string }): ActionResult<A> => {
  const self = Object.create(Proto)
  self.action = options.action
  self.value = value
  self.isNull = isNullish(value)
  self.isEmpty = isEmptyValue(value)
  return Object.freeze(self)
}

/**
 * Whether a value is an {@link ActionResult}.
 *
 * @category guards
 * @since 0.1.0
 */
export const isActionResult = (u: unknown): u is ActionResult =>
  typeof u === "object" && u !== null && (u as { readonly [TypeId]?: unknown })[TypeId] === TypeId

// =============================================================================
// Checks
// =============================================================================

const isNullish = (u: unknown): u is null | undefined => u === null || u === undefined

const isEmptyValue = (u: unknown): boolean =>
  isNullish(u) ||
  (typeof u === "string" && u.trim().length === 0) ||
  (Array.isArray(u) && u.length === 0) ||
  (u instanceof Uint8Array && u.length === 0) ||
  (isPlainObject(u) && Object.keys(u).length === 0)

// =============================================================================
// Conversions
// =============================================================================

/** At most 500 characters of a text, never splitting a surrogate pair. */
const preview = (text: string): string => shorten(text, 500)

const describe = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "array"
  if (u instanceof Uint8Array) return "bytes"
  if (typeof u !== "object") return typeof u
  const name = Object.getPrototypeOf(u)?.constructor?.name
  return isPlainObject(u) || typeof name !== "string" || name === "" ? "object" : name
}

const invalid = (self: ActionResult, message: string, path = ""): ValidationError =>
  new ValidationError({ action: self.action, message, issues: [{ path, message }] })

// A small pure boundary around `JSON.parse`.
const decodeUtf8 = (bytes: Uint8Array): Result.Result<string, string> =>
  Result.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
    catch: () => "the bytes are not valid UTF-8"
  })

const parseText = (self: ActionResult, text: string): Result.Result<unknown, ValidationError> =>
  Result.mapError(parseJson(text), (reason) =>
    invalid(self, `the result is not valid JSON (${preview(reason)}): ${preview(text)}`)
  )

// A string or UTF-8 bytes holding JSON, parsed; any other value as is.
const parseIfText = (self: ActionResult, u: unknown): Result.Result<unknown, ValidationError> => {
  if (typeof u === "string") return parseText(self, u)
  if (u instanceof Uint8Array) {
    return Result.flatMap(
      Result.mapError(decodeUtf8(u), (reason) => invalid(self, reason)),
      (text) => parseText(self, text)
    )
  }
  return Result.succeed(u)
}

const stringOf = (self: ActionResult): Result.Result<string, ValidationError> => {
  const value = self.value
  if (typeof value === "string") return Result.succeed(value)
  if (isNullish(value)) return Result.succeed("")
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return Result.succeed(String(value))
  }
  if (value instanceof Uint8Array) return Result.mapError(decodeUtf8(value), (reason) => invalid(self, reason))
  if (typeof value === "object") {
    return Result.mapError(Json.write(value), (problem) =>
      invalid(self, `the ${describe(value)} cannot be written as JSON: ${problem.message}`)
    )
  }
  return Result.fail(invalid(self, `expected a value that has a text form, got ${describe(value)}`))
}

/**
 * The result as text: a string as is; `null`/`undefined` → `""`; a number,
 * boolean or bigint → `String(value)`; a `Uint8Array` → its UTF-8 text
 * (invalid UTF-8 fails); an object or array → its JSON, the same text a
 * chat turn sends the model and the output guardrail checks (`toJSON` is
 * honoured, so a `Date` becomes its ISO string; a bigint is its decimal
 * string, a Map an object, a Set an array). Fails with `ValidationError` for
 * a value that refers to itself or nests more than 1,000 levels deep (the
 * message names the path), or a function or symbol.
 *
 * @category getters
 * @since 0.1.0
 */
export const asString = (self: ActionResult): Effect.Effect<string, ValidationError> =>
  Effect.suspend(() => Effect.fromResult(stringOf(self)))

const recordOf = (self: ActionResult): Result.Result<Record<string, unknown>, ValidationError> =>
  Result.flatMap(parseIfText(self, self.value), (u) =>
    isPlainObject(u) ? Result.succeed(u) : Result.fail(invalid(self, `expected a JSON object, got ${describe(u)}`))
  )

/**
 * The result as a JSON object: a plain object as is; a
 * string (or UTF-8 bytes) holding a JSON object → parsed. Fails with
 * `ValidationError` otherwise ("expected a JSON object, got array"; text that
 * is not JSON is reported with a preview of at most 500 characters).
 *
 * @category getters
 * @since 0.1.0
 */
export const asRecord = (self: ActionResult): Effect.Effect<Record<string, unknown>, ValidationError> =>
  Effect.suspend(() => Effect.fromResult(recordOf(self)))

const arrayOf = (self: ActionResult): Result.Result<ReadonlyArray<unknown>, ValidationError> =>
  Result.flatMap(parseIfText(self, self.value), (u) =>
    Array.isArray(u) ? Result.succeed(u) : Result.fail(invalid(self, `expected a JSON array, got ${describe(u)}`))
  )

/**
 * The result as an array: an array as is; a string
 * (or UTF-8 bytes) holding a JSON array → parsed. Fails with
 * `ValidationError` otherwise ("expected a JSON array, got object").
 *
 * @category getters
 * @since 0.1.0
 */
export const asArray = (self: ActionResult): Effect.Effect<ReadonlyArray<unknown>, ValidationError> =>
  Effect.suspend(() => Effect.fromResult(arrayOf(self)))

type PathSegment = string | number

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, segment) => {
    if (typeof segment === "number") return `${out}[${segment}]`
    const name = String(segment)
    return out === "" ? name : `${out}.${name}`
  }, "")

// The path and reason of the first part of `u` that is not a JSON value.
const findNonJson = (
  u: unknown,
  path: ReadonlyArray<PathSegment>,
  ancestors: Set<unknown>
): { readonly path: ReadonlyArray<PathSegment>; readonly reason: string } | undefined => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return undefined
  if (typeof u === "number") return Number.isFinite(u) ? undefined : { path, reason: `${u} is not a JSON number` }
  if (u === undefined) return { path, reason: "undefined is not a JSON value" }
  if (typeof u !== "object") return { path, reason: `a ${typeof u} is not a JSON value` }
  if (ancestors.has(u)) return { path, reason: "the value refers to itself" }
  const isArray = Array.isArray(u)
  if (!isArray && !isPlainObject(u)) return { path, reason: `a ${describe(u)} is not a JSON value` }
  ancestors.add(u)
  const entries: ReadonlyArray<readonly [PathSegment, unknown]> = isArray
    ? Array.from(u, (item, index) => [index, item] as const)
    : Object.entries(u)
  for (const [key, item] of entries) {
    const found = findNonJson(item, [...path, key], ancestors)
    if (found !== undefined) return found
  }
  ancestors.delete(u)
  return undefined
}

const jsonOf = (self: ActionResult): Result.Result<Schema.Json, ValidationError> =>
  Result.flatMap(parseIfText(self, self.value), (u) => {
    const found = findNonJson(u, [], new Set())
    if (found === undefined) return Result.succeed(u as Schema.Json) // checked just above
    const path = formatPath(found.path)
    return Result.fail(
      invalid(self, `the result is not a JSON value: ${found.reason}${path === "" ? "" : ` at ${path}`}`, path)
    )
  })

/**
 * The result as a JSON value: a string (or UTF-8
 * bytes) is parsed as JSON (fails with a preview when it is not JSON); any
 * other value must already be a JSON value — `null`, a boolean, a finite
 * number, an array or plain object of JSON values — and is returned as is.
 * `undefined`, functions, bigints, symbols, non-finite numbers, class
 * instances (`Date`, `Map`) and cycles fail with `ValidationError` naming the
 * path (`items[2].at`).
 *
 * @category getters
 * @since 0.1.0
 */
export const asJson = (self: ActionResult): Effect.Effect<Schema.Json, ValidationError> =>
  Effect.suspend(() => Effect.fromResult(jsonOf(self)))

// Whether the encoded side of a schema is an object or an array (or a union of
// those, with null/undefined allowed), so that a JSON text must be parsed first.
const expectsStructure = (ast: SchemaAST.AST, suspended: ReadonlySet<SchemaAST.AST> = new Set()): boolean => {
  const encoded = SchemaAST.toEncoded(ast)
  switch (encoded._tag) {
    case "Objects":
    case "Arrays":
      return true
    case "Suspend":
      // A suspension met again on the same path adds nothing new.
      return !suspended.has(encoded) && expectsStructure(encoded.thunk(), new Set([...suspended, encoded]))
    case "Union": {
      const members = encoded.types.filter((member) => !["Null", "Undefined", "Void"].includes(member._tag))
      return members.length > 0 && members.every((member) => expectsStructure(member, suspended))
    }
    default:
      return false
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const fromIssue = (self: ActionResult, issue: SchemaIssue.Issue): ValidationError => {
  const issues = formatter(issue).issues.map((entry) => ({
    path: formatPath((entry.path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment))),
    message: entry.message
  }))
  const summary = issues
    .map((entry) => (entry.path === "" ? entry.message : `${entry.path}: ${entry.message}`))
    .join("; ")
  return new ValidationError({
    action: self.action,
    message: `the result does not match the expected schema: ${summary}`,
    issues
  })
}

/**
 * Decodes the result with a schema, reporting every
 * issue (`errors: "all"`). When the value is a string (or UTF-8 bytes) and the
 * schema's encoded side is an object or an array (a `Struct`, `Class`,
 * `Array`, `Record`, `Tuple`, or a union of those), the JSON text is parsed
 * first. Fails with `ValidationError` whose `issues` name each failing path
 * (`guests[1].age`); needs the schema's decoding services. Dual:
 * `ActionResult.decode(result, schema)` or
 * `result.pipe(ActionResult.decode(schema))`.
 *
 * @example
 * ```ts
 * import { ActionResult } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * const Forecast = Schema.Struct({ temp: Schema.Finite })
 * const result = ActionResult.make('{"temp":21}', { action: "forecast" })
 *
 * const program = Effect.gen(function* () {
 *   const forecast = yield* ActionResult.decode(result, Forecast) // { temp: 21 }
 *   const same = yield* result.pipe(ActionResult.decode(Forecast))
 *   return forecast.temp + same.temp
 * })
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const decode: {
  <S extends Schema.Top>(
    schema: S
  ): (self: ActionResult) => Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]>
  <S extends Schema.Top>(
    self: ActionResult,
    schema: S
  ): Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]>
} = dual(
  2,
  <S extends Schema.Top>(
    self: ActionResult,
    schema: S
  ): Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]> =>
    Effect.suspend(() => {
      const value = self.value
      const input =
        (typeof value === "string" || value instanceof Uint8Array) && expectsStructure(schema.ast)
          ? parseIfText(self, value)
          : Result.succeed(value)
      return Effect.flatMap(Effect.fromResult(input), (u) =>
        Effect.mapError(SchemaParser.decodeUnknownEffect(schema)(u, { errors: "all" }), (issue) =>
          fromIssue(self, issue)
        )
      )
    })
)
