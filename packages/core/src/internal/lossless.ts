/**
 * JSON parsed without losing a number: a number whose text a double cannot hold (an integer beyond 2^53, a
 * decimal with more digits than a double keeps, one beyond a double's range) is kept as the exact text the
 * sender wrote, as a raw JSON value (`JSON.rawJSON`), which `JSON.stringify` writes back digit for digit. The
 * argument coercion then gives a string parameter (a `BigInt`'s, a decimal's) those digits, a `Number`
 * parameter a decimal's nearest double, and leaves an integer for the decoder to refuse naming its digits —
 * never a rounded number. Reads the parser's source text (`JSON.parse` with a reviver's `context.source`).
 */
import * as Result from "effect/Result"
import { parseJson } from "./json.ts"

/** A number kept as its text: what `JSON.rawJSON` makes (a frozen object with a `rawJSON` field). */
export interface Exact {
  readonly rawJSON: string
}

// The engine's raw JSON functions (Node 21+), typed at this one boundary.
const json = JSON as unknown as {
  readonly rawJSON: (text: string) => Exact
  readonly isRawJSON: (value: unknown) => boolean
  readonly parse: (
    text: string,
    reviver: (key: string, value: unknown, context: { readonly source?: string }) => unknown
  ) => unknown
}

/** The significant digits of a decimal number's text: no sign, point, exponent, leading or trailing zeros. */
const significant = (text: string): string => {
  const mantissa = text.replace(/^[-+]/, "").split(/[eE]/)[0] ?? ""
  return mantissa.replace(".", "").replace(/^0+/, "").replace(/0+$/, "")
}

/** Whether a double holds the number written `source` exactly (an integer's every digit; a decimal's shortest form). */
const holds = (value: number, source: string): boolean => {
  if (!Number.isFinite(value)) return false
  if (Number.isSafeInteger(value)) return true
  if (/^-?\d+$/.test(source)) return BigInt(value) === BigInt(source)
  return significant(source) === significant(value.toExponential().replace(/e.*$/, ""))
}

const reviver = (_key: string, value: unknown, context: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && !holds(value, context.source)
    ? json.rawJSON(context.source)
    : value

/** Parses JSON text as `parseJson` does, keeping every number a double cannot hold as its text (see the module doc). */
export const parse = (text: string): Result.Result<unknown, string> => {
  // Numbers that fit are the common case: only text with a long run of digits needs the reviver.
  if (!/\d{16}|[eE][+-]?\d{3}/.test(text)) return parseJson(text)
  const parsed = parseJson(text)
  if (Result.isFailure(parsed)) return parsed
  return Result.succeed(json.parse(text, reviver))
}

/** Whether a value is a number kept as its text. */
export const isExact = (value: unknown): value is Exact =>
  typeof value === "object" && value !== null && json.isRawJSON(value)

/** The text of a number kept as its text. */
export const digits = (value: Exact): string => value.rawJSON

/** Whether a number kept as its text is an integer (no point, no exponent). */
export const isInteger = (value: Exact): boolean => /^-?\d+$/.test(value.rawJSON)
