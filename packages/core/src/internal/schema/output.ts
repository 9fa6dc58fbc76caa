/**
 * Structured output: the JSON Schema a model's reply is asked to match (sent
 * as the OpenAI API's `response_format: json_schema`), projected from an
 * Effect Schema the way tool parameters are, strict when the projection
 * allows; and the candidate value a reply's JSON gives for decoding.
 *
 * Two rewritings are undone before decoding, so that whatever the offered
 * schema accepts the decoder accepts too:
 *
 * - strict mode lists every property in `required` and makes the optional
 *   ones nullable: a `null` where the schema itself does not accept one is
 *   an absent key;
 * - a schema whose root is not an object (OpenAI asks for an object root) is
 *   offered as `{ value: <schema> }`, and the reply's `value` is the answer.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as LanguageModel from "../../LanguageModel.ts"
import * as JsonSchema from "../tool/jsonSchema.ts"
import { modelName } from "../tool/naming.ts"

type Node = LanguageModel.JsonSchemaObject | Readonly<Record<string, unknown>> | boolean

/** What a reply is asked to match, and how its JSON is read back. */
export interface Output {
  /** The response format sent with the request. */
  readonly format: LanguageModel.ResponseFormat
  /** The schema offered as `{ value: schema }` (its root is not an object). */
  readonly wrapped: boolean
  /** The projection without strict rewriting: which properties are truly optional. */
  readonly loose: LanguageModel.JsonSchemaObject
}

const wrappedKey = "value"

/**
 * The structured output of `schema`, named `name` (made valid for the API).
 * Strict when the strict projection succeeds (it fails for records); a
 * schema with no JSON Schema form fails with the projection's issue.
 */
export const make = (
  schema: Schema.Top,
  name: string,
  description?: string | undefined
): Result.Result<Output, JsonSchema.ToolSchemaIssue> => {
  const direct = JsonSchema.jsonSchema(schema)
  const wrapped = Result.isFailure(direct)
  const target: Schema.Top = wrapped ? Schema.Struct({ [wrappedKey]: schema }) : schema
  const loose = wrapped ? JsonSchema.jsonSchema(target) : direct
  if (Result.isFailure(loose)) return Result.fail(loose.failure)
  const strict = JsonSchema.jsonSchema(target, { strict: true })
  return Result.succeed({
    format: {
      name: modelName(name),
      schema: Result.isSuccess(strict) ? strict.success : loose.success,
      strict: Result.isSuccess(strict),
      ...(description === undefined ? {} : { description })
    },
    wrapped,
    loose: loose.success
  })
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Whether a schema node accepts `null` (so a `null` there is a value, not an absent key). */
const acceptsNull = (node: Node | undefined): boolean => {
  if (node === undefined || node === true) return true
  if (node === false) return false
  const keys = Object.keys(node).filter((key) => key !== "description" && key !== "title")
  if (keys.length === 0) return true
  const type = node.type
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true
  if ("const" in node && node.const === null) return true
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword]
    if (Array.isArray(branches) && branches.some((branch) => acceptsNull(branch as Node))) return true
  }
  return false
}

/** The object branches of a union node, or the node itself when it describes an object. */
const objectNodeOf = (node: Node | undefined): Readonly<Record<string, unknown>> | undefined => {
  if (!isRecord(node)) return undefined
  if (isRecord(node.properties)) return node
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword]
    if (!Array.isArray(branches)) continue
    const objects = branches.filter((branch) => isRecord(branch) && isRecord(branch.properties))
    if (objects.length === 1) return objects[0] as Readonly<Record<string, unknown>>
  }
  return undefined
}

const arrayItemsOf = (node: Node | undefined): Node | undefined => {
  if (!isRecord(node)) return undefined
  if (isRecord(node.items) || typeof node.items === "boolean") return node.items as Node
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword]
    if (!Array.isArray(branches)) continue
    const arrays = branches.filter((branch) => isRecord(branch) && branch.items !== undefined)
    if (arrays.length === 1) return (arrays[0] as Readonly<Record<string, unknown>>).items as Node
  }
  return undefined
}

/** Drops the `null`s strict mode allowed for optional properties, following the loose projection. */
const withoutAddedNulls = (value: unknown, node: Node | undefined): unknown => {
  if (Array.isArray(value)) {
    const items = arrayItemsOf(node)
    return items === undefined ? value : value.map((item) => withoutAddedNulls(item, items))
  }
  if (!isRecord(value)) return value
  const object = objectNodeOf(node)
  if (object === undefined) return value
  const properties = object.properties as Readonly<Record<string, Node>>
  const required = new Set(Array.isArray(object.required) ? (object.required as ReadonlyArray<string>) : [])
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined
    if (item === null && property !== undefined && !required.has(key) && !acceptsNull(property)) continue
    Object.defineProperty(out, key, {
      value: property === undefined ? item : withoutAddedNulls(item, property),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return out
}

/**
 * The value to decode from a reply's JSON: `null`s that strict mode added
 * for optional properties removed, and the `value` of a wrapped schema taken
 * out (a reply that is not such an object is taken as the value itself).
 */
export const candidateOf = (output: Output, json: unknown): unknown => {
  const cleaned = withoutAddedNulls(json, output.loose)
  if (!output.wrapped) return cleaned
  return isRecord(cleaned) && Object.hasOwn(cleaned, wrappedKey) ? cleaned[wrappedKey] : cleaned
}
