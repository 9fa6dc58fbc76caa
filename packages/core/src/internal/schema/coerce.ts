/**
 * Coercion: the repairs made to a caller's or a model's arguments before the
 * action's schema decodes them, compiled once per schema node from its
 * encoded side. Models send numbers and booleans as strings, objects as JSON
 * strings and enum values in the wrong case; a coercer repairs exactly these,
 * and nothing more:
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
 * - `null` for a property that may be absent and does not take `null`
 *   (`Schema.optionalKey(Schema.Int)`, an MCP tool's property left out of
 *   `required`) is an absent property: strict mode offers such a property
 *   to a model as required and nullable, so the model sends `null` for it;
 * - never boolean → number, `[]` → 0 or `""` → 0.
 *
 * A coercer never mutates its input and never fails: what it cannot repair
 * is left for the decoder to refuse.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaParser from "effect/SchemaParser"
import * as Lossless from "../lossless.ts"
import * as SchemaAST from "effect/SchemaAST"
import { setOwn } from "../json.ts"
import * as Predicate from "effect/Predicate"

/** Returns its input itself when nothing changed, a fresh value otherwise; never mutates. */
export type Coerce = (input: unknown) => unknown

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

// A number the JSON parser could not hold exactly (`Lossless.ts`): a decimal becomes its nearest double, an
// integer stays as it was sent, for the decoder to refuse naming its digits.
const coerceNumber: Coerce = (input) =>
  typeof input === "string"
    ? (parseNumber(input) ?? input)
    : Lossless.isExact(input)
      ? Lossless.isInteger(input)
        ? input
        : Number(Lossless.digits(input))
      : input

// A number given where a string is expected, that a double could not hold: its digits, exactly as sent.
const coerceString: Coerce = (input) => (Lossless.isExact(input) ? Lossless.digits(input) : input)

// A date-time without an offset is read in UTC, whatever the host's zone (`new Date` reads it in the host's):
// `2026-05-12T10:00:00` and `2026-05-12 10:00` are given a `Z`. A date alone is UTC already.
const offsetless = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/
const inUtc = (input: string): string => {
  const match = offsetless.exec(input.trim())
  return match === null ? input : `${match[1]}T${match[2]}Z`
}
const normaliseDateText: Coerce = (input) => (typeof input === "string" ? inUtc(input) : input)

/**
 * Where the encoded side is a value JSON cannot hold (a `Schema.Date`'s Date, a `Schema.BigDecimal`), it is offered
 * as the string of its JSON form: that string (or a number the JSON parser kept as its digits) is decoded here
 * by the node's own JSON codec — the step that matches what was offered — and a date-time without an offset is
 * read in UTC first. What the codec refuses is left for the decoder to refuse.
 */
const fromJsonForm = (ast: SchemaAST.AST): Coerce | undefined => {
  const codec = Result.try(() => Schema.toCodecJson(Schema.make<Schema.Top>(ast)))
  if (Result.isFailure(codec) || SchemaAST.toEncoded(codec.success.ast)._tag !== "String") return undefined
  // A declaration's JSON codec needs no services (Date, BigDecimal, DateTime): typed so at this one place.
  const decode = SchemaParser.decodeUnknownExit(codec.success as unknown as Schema.Codec<unknown, unknown>)
  const date = isDateType(ast)
  return (input) => {
    const text = typeof input === "string" ? input : Lossless.isExact(input) ? Lossless.digits(input) : undefined
    if (text === undefined) return input
    const decoded = Result.try(() => decode(date ? inUtc(text) : text))
    return Result.isSuccess(decoded) && decoded.success._tag === "Success" ? decoded.success.value : input
  }
}

// A `BigInt` is offered as a string of digits (its JSON form): that string, a safe integer, or an integer the
// JSON parser kept as its digits becomes the bigint, exactly.
const integerText = /^\s*-?\d+\s*$/
const coerceBigInt: Coerce = (input) => {
  if (typeof input === "string") return integerText.test(input) ? BigInt(input.trim()) : input
  if (typeof input === "number") return Number.isInteger(input) ? BigInt(input) : input
  return Lossless.isExact(input) && Lossless.isInteger(input) ? BigInt(Lossless.digits(input)) : input
}

/** Whether a schema node's type is a `Date` (`Schema.Date`, `Schema.DateFromString`, …) or a `DateTime.Utc`. */
export const isDateType = (ast: SchemaAST.AST): boolean => {
  if (ast._tag !== "Declaration") return false
  const id = (ast.annotations?.representation as { readonly id?: unknown } | undefined)?.id
  return id === "effect/schema/Date" || id === "effect/schema/DateTimeUtc"
}

const coerceBoolean: Coerce = (input) => (typeof input === "string" ? (parseBoolean(input) ?? input) : input)

/** Decodes a string once when it holds a JSON object (`open` = `{`) or array (`[`); `undefined` otherwise. */
export const jsonIn = (input: string, open: "{" | "["): unknown => {
  let start = 0
  while (start < input.length && /\s/.test(input.charAt(start))) start++
  if (input.charAt(start) !== open) return undefined
  const parsed = Lossless.parse(input)
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

/**
 * Whether `null` given for a property means the property is absent: it may be absent (an optional key) and
 * its schema does not take `null` itself. Strict mode shows a model every optional property as required and
 * nullable, so the model sends `null` for one it leaves out — and models send it without strict mode too.
 */
const nullIsAbsent = (property: SchemaAST.PropertySignature): boolean =>
  property.type.context?.isOptional === true && !guardOf(SchemaAST.toEncoded(property.type))(null)

const objectsCoercer = (ast: SchemaAST.Objects): Coerce => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return identity
  const names = new Set<PropertyKey>(ast.propertySignatures.map((property) => property.name))
  const properties: Array<readonly [string, Coerce]> = []
  const absentIfNull: Array<string> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") continue
    if (nullIsAbsent(property)) absentIfNull.push(property.name)
    const coerce = compile(property.type)
    if (coerce !== identity) properties.push([property.name, coerce])
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
    for (const name of absentIfNull) {
      if (Object.hasOwn(source, name) && source[name] === null) delete (out ??= { ...source })[name]
    }
    for (const [name, coerce] of properties) {
      if (!Object.hasOwn(source, name)) continue
      const value = source[name]
      if (value === null && out !== undefined && !Object.hasOwn(out, name)) continue
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

/** The members of a union, nested unions flattened. */
export const flattenUnion = (types: ReadonlyArray<SchemaAST.AST>): Array<SchemaAST.AST> =>
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
  const getCompiled = () =>
    (compiled ??= others.map((member) => ({ guard: guardOf(SchemaAST.toEncoded(member)), coerce: compile(member) })))
  // A date-time string for a member whose type is a date is read in UTC first.
  const dates = members.some(isDateType)
  const coerceUnion = unionOf(literalSet, coerceLiteral, getCompiled)
  return dates ? (input) => coerceUnion(normaliseDateText(input)) : coerceUnion
}

const unionOf =
  (
    literalSet: ReadonlySet<unknown>,
    coerceLiteral: Coerce,
    getCompiled: () => ReadonlyArray<{ readonly guard: Guard; readonly coerce: Coerce }>
  ): Coerce =>
  (input) => {
    {
      if (literalSet.has(input)) return input
      const candidates = getCompiled()
      // A value a member already takes still gets that member's own coercion (a nested date read in UTC); it is
      // otherwise the value itself.
      for (const candidate of candidates) if (candidate.guard(input)) return candidate.coerce(input)
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
  // A node with an encoding is coerced on its encoded side, a date's text read in UTC first.
  if (ast.encoding !== undefined) {
    const encoded = SchemaAST.toEncoded(ast)
    const coerce = compile(encoded)
    if (!isDateType(ast) || encoded._tag !== "String") return coerce
    return (input) => coerce(normaliseDateText(input))
  }
  if (ast._tag === "Declaration") return fromJsonForm(ast) ?? identity
  switch (ast._tag) {
    case "String":
      return coerceString
    case "BigInt":
      return coerceBigInt
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

/** The coercer of an encoded schema node, compiled on first use and cached. */
export function compile(ast: SchemaAST.AST): Coerce {
  let coerce = coercers.get(ast)
  if (coerce === undefined) {
    coerce = build(ast)
    coercers.set(ast, coerce)
  }
  return coerce
}
