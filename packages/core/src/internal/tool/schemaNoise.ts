/**
 * What the JSON Schema of a tool's parameters or a structured output leaves out because it costs a model tokens and
 * says nothing, or says what the arguments never are: Effect's non-finite branch of `Schema.Number`, an integer's
 * safe-integer bounds, `additionalProperties: true`. Each function takes one schema node (its children already
 * projected) and returns it, or a copy without the noise.
 */
import type * as JsonSchema from "effect/JsonSchema"
import { isPlainObject, setOwn } from "../json.ts"

/**
 * Keywords that cost a model tokens and say nothing, left out: an integer's bound that is only the safe-integer
 * range (what `Schema.Int` writes; the decoder still refuses an integer outside it, as VALIDATION naming the
 * field), and `additionalProperties: true` (what JSON Schema assumes without it).
 */
export const withoutNoise = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const integer = (Array.isArray(node.type) ? node.type : [node.type]).includes("integer")
  const noise = (keyword: string, value: unknown) =>
    (keyword === "additionalProperties" && value === true) ||
    (integer && keyword === "minimum" && value === Number.MIN_SAFE_INTEGER) ||
    (integer && keyword === "maximum" && value === Number.MAX_SAFE_INTEGER)
  if (!Object.entries(node).some(([keyword, value]) => noise(keyword, value))) return node
  const out: JsonSchema.JsonSchema = {}
  for (const [keyword, value] of Object.entries(node)) if (!noise(keyword, value)) setOwn(out, keyword, value)
  return out
}

const nonFiniteNames: ReadonlyArray<string> = ["Infinity", "-Infinity", "NaN"]

const isNonFiniteArtefact = (node: unknown): boolean =>
  isPlainObject(node) &&
  Object.keys(node).length === 2 &&
  node.type === "string" &&
  Array.isArray(node.enum) &&
  node.enum.length === nonFiniteNames.length &&
  nonFiniteNames.every((name) => (node.enum as ReadonlyArray<unknown>).includes(name))

// Effect encodes `Schema.Number` for JSON as "a number, or one of the strings
// Infinity, -Infinity, NaN". A model should only ever send finite numbers.
export const simplifyNumber = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  let out = node
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = out[keyword]
    if (!Array.isArray(branches)) continue
    const hasNumber = branches.some((branch) => isPlainObject(branch) && branch.type === "number")
    if (!hasNumber || !branches.some(isNonFiniteArtefact)) continue
    const kept = branches.filter((branch) => !isNonFiniteArtefact(branch))
    const { [keyword]: _, ...rest } = out
    const only = kept[0]
    const mergeable =
      kept.length === 1 && isPlainObject(only) && Object.keys(rest).every((key) => !Object.hasOwn(only, key))
    out = mergeable ? { ...only, ...rest } : { ...rest, [keyword]: kept }
  }
  return out
}
