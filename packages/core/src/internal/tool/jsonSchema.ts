/**
 * What a model is shown of a tool's parameters: an Effect Schema (an action's `parameters`) or an MCP
 * `inputSchema` projected into a JSON Schema every provider accepts — no `$ref` left, every object schema with
 * `properties`, the reserved approval parameter never listed, and OpenAI's strict form on request. Refuses,
 * as a {@link ToolSchemaIssue} naming the JSON path, what cannot be projected: a recursive schema, a remote or
 * dangling `$ref`, a root that is not an object, a schema too large once inlined, a record in strict mode.
 *
 * The projected schema is what the model is shown, never what the arguments are validated with: the
 * pipeline converts them against the action's own Schema.
 */
import * as JsonPointer from "effect/JsonPointer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as JsonSchema from "effect/JsonSchema"
import { reservedParameter as approvalTokenParameter } from "../../Approval.ts"
import type { JsonSchemaObject } from "../../LanguageModel.ts"
import { isPlainObject, setOwn } from "../json.ts"
import { withDateFormats } from "./jsonForm.ts"

/**
 * The parameters of a tool: an Effect Schema (an action's `parameters`) or a
 * JSON Schema object (an MCP tool's `inputSchema`).
 */
export type Parameters = Schema.Top | JsonSchema.JsonSchema

/**
 * Why a schema cannot be offered to a model: `path` is the dotted JSON path in
 * the projected schema where the problem is (`""` for the root, e.g.
 * `properties.children.items` for a recursive tree), `message` says why.
 *
 * A configuration error: an action's is found when its agent is made, never
 * at the first chat call; an MCP server's tool with one is left out of what
 * the model is offered.
 */
export class ToolSchemaIssue extends Schema.TaggedError<ToolSchemaIssue>()("ToolSchemaIssue", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * Projects parameters into the JSON Schema a model is shown.
 *
 * - An Effect Schema goes through `Schema.toJsonSchemaDocument` (the JSON
 *   form of its encoded side); a JSON Schema object (an MCP `inputSchema`) is
 *   taken as given.
 * - Every local `$ref` (`#/$defs/X`, `#/definitions/X`, or a pointer such as
 *   `#/properties/startLocation`) is inlined; keywords next to the `$ref`
 *   (`description`, `default`, `title`, …) are merged into the inlined node,
 *   winning over the target's (conflicting structural keywords are kept as
 *   `allOf: [target, siblings]` rather than dropped). `$defs`/`definitions`,
 *   `$schema`, `$id`, `$anchor` and `$comment` are removed.
 * - A recursive schema, a remote or dangling `$ref`, `$dynamicRef`, or a
 *   schema of more than 10,000 nodes once inlined (nested shared refs grow
 *   exponentially) fails with a {@link ToolSchemaIssue} naming the JSON path.
 * - Every object schema (`type: "object"`, or no `type` but `properties`)
 *   gets `properties` (`{}` when missing). The root must be an object
 *   schema; an empty one (`{}` or annotations only, and Effect's
 *   `{ not: { type: "null" } }` for `Schema.Struct({})`) becomes
 *   `{ type: "object", properties: {} }`.
 * - Effect's JSON artefact for `Schema.Number`, `anyOf: [{ type: "number" },
 *   { type: "string", enum: ["Infinity", "-Infinity", "NaN"] }]`, becomes
 *   `{ type: "number" }` (arguments never accept non-finite numbers anyway).
 *   Effect 4.1 itself drops the annotations and checks of a plain
 *   `Schema.Number` (its JSON codec adds a transformation), so describe a
 *   number with `Schema.Finite`/`Schema.Int` or on the key
 *   (`Schema.Number.annotateKey({ description })`); both descriptions are
 *   kept (key annotations, which Effect emits as `allOf: [{ description }]`,
 *   are merged into the node).
 * - Noise a model pays for and learns nothing from is left out: an
 *   integer's `minimum`/`maximum` that is only the safe-integer range (what
 *   `Schema.Int` writes; the decoder still refuses an integer outside it),
 *   and `additionalProperties: true` (JSON Schema's own default).
 * - The reserved `_approval_token` is removed from the root's `properties`
 *   and `required`.
 * - With `strict: true` (default `false`), per OpenAI strict mode: every object
 *   schema gets `type: "object"`, `additionalProperties: false`, and all its
 *   properties listed in `required`, the optional ones made nullable
 *   (`type: ["string", "null"]`, a `{ type: "null" }` branch in `anyOf`, or
 *   `anyOf: [schema, { type: "null" }]`). An object whose extra keys carry a
 *   schema (`Schema.Record`, `patternProperties`) cannot be strict and fails.
 *
 * Properties are never dropped silently. The input is not mutated.
 *
 * For example:
 * ```
 * import { Schema } from "effect"
 *
 * jsonSchema(Schema.Struct({ city: Schema.String }))
 * // Result.succeed({ type: "object", properties: { city: { type: "string" } },
 * //                  required: ["city"] })
 * jsonSchema({ type: "object" }) // Result.succeed({ type: "object", properties: {} })
 * ```
 */
export const jsonSchema = (
  parameters: Parameters,
  options?: { readonly strict?: boolean | undefined; readonly served?: boolean | undefined }
): Result.Result<JsonSchemaObject, ToolSchemaIssue> => {
  const strict = options?.strict ?? false
  const served = options?.served === true && !strict
  return Result.flatMap(documentOf(parameters), (document) => {
    // Only an Effect struct is closed: Effect writes every struct open; a JSON Schema says what it means.
    const close = served && Schema.isSchema(parameters)
    const context: Context = { document, strict, served, close, produced: { count: 0 } }
    const projected = Result.flatMap(walk(document, [], new Set([document]), context), (root) => toRoot(root, strict))
    return served ? Result.flatMap(projected, (root) => withDefinitions(root, document, context)) : projected
  })
}

/** The JSON Schema dialect a served schema declares. */
export const dialect = "https://json-schema.org/draft/2020-12/schema"

const isDefinitionRef = (ref: string): boolean => ref.startsWith("#/$defs/") && !ref.slice(8).includes("/")

// A served schema: `$schema`, and the `$defs` its kept `$ref`s point to, each projected like the root.
const withDefinitions = (
  root: JsonSchemaObject,
  document: JsonSchema.JsonSchema,
  context: Context
): Result.Result<JsonSchemaObject, ToolSchemaIssue> => {
  const defs = isPlainObject(document.$defs) ? Object.entries(document.$defs) : []
  const out: Record<string, unknown> = {}
  for (const [name, definition] of defs) {
    const walked = walkChild(definition, ["$defs", name], new Set(), context)
    if (Result.isFailure(walked)) return Result.fail(walked.failure)
    setOwn(out, name, walked.success)
  }
  const kept = defs.length === 0 ? {} : { $defs: out }
  return Result.succeed({ $schema: dialect, ...root, ...kept } as JsonSchemaObject)
}

const documentOf = (parameters: Parameters): Result.Result<JsonSchema.JsonSchema, ToolSchemaIssue> => {
  if (Schema.isSchema(parameters)) {
    return Result.try({
      try: () => {
        const document = Schema.toJsonSchemaDocument(parameters)
        return withDateFormats(parameters, { ...document.schema, $defs: document.definitions })
      },
      catch: (cause) =>
        issue(
          [],
          `the Effect schema has no JSON Schema form: ${cause instanceof Error ? cause.message : String(cause)}`
        )
    })
  }
  return isPlainObject(parameters)
    ? Result.succeed(parameters)
    : Result.fail(issue([], `expected a JSON Schema object, got ${describe(parameters)}`))
}

type Path = ReadonlyArray<string | number>

interface Context {
  readonly document: JsonSchema.JsonSchema
  readonly strict: boolean
  // Served to a protocol, not a model: `#/$defs/` refs kept, and (for an Effect schema) structs closed.
  readonly served: boolean
  readonly close: boolean
  // Schema nodes produced so far: shared `$ref`s nested in each other grow
  // exponentially when inlined, and an MCP server's schema is untrusted input.
  readonly produced: { count: number }
}

const maxNodes = 10_000

const formatPath = (path: Path): string =>
  path.reduce<string>(
    (out, segment) => (typeof segment === "number" ? `${out}[${segment}]` : out === "" ? segment : `${out}.${segment}`),
    ""
  )

const issue = (path: Path, message: string): ToolSchemaIssue =>
  new ToolSchemaIssue({
    path: formatPath(path),
    message: path.length === 0 ? `${message} (at the root)` : `${message} (at ${formatPath(path)})`
  })

const describe = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `a ${typeof u}`

// Keywords whose value is a schema, a map of schemas, or a list of schemas;
// everything else (enum, const, default, examples, required, …) is data.
const schemaKeywords: ReadonlySet<string> = new Set([
  "additionalProperties",
  "additionalItems",
  "unevaluatedProperties",
  "unevaluatedItems",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "contentSchema"
])
const schemaMapKeywords: ReadonlySet<string> = new Set(["properties", "patternProperties", "dependentSchemas"])
const schemaListKeywords: ReadonlySet<string> = new Set(["anyOf", "oneOf", "allOf", "prefixItems"])
const droppedKeywords: ReadonlySet<string> = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$dynamicAnchor",
  "$vocabulary",
  "$comment",
  "$defs",
  "definitions"
])
const annotationKeywords: ReadonlySet<string> = new Set([
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly"
])

type Node = JsonSchema.JsonSchema | boolean
type Walked = Result.Result<Node, ToolSchemaIssue>

// Dereferences, cleans and normalises one schema node. `ancestors` holds the
// source nodes being expanded on the current path (the node itself included):
// a `$ref` or a child that leads back to one of them is a cycle.
const walk = (node: unknown, path: Path, ancestors: Set<unknown>, context: Context): Walked => {
  if (typeof node === "boolean") return Result.succeed(node)
  if (!isPlainObject(node)) return Result.fail(issue(path, `expected a schema, got ${describe(node)}`))
  if (++context.produced.count > maxNodes) {
    return Result.fail(issue(path, `the schema has more than ${maxNodes} nodes once its references are inlined`))
  }
  if (typeof node.$ref === "string") {
    return context.served && isDefinitionRef(node.$ref)
      ? keep(node, node.$ref, path, ancestors, context)
      : inline(node, node.$ref, path, ancestors, context)
  }
  if (node.$ref !== undefined) return Result.fail(issue(path, "`$ref` must be a string"))
  for (const keyword of ["$dynamicRef", "$recursiveRef"]) {
    if (node[keyword] !== undefined) return Result.fail(issue(path, `\`${keyword}\` is not supported`))
  }
  const out: JsonSchema.JsonSchema = {}
  for (const [keyword, value] of Object.entries(node)) {
    if (droppedKeywords.has(keyword)) continue
    const walked = walkKeyword(keyword, value, path, ancestors, context)
    if (Result.isFailure(walked)) return Result.fail(walked.failure)
    if (walked.success !== undefined) setOwn(out, keyword, walked.success)
  }
  const normalised = normaliseObject(simplifyNumber(flattenAnnotations(out)), path, context.strict)
  return Result.map(normalised, (node) => withoutNoise(context.close ? close(node) : node))
}

/**
 * Keywords that cost a model tokens and say nothing, left out: an integer's bound that is only the safe-integer
 * range (what `Schema.Int` writes; the decoder still refuses an integer outside it, as VALIDATION naming the
 * field), and `additionalProperties: true` (what JSON Schema assumes without it).
 */
const withoutNoise = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const integer = typesOf(node).includes("integer")
  const noise = (keyword: string, value: unknown) =>
    (keyword === "additionalProperties" && value === true) ||
    (integer && keyword === "minimum" && value === Number.MIN_SAFE_INTEGER) ||
    (integer && keyword === "maximum" && value === Number.MAX_SAFE_INTEGER)
  if (!Object.entries(node).some(([keyword, value]) => noise(keyword, value))) return node
  const out: JsonSchema.JsonSchema = {}
  for (const [keyword, value] of Object.entries(node)) if (!noise(keyword, value)) setOwn(out, keyword, value)
  return out
}

// A struct as Effect writes it (`additionalProperties: true` next to `properties`) closed; a record keeps its own.
const close = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema =>
  node.additionalProperties === true && isPlainObject(node.properties) ? { ...node, additionalProperties: false } : node

// A `#/$defs/X` reference kept as it is (its target is projected once, under `$defs`), its siblings projected.
const keep = (
  node: Record<string, unknown>,
  ref: string,
  path: Path,
  ancestors: Set<unknown>,
  context: Context
): Walked => {
  if (resolvePointer(context.document, ref) === undefined) {
    return Result.fail(issue(path, `\`$ref\` "${ref}" points to nothing`))
  }
  const { $ref: _, ...rest } = node
  if (Object.keys(rest).length === 0) return Result.succeed({ $ref: ref })
  return Result.map(walk(rest, path, ancestors, context), (siblings) =>
    typeof siblings === "boolean" ? { $ref: ref } : { ...siblings, $ref: ref }
  )
}

const walkChild = (child: unknown, path: Path, ancestors: Set<unknown>, context: Context): Walked => {
  if (ancestors.has(child)) return Result.fail(issue(path, "the schema is recursive"))
  ancestors.add(child)
  const walked = walk(child, path, ancestors, context)
  ancestors.delete(child)
  return walked
}

const walkKeyword = (
  keyword: string,
  value: unknown,
  path: Path,
  ancestors: Set<unknown>,
  context: Context
): Result.Result<unknown, ToolSchemaIssue> => {
  const at = [...path, keyword]
  if (schemaKeywords.has(keyword)) return walkChild(value, at, ancestors, context)
  if (schemaListKeywords.has(keyword) || (keyword === "items" && Array.isArray(value))) {
    if (!Array.isArray(value)) return Result.fail(issue(at, `\`${keyword}\` must be an array of schemas`))
    const out: Array<Node> = []
    for (const [index, child] of value.entries()) {
      const walked = walkChild(child, [...at, index], ancestors, context)
      if (Result.isFailure(walked)) return walked
      out.push(walked.success)
    }
    return Result.succeed(out)
  }
  if (keyword === "items") return walkChild(value, at, ancestors, context)
  if (schemaMapKeywords.has(keyword) || (keyword === "dependencies" && isPlainObject(value))) {
    // Some servers send `properties: null`: no properties at all.
    if (value === null) return Result.succeed(undefined)
    if (!isPlainObject(value)) return Result.fail(issue(at, `\`${keyword}\` must be an object of schemas`))
    const out: Record<string, unknown> = {}
    for (const [name, child] of Object.entries(value)) {
      // Draft-07 `dependencies` maps a name to a schema or to a list of names.
      if (keyword === "dependencies" && Array.isArray(child)) {
        setOwn(out, name, child)
        continue
      }
      const walked = walkChild(child, [...at, name], ancestors, context)
      if (Result.isFailure(walked)) return walked
      setOwn(out, name, walked.success)
    }
    return Result.succeed(out)
  }
  return Result.succeed(value)
}

const resolvePointer = (document: unknown, ref: string): unknown => {
  const tokens = JsonPointer.parseUriFragment(ref)
  if (tokens === undefined) return undefined
  let current: unknown = document
  for (const token of tokens) {
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(token)) current = current[Number(token)]
    else if (isPlainObject(current) && Object.hasOwn(current, token)) current = current[token]
    else return undefined
  }
  return current
}

const inline = (
  node: Record<string, unknown>,
  ref: string,
  path: Path,
  ancestors: Set<unknown>,
  context: Context
): Walked => {
  if (!ref.startsWith("#")) return Result.fail(issue(path, `\`$ref\` "${ref}" is not a local reference`))
  const target = resolvePointer(context.document, ref)
  if (target === undefined) return Result.fail(issue(path, `\`$ref\` "${ref}" points to nothing`))
  if (ancestors.has(target)) return Result.fail(issue(path, `the schema is recursive: "${ref}" refers to itself`))
  ancestors.add(target)
  const inlined = walk(target, path, ancestors, context)
  ancestors.delete(target)
  if (Result.isFailure(inlined)) return inlined
  const { $ref: _, ...rest } = node
  if (Object.keys(rest).length === 0) return inlined
  const siblings = walk(rest, path, ancestors, context)
  if (Result.isFailure(siblings)) return siblings
  return Result.succeed(mergeSiblings(inlined.success, siblings.success))
}

// `{ $ref, ...siblings }` means "the target and the siblings": annotations next
// to the `$ref` describe this use and win; structural keywords are merged when
// they do not clash, and otherwise kept side by side under `allOf`.
const mergeSiblings = (target: Node, siblings: Node): Node => {
  if (target === false || typeof siblings === "boolean") return target === true ? siblings : target
  if (target === true) return siblings
  const annotations: JsonSchema.JsonSchema = {}
  const structural: JsonSchema.JsonSchema = {}
  for (const [keyword, value] of Object.entries(siblings)) {
    setOwn(annotationKeywords.has(keyword) ? annotations : structural, keyword, value)
  }
  const clash = Object.entries(structural).some(
    ([keyword, value]) => Object.hasOwn(target, keyword) && !equalJson(target[keyword], value)
  )
  return clash ? { allOf: [target, structural], ...annotations } : { ...target, ...structural, ...annotations }
}

const equalJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equalJson(x, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equalJson(a[key], b[key]))
    )
  }
  return false
}

const isAnnotationsOnly = (node: unknown): node is JsonSchema.JsonSchema =>
  isPlainObject(node) && Object.keys(node).every((keyword) => annotationKeywords.has(keyword))

// Effect puts key annotations (`Schema.Number.annotateKey({ description })`)
// in `allOf: [{ description }]`; such members are merged into the node itself.
const flattenAnnotations = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const members = node.allOf
  if (!Array.isArray(members) || !members.some(isAnnotationsOnly)) return node
  const { allOf: _, ...rest } = node
  const kept = members.filter((member) => !isAnnotationsOnly(member))
  const annotations = Object.assign({}, ...members.filter(isAnnotationsOnly))
  return kept.length === 0 ? { ...rest, ...annotations } : { ...rest, ...annotations, allOf: kept }
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
const simplifyNumber = (node: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
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

const typesOf = (node: JsonSchema.JsonSchema): ReadonlyArray<unknown> =>
  Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]

const isObjectSchema = (node: JsonSchema.JsonSchema): boolean =>
  typesOf(node).includes("object") || (node.type === undefined && node.properties !== undefined)

const isNullable = (node: Node): boolean => {
  if (typeof node === "boolean") return node
  if (typesOf(node).includes("null")) return true
  return ["anyOf", "oneOf"].some((keyword) => {
    const branches = node[keyword]
    return Array.isArray(branches) && branches.some((branch) => isNullable(branch))
  })
}

const nullable = (node: Node): Node => {
  if (isNullable(node)) return node
  if (typeof node === "boolean") return node
  const enumValues = Array.isArray(node.enum) ? { enum: [...node.enum, null] } : {}
  if (node.type !== undefined && node.const === undefined) {
    return { ...node, type: [...typesOf(node), "null"], ...enumValues }
  }
  if (Array.isArray(node.anyOf) && node.const === undefined && node.enum === undefined) {
    return { ...node, anyOf: [...node.anyOf, { type: "null" }] }
  }
  const annotations: JsonSchema.JsonSchema = {}
  const rest: JsonSchema.JsonSchema = {}
  for (const [keyword, value] of Object.entries(node))
    setOwn(annotationKeywords.has(keyword) ? annotations : rest, keyword, value)
  return { ...annotations, anyOf: [rest, { type: "null" }] }
}

// Whether extra keys of an object carry a schema of their own (a record).
const hasKeySchema = (node: JsonSchema.JsonSchema): boolean =>
  node.patternProperties !== undefined ||
  (isPlainObject(node.additionalProperties) && Object.keys(node.additionalProperties).length > 0)

const normaliseObject = (
  node: JsonSchema.JsonSchema,
  path: Path,
  strict: boolean
): Result.Result<JsonSchema.JsonSchema, ToolSchemaIssue> => {
  if (!isObjectSchema(node)) return Result.succeed(node)
  const properties: Record<string, Node> = isPlainObject(node.properties)
    ? (node.properties as Record<string, Node>)
    : {}
  if (!strict) return Result.succeed(node.properties === undefined ? { ...node, properties } : node)
  if (hasKeySchema(node)) {
    return Result.fail(
      issue(path, "strict mode cannot express an object whose extra keys carry a schema (a record); use strict: false")
    )
  }
  const required = new Set(Array.isArray(node.required) ? node.required : [])
  const strictProperties: Record<string, Node> = {}
  for (const [name, property] of Object.entries(properties)) {
    setOwn(strictProperties, name, required.has(name) ? property : nullable(property))
  }
  return Result.succeed({
    ...node,
    type: typesOf(node).length === 0 ? "object" : node.type,
    properties: strictProperties,
    required: Object.keys(properties),
    additionalProperties: false
  })
}

// The root of a tool's parameters must be an object schema without the
// reserved approval parameter.
const toRoot = (root: Node, strict: boolean): Result.Result<JsonSchemaObject, ToolSchemaIssue> => {
  const node: JsonSchema.JsonSchema = root === true ? {} : root === false ? { not: {} } : root
  const structural = Object.keys(node).filter((keyword) => !annotationKeywords.has(keyword))
  const empty =
    structural.length === 0 ||
    (structural.length === 1 && isPlainObject(node.not) && equalJson(node.not, { type: "null" }))
  const types = typesOf(node)
  if (!empty && !isObjectSchema(node)) {
    const got = types.length > 0 ? `type ${JSON.stringify(node.type)}` : `keywords ${structural.join(", ")}`
    return Result.fail(issue([], `tool parameters must be an object schema, got ${got}`))
  }
  const base: JsonSchema.JsonSchema = empty
    ? Object.fromEntries(Object.entries(node).filter(([keyword]) => annotationKeywords.has(keyword)))
    : node
  return Result.map(normaliseObject({ ...base, type: "object" }, [], strict), (object) => {
    const { [approvalTokenParameter]: _, ...properties } = isPlainObject(object.properties) ? object.properties : {}
    const out: JsonSchema.JsonSchema = { ...object, type: "object", properties }
    if (Array.isArray(object.required)) {
      out.required = object.required.filter((name) => name !== approvalTokenParameter)
    }
    // One boundary cast: `out` was just given `type: "object"` and `properties`.
    return out as unknown as JsonSchemaObject
  })
}
