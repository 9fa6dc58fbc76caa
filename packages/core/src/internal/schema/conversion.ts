/**
 * Validate and convert an action's arguments against its `parameters` schema
 * (an MCP tool's JSON Schema `inputSchema` is turned into such a schema by
 * `fromJsonSchema.ts`).
 *
 * Models send numbers and booleans as strings, objects as JSON strings and
 * enum values in the wrong case (the project's failure). Before the
 * user's schema decodes, a coercer compiled from the schema's encoded side
 * repairs exactly these, and nothing more:
 *
 * - numeric strings are trimmed and parsed (`"1e3"` → `1000`); non-finite
 *   results (`"1e999"`, `"NaN"`, `"Infinity"`) and empty strings stay strings
 *   and fail; integer checks stay with the decoder (`"3.5"` fails as not an
 *   integer);
 * - `"true"` / `"false"` in any case become booleans; nothing else does (no
 *   truthiness: `"yes"`, `"0"`, `""`, `1` fail);
 * - enum literals match exactly, else by a unique case-insensitive match;
 *   never by prefix or fuzzily;
 * - a JSON string is decoded once where an object or array is expected;
 * - objects are walked into structs and records, arrays element-wise;
 * - never boolean → number, `[]` → 0 or `""` → 0.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaParser from "effect/SchemaParser"
import type * as SchemaIssue from "effect/SchemaIssue"
import { ValidationError } from "../../ActionError.ts"
import type { Issue } from "../../ActionError.ts"
import * as Json from "../json.ts"
import { setOwn } from "../json.ts"
import { shorten } from "../text.ts"
import * as Predicate from "effect/Predicate"

// -----------------------------------------------------------------------------
// Coercion: compiled once per AST node, a straight walk per call
// -----------------------------------------------------------------------------

/** Returns its input itself when nothing changed, a fresh value otherwise; never mutates. */
type Coerce = (input: unknown) => unknown

const identity: Coerce = (input) => input

const FINITE = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[Ee][+-]?\d+)?$/

const parseNumber = (input: string): number | undefined => {
  const trimmed = input.trim()
  if (!FINITE.test(trimmed)) return undefined
  const value = Number(trimmed)
  return Number.isFinite(value) ? value : undefined
}

const parseBoolean = (input: string): boolean | undefined => {
  if (input.length !== 4 && input.length !== 5) return undefined
  const lower = input.toLowerCase()
  return lower === "true" ? true : lower === "false" ? false : undefined
}

const coerceNumber: Coerce = (input) => (typeof input === "string" ? (parseNumber(input) ?? input) : input)

const coerceBoolean: Coerce = (input) => (typeof input === "string" ? (parseBoolean(input) ?? input) : input)

/** Decodes a string once when it holds a JSON object (`open` = `{`) or array (`[`); `undefined` otherwise. */
const jsonIn = (input: string, open: "{" | "["): unknown => {
  let start = 0
  while (start < input.length && /\s/.test(input.charAt(start))) start++
  if (input.charAt(start) !== open) return undefined
  const parsed = Json.parseJson(input)
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

/** Literal and enum values: exact, else a unique case-insensitive (or numeric, or boolean) match. */
const literalCoercer = (literals: ReadonlyArray<SchemaAST.LiteralValue>): Coerce => {
  const exact = new Set<unknown>(literals)
  // `null` marks a lower-case spelling shared by two literals: ambiguous, so no match.
  const byLowerCase = new Map<string, string | null>()
  let hasNumbers = false
  let hasBooleans = false
  for (const literal of literals) {
    if (typeof literal === "string") {
      const lower = literal.toLowerCase()
      byLowerCase.set(lower, byLowerCase.has(lower) ? null : literal)
    } else if (typeof literal === "number") hasNumbers = true
    else if (typeof literal === "boolean") hasBooleans = true
  }
  return (input) => {
    if (typeof input !== "string" || exact.has(input)) return input
    const match = byLowerCase.get(input.toLowerCase())
    if (typeof match === "string") return match
    if (hasNumbers) {
      const value = parseNumber(input)
      if (value !== undefined && exact.has(value)) return value
    }
    if (hasBooleans) {
      const value = parseBoolean(input)
      if (value !== undefined && exact.has(value)) return value
    }
    return input
  }
}

const objectsCoercer = (ast: SchemaAST.Objects): Coerce => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return identity
  const names = new Set<PropertyKey>(ast.propertySignatures.map((property) => property.name))
  const properties: Array<readonly [string, Coerce]> = []
  for (const property of ast.propertySignatures) {
    const coerce = compile(property.type)
    if (typeof property.name === "string" && coerce !== identity) properties.push([property.name, coerce])
  }
  // Only string-keyed index signatures (`Schema.Record(Schema.String, _)`) are walked.
  const index = ast.indexSignatures.find((signature) => signature.parameter._tag === "String")
  const indexCoerce = index === undefined ? identity : compile(index.type)
  return (input) => {
    let source = input
    if (typeof input === "string") {
      const parsed = jsonIn(input, "{")
      if (!Predicate.isObject(parsed)) return input
      source = parsed
    }
    if (!Predicate.isObject(source)) return input
    let out: Record<string, unknown> | undefined
    for (const [name, coerce] of properties) {
      if (!Object.hasOwn(source, name)) continue
      const value = source[name]
      const coerced = coerce(value)
      if (coerced !== value) setOwn((out ??= { ...source }), name, coerced)
    }
    if (indexCoerce !== identity) {
      for (const key of Object.keys(source)) {
        if (names.has(key)) continue
        const value = source[key]
        const coerced = indexCoerce(value)
        if (coerced !== value) setOwn((out ??= { ...source }), key, coerced)
      }
    }
    return out ?? source
  }
}

const arraysCoercer = (ast: SchemaAST.Arrays): Coerce => {
  const elements = ast.elements.map(compile)
  const rest = ast.rest.map(compile)
  const [spread, ...tail] = rest
  return (input) => {
    let source = input
    if (typeof input === "string") {
      const parsed = jsonIn(input, "[")
      if (!Array.isArray(parsed)) return input
      source = parsed
    }
    if (!Array.isArray(source)) return input
    const length = source.length
    const tailStart = Math.max(elements.length, length - tail.length)
    let out: Array<unknown> | undefined
    for (let i = 0; i < length; i++) {
      const coerce =
        i < elements.length ? elements[i] : i >= tailStart && tail.length > 0 ? tail[i - tailStart] : spread
      if (coerce === undefined || coerce === identity) continue
      const value: unknown = source[i]
      const coerced = coerce(value)
      if (coerced !== value) (out ??= source.slice())[i] = coerced
    }
    return out ?? source
  }
}

type Guard = (input: unknown) => boolean

const isOpenRecord = (ast: SchemaAST.Objects): boolean => {
  const [index, ...others] = ast.indexSignatures
  return (
    ast.propertySignatures.length === 0 &&
    index !== undefined &&
    others.length === 0 &&
    index.parameter._tag === "String" &&
    index.parameter.checks === undefined &&
    (index.type._tag === "Unknown" || index.type._tag === "Any") &&
    index.type.checks === undefined
  )
}

/** Whether a value already satisfies a (encoded-side) union member, checks included. */
const guardOf = (ast: SchemaAST.AST): Guard => {
  if (ast.checks === undefined) {
    switch (ast._tag) {
      case "String":
        return (input) => typeof input === "string"
      case "Number":
        return (input) => typeof input === "number"
      case "Boolean":
        return (input) => typeof input === "boolean"
      case "Null":
        return (input) => input === null
      case "Undefined":
      case "Void":
        return (input) => input === undefined
      case "Unknown":
      case "Any":
        return () => true
      case "Objects":
        // An open record (`Schema.Record(Schema.String, Schema.Unknown)`, e.g. an MCP tool's arguments) holds
        // any object but an array: the parser's own check, without walking every key on every call.
        if (isOpenRecord(ast)) return (input) => typeof input === "object" && input !== null && !Array.isArray(input)
    }
  }
  const is = SchemaParser.is(Schema.make<Schema.Top>(ast))
  // A declaration needing services, or throwing, cannot be told apart here: treat it as "no".
  return (input) => {
    const result = Result.try(() => is(input))
    return Result.isSuccess(result) && result.success
  }
}

const flattenUnion = (types: ReadonlyArray<SchemaAST.AST>): Array<SchemaAST.AST> =>
  types.flatMap((type) => (type._tag === "Union" ? flattenUnion(type.types) : [type]))

/**
 * A value that already satisfies a member is left alone. Otherwise each member
 * proposes a coercion; a proposal that then satisfies its member wins when it
 * is the only one (or all agree); with no satisfying proposal, a single
 * proposal is kept so the decoder can name the precise failure (e.g. "3.5"
 * becomes 3.5 and fails as not an integer). Ambiguity leaves the value alone.
 */
const unionCoercer = (ast: SchemaAST.Union): Coerce => {
  const members = flattenUnion(ast.types)
  const literals: Array<SchemaAST.LiteralValue> = []
  const others: Array<SchemaAST.AST> = []
  for (const member of members) {
    if (member._tag === "Literal" && member.checks === undefined) literals.push(member.literal)
    else if (member._tag === "Enum" && member.checks === undefined)
      for (const [, value] of member.enums) literals.push(value)
    else others.push(member)
  }
  const literalSet = new Set<unknown>(literals)
  const coerceLiteral = literals.length === 0 ? identity : literalCoercer(literals)
  let compiled: ReadonlyArray<{ readonly guard: Guard; readonly coerce: Coerce }> | undefined
  const getCompiled = () => (compiled ??= others.map((member) => ({ guard: guardOf(member), coerce: compile(member) })))
  return (input) => {
    if (literalSet.has(input)) return input
    const candidates = getCompiled()
    for (const candidate of candidates) if (candidate.guard(input)) return input
    let proposals = 0
    let proposal: unknown = input
    let valid = 0
    let validValue: unknown = input
    const literal = coerceLiteral(input)
    if (literal !== input) {
      proposals++
      proposal = literal
      valid++
      validValue = literal
    }
    for (const candidate of candidates) {
      if (candidate.coerce === identity) continue
      const coerced = candidate.coerce(input)
      if (coerced === input) continue
      proposals++
      proposal = coerced
      if (candidate.guard(coerced) && (valid === 0 || validValue !== coerced)) {
        valid++
        validValue = coerced
      }
    }
    if (valid === 1) return validValue
    if (valid === 0 && proposals === 1) return proposal
    return input
  }
}

const build = (ast: SchemaAST.AST): Coerce => {
  switch (ast._tag) {
    case "Number":
      return coerceNumber
    case "Boolean":
      return coerceBoolean
    case "Literal":
      return literalCoercer([ast.literal])
    case "Enum":
      return literalCoercer(ast.enums.map(([, value]) => value))
    case "Objects":
      return objectsCoercer(ast)
    case "Arrays":
      return arraysCoercer(ast)
    case "Union":
      return unionCoercer(ast)
    case "Suspend": {
      let coerce: Coerce | undefined
      return (input) => (coerce ??= compile(ast.thunk()))(input)
    }
    default:
      return identity
  }
}

/** Coercers by encoded AST node; shared, so recursive schemas compile each node once. */
const coercers = new WeakMap<SchemaAST.AST, Coerce>()

function compile(ast: SchemaAST.AST): Coerce {
  let coerce = coercers.get(ast)
  if (coerce === undefined) {
    coerce = build(ast)
    coercers.set(ast, coerce)
  }
  return coerce
}

interface Compiled {
  readonly coerce: Coerce
  readonly decode: (input: unknown) => Effect.Effect<unknown, SchemaIssue.Issue, unknown>
}

/** Coercer and decoder by the user schema's AST. */
const compiledBySchema = new WeakMap<SchemaAST.AST, Compiled>()

const compiledOf = (schema: Schema.Top): Compiled => {
  let compiled = compiledBySchema.get(schema.ast)
  if (compiled === undefined) {
    const decodeAll = SchemaParser.decodeUnknownEffect(schema, { errors: "all" })
    compiled = { coerce: compile(SchemaAST.toEncoded(schema.ast)), decode: (input) => decodeAll(input) }
    compiledBySchema.set(schema.ast, compiled)
  }
  return compiled
}

// -----------------------------------------------------------------------------
// Issues: one entry per failing leaf, named by its path
// -----------------------------------------------------------------------------

const MAX_SHOWN = 40

const truncate = (text: string): string => shorten(text, MAX_SHOWN)

/** A value as a message quotes it: JSON where possible, at most 40 characters. */
const show = (value: unknown): string => {
  switch (typeof value) {
    case "undefined":
      return "undefined"
    case "number":
    case "boolean":
    case "symbol":
    case "function":
      return truncate(String(value))
    case "bigint":
      return truncate(`${value}n`)
  }
  const json = Result.try(() => JSON.stringify(value))
  return truncate(Result.isSuccess(json) && typeof json.success === "string" ? json.success : String(value))
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** `guests[1].age`; the root is `""`; other keys as `["a key"]`. */
const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else if (typeof segment === "string" && IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`
    else out += `[${typeof segment === "string" ? JSON.stringify(segment) : String(segment)}]`
  }
  return out
}

/** The raw value the caller sent at a path (JSON strings along the way decoded once, as the coercer did). */
const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = root
  for (const segment of path) {
    if (typeof current === "string") current = jsonIn(current, typeof segment === "number" ? "[" : "{") ?? current
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, segment)) return undefined
    current = (current as Record<PropertyKey, unknown>)[segment]
  }
  return current
}

const hasCheck = (checks: SchemaAST.Checks | undefined, id: string): boolean =>
  checks?.some((check) =>
    check._tag === "Filter" ? check.annotations?.representation?.id === id : hasCheck(check.checks, id)
  ) === true

const showLiteral = (literal: SchemaAST.LiteralValue): string =>
  typeof literal === "bigint" ? `${literal}n` : typeof literal === "string" ? JSON.stringify(literal) : String(literal)

/** What a schema node expects, in words: `an integer`, `one of "a" | "b"`, `a string or null`. */
const describe = (ast: SchemaAST.AST): string => {
  const expected = ast.annotations?.expected
  if (typeof expected === "string") return expected
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return hasCheck(ast.checks, "effect/schema/isInt") ? "an integer" : "a number"
    case "Boolean":
      return "a boolean"
    case "BigInt":
      return "a bigint"
    case "Symbol":
    case "UniqueSymbol":
      return "a symbol"
    case "Null":
      return "null"
    case "Undefined":
    case "Void":
      return "undefined"
    case "Never":
      return "no value"
    case "Unknown":
    case "Any":
      return "any value"
    case "Literal":
      return showLiteral(ast.literal)
    case "Enum":
      return `one of ${ast.enums.map(([, value]) => showLiteral(value)).join(" | ")}`
    case "Objects":
    case "ObjectKeyword":
      return "an object"
    case "Arrays":
      return "an array"
    case "TemplateLiteral":
      return "a string of the expected form"
    case "Declaration":
      return "a valid value"
    case "Suspend":
      return describe(ast.thunk())
    case "Union": {
      const members = flattenUnion(ast.types)
      const literals: Array<string> = []
      for (const member of members) {
        if (member._tag === "Literal") literals.push(showLiteral(member.literal))
        else if (member._tag === "Enum") for (const [, value] of member.enums) literals.push(showLiteral(value))
      }
      if (literals.length === members.length) return `one of ${literals.join(" | ")}`
      // JSON cannot carry `undefined`: "or undefined" (from `Schema.optional`) would only be noise.
      const present = members.filter((member) => member._tag !== "Undefined" && member._tag !== "Void")
      return [...new Set((present.length > 0 ? present : members).map(describe))].join(" or ")
    }
  }
}

const messageOf = (
  annotations: { readonly [key: string]: unknown } | undefined,
  key = "message"
): string | undefined => {
  const message = annotations?.[key]
  return typeof message === "string" ? message : undefined
}

/** A Filter issue whose own words describe the failure (rather than a nested issue's). */
const isFilterLeaf = (issue: SchemaIssue.Filter): boolean =>
  messageOf(issue.filter.annotations) !== undefined ||
  (issue.issue._tag === "InvalidValue" && messageOf(issue.issue.annotations) === undefined)

const expectedMessage = (expected: string | undefined, got: () => string): string =>
  expected === undefined ? `invalid value, ${got()}` : `expected ${expected}, ${got()}`

const leafMessage = (issue: SchemaIssue.Leaf | SchemaIssue.Filter | SchemaIssue.AnyOf, got: () => string): string => {
  switch (issue._tag) {
    case "Filter": {
      const inner = issue.issue._tag === "InvalidValue" ? messageOf(issue.issue.annotations, "expected") : undefined
      return (
        messageOf(issue.filter.annotations) ??
        expectedMessage(inner ?? messageOf(issue.filter.annotations, "expected"), got)
      )
    }
    case "AnyOf":
    case "InvalidType":
      return messageOf(issue.ast.annotations) ?? `expected ${describe(issue.ast)}, ${got()}`
    case "OneOf":
      return messageOf(issue.ast.annotations) ?? `matches more than one of ${describe(issue.ast)}, ${got()}`
    case "InvalidValue":
      return messageOf(issue.annotations) ?? expectedMessage(messageOf(issue.annotations, "expected"), got)
    case "MissingKey":
      return messageOf(issue.annotations, "messageMissingKey") ?? "missing"
    case "UnexpectedKey":
      return messageOf(issue.ast.annotations, "messageUnexpectedKey") ?? "unexpected key"
    case "Forbidden":
      return messageOf(issue.annotations) ?? "forbidden operation"
  }
}

/** Walks the issue tree; each leaf becomes one `{ path, message }`. */
const collectIssues = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  root: unknown,
  out: Array<Issue>
): void => {
  switch (issue._tag) {
    case "Pointer":
      collectIssues(issue.issue, [...path, ...issue.path], root, out)
      break
    case "Composite":
      for (const inner of issue.issues) collectIssues(inner, path, root, out)
      break
    case "Encoding":
      collectIssues(issue.issue, path, root, out)
      break
    default: {
      if (issue._tag === "Filter" && !isFilterLeaf(issue)) {
        collectIssues(issue.issue, path, root, out)
      } else if (issue._tag === "AnyOf" && issue.issues.length === 1 && issue.issues[0] !== undefined) {
        // One candidate member was tried: its failure is the precise one.
        collectIssues(issue.issues[0], path, root, out)
      } else {
        out.push({ path: formatPath(path), message: leafMessage(issue, () => `got ${show(valueAt(root, path))}`) })
      }
    }
  }
}

const validationError = (action: string, issues: ReadonlyArray<Issue>): ValidationError =>
  new ValidationError({
    action,
    message: `Invalid arguments for ${action}: ${issues
      .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
      .join("; ")}`,
    issues: [...issues]
  })

const toValidationError = (action: string, issue: SchemaIssue.Issue, root: unknown): ValidationError => {
  const issues: Array<Issue> = []
  collectIssues(issue, [], root, issues)
  return validationError(action, issues)
}

// -----------------------------------------------------------------------------
// Public API
// -----------------------------------------------------------------------------

/**
 * Options of {@link decode}.
 *
 * - `action`: the name of the action being called; it goes into the
 *   `ValidationError` (`action` field and message).
 *
 * @since 0.1.0
 */
export interface DecodeOptions {
  readonly action: string
}

/**
 * Validates and converts raw arguments against an action's `parameters`
 * schema.
 *
 * `input` is what the caller or model sent: an object, or a string holding a
 * JSON object (decoded once). Anything else fails with one issue at path `""`,
 * `arguments must be an object, got …`. The input is coerced guided by the
 * schema's encoded side (`SchemaAST.toEncoded`), so a field declared
 * `Schema.NumberFromString` or `Schema.DateFromString` still receives its
 * string; then the user's schema decodes it with `errors: "all"`:
 *
 * - numbers: numeric strings trimmed and parsed (`" 42 "` → 42, `"1e3"` →
 *   1000); `""`, `"abc"`, `"NaN"`, `"Infinity"`, `"1e999"`, booleans and arrays
 *   are rejected; checks such as `Schema.Int` stay with the decoder, so `"3.5"`
 *   fails as `expected an integer, got "3.5"`;
 * - booleans: `"true"` / `"false"` in any case; nothing else (no truthiness);
 * - literals, `Schema.Literals`, `Schema.Enum`: exact, else the unique
 *   case-insensitive match (`"Celsius"` → `"celsius"`); ambiguous or partial
 *   matches are rejected;
 * - structs, records, tuples and arrays are walked element-wise; a JSON string
 *   where an object or array is expected is decoded once; undeclared keys are
 *   dropped (the decoder's default);
 * - unions (`Schema.NullOr`, `Schema.optional`, …): a value that already
 *   satisfies a member is left alone; otherwise a coercion is used only when
 *   one member's is unambiguous;
 * - `Schema.Unknown`, `Schema.Any`, declarations and strings are left alone;
 *   `Schema.suspend` (recursive schemas) is followed lazily.
 *
 * The caller's input is never mutated. The coercer and decoder are compiled
 * once per schema (cached by its AST), so a call is one walk plus the decode.
 *
 * Errors: `ValidationError` whose `issues` hold one `{ path, message }` per
 * failing leaf, `path` like `guests[1].age` (root `""`), message like
 * `missing` or `expected one of "celsius" | "fahrenheit", got "kelvin"`
 * (quoted values cut to 40 characters); its `message` reads
 * `Invalid arguments for <action>: guests[1].age: expected an integer, got "3.5"; name: missing`.
 *
 * Requires the schema's `DecodingServices` (none for plain schemas).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import * as Conversion from "@rolecraft/core/Conversion"
 *
 * const Parameters = Schema.Struct({
 *   id: Schema.Int,
 *   unit: Schema.Literals(["celsius", "fahrenheit"]),
 *   includeArchived: Schema.optionalKey(Schema.Boolean)
 * })
 *
 * const program = Conversion.decode(
 *   Parameters,
 *   { id: "1458", unit: "Celsius", includeArchived: "false" },
 *   { action: "getReading" }
 * )
 * // Effect.runSync(program) → { id: 1458, unit: "celsius", includeArchived: false }
 * ```
 *
 * @since 0.1.0
 */
export const decode = <S extends Schema.Top>(
  parameters: S,
  input: unknown,
  options: DecodeOptions
): Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]> => {
  // Decoded at once, not when run: a schema that decodes synchronously gives an `Exit`, and a success is
  // returned as it is, so the pipeline takes its value without a trip through the runtime (issue 8).
  const root = typeof input === "string" ? (jsonIn(input, "{") ?? input) : input
  if (!Predicate.isObject(root)) {
    return Effect.fail(
      validationError(options.action, [{ path: "", message: `arguments must be an object, got ${show(input)}` }])
    )
  }
  const compiled = compiledOf(parameters)
  const attempted = Result.try(() => compiled.decode(compiled.coerce(root)))
  // A throw while coercing or decoding is a defect, as it was when this ran inside `Effect.suspend`.
  if (Result.isFailure(attempted)) return Effect.die(attempted.failure)
  // The cache forgets the schema's type; the decoder was built from `parameters` itself.
  const decoded = attempted.success as Effect.Effect<S["Type"], SchemaIssue.Issue, S["DecodingServices"]>
  if (Exit.isExit(decoded) && Exit.isSuccess(decoded)) return decoded as Exit.Exit<S["Type"], never>
  return Effect.mapError(decoded, (issue) => toValidationError(options.action, issue, root))
}
