/**
 * An MCP tool's JSON Schema `inputSchema` turned into an Effect schema that
 * `Conversion.decode` applies the same rules to as to a local action's
 * `parameters`. Loaded by the first mcpTool call, not at import: Effect's
 * JSON Schema importer is large.
 */
import * as JsonSchema from "effect/JsonSchema"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaRepresentation from "effect/SchemaRepresentation"
import { setOwn } from "../json.ts"

/** Keywords Effect's importer rejects; dropping one only loosens local validation (the server still validates). */
const UNSUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  "$dynamicRef",
  "$dynamicAnchor",
  "contains",
  "minContains",
  "maxContains",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "unevaluatedItems",
  "unevaluatedProperties",
  "if",
  "then",
  "else",
  "not"
])

const isStructured = (value: unknown): boolean => typeof value === "object" && value !== null

const LOCAL_DEFINITION = /^#\/\$defs\/([^/]+)$/

/**
 * The nodes that take part in an intersection (`allOf`, or `$ref` beside
 * `properties`), with the members, branches and definitions they reach.
 * Closing one of them would make the intersection reject the keys the other
 * side declares, so they stay open.
 */
const intersectedNodes = (document: JsonSchema.Document<"draft-2020-12">): ReadonlySet<object> => {
  const open = new Set<object>()
  const markOpen = (node: unknown): void => {
    if (!Predicate.isObject(node) || open.has(node)) return
    open.add(node)
    const reference = typeof node.$ref === "string" ? LOCAL_DEFINITION.exec(node.$ref)?.[1] : undefined
    if (reference !== undefined) {
      const name = reference.replaceAll("~1", "/").replaceAll("~0", "~")
      if (Object.hasOwn(document.definitions, name)) markOpen(document.definitions[name])
    }
    for (const key of ["allOf", "anyOf", "oneOf"]) {
      const members = node[key]
      if (Array.isArray(members)) for (const member of members) markOpen(member)
    }
  }
  const seen = new Set<object>()
  const visit = (value: unknown): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return
    seen.add(value)
    if (
      Predicate.isObject(value) &&
      (Array.isArray(value.allOf) || (value.$ref !== undefined && Predicate.isObject(value.properties)))
    ) {
      markOpen(value)
    }
    for (const inner of Object.values(value)) visit(inner)
  }
  visit(document.schema)
  visit(document.definitions)
  return open
}

/**
 * Rewrites one JSON Schema node before Effect imports it: drops unsupported
 * keywords, non-local `$ref`s and structured `const`/`enum` values (each then
 * accepts any JSON value), reads OpenAPI's `nullable` and `not: { type:
 * "null" }` (as the other types), and closes objects that
 * declare properties so undeclared keys are dropped, unless
 * the node takes part in an intersection.
 */
const sanitizer =
  (open: ReadonlySet<object>) =>
  (schema: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
    const out: JsonSchema.JsonSchema = {}
    let notNull = false
    for (const [key, value] of Object.entries(schema)) {
      if (key === "not" && isNullType(value)) {
        notNull = true
        continue
      }
      if (
        UNSUPPORTED_KEYWORDS.has(key) &&
        !(key === "not" && Predicate.isObject(value) && Object.keys(value).length === 0)
      )
        continue
      if (key === "$ref" && (typeof value !== "string" || !value.startsWith("#/$defs/"))) continue
      if (key === "const" && isStructured(value)) continue
      if (key === "enum" && (!Array.isArray(value) || value.some(isStructured))) continue
      if (key === "nullable") continue
      setOwn(out, key, value)
    }
    if (schema.nullable === true && typeof schema.type === "string") out.type = [schema.type, "null"]
    // `not: { type: "null" }` (Effect's own form of "any value but null") said as the types it leaves.
    if (notNull) out.type = withoutNull(out.type)
    const properties = schema.properties
    if (Predicate.isObject(properties) && Object.keys(properties).length > 0) {
      if (out.type === undefined) out.type = "object"
      if (
        !open.has(schema) &&
        (out.additionalProperties === undefined || out.additionalProperties === true) &&
        out.patternProperties === undefined
      ) {
        out.additionalProperties = false
      }
    }
    return out
  }

const isNullType = (value: unknown): boolean =>
  Predicate.isObject(value) && value.type === "null" && Object.keys(value).length === 1

const nonNullTypes: ReadonlyArray<string> = ["string", "number", "boolean", "object", "array"]

/** The JSON types of `type` but `null` (every type but `null` when `type` says none). */
const withoutNull = (type: unknown): string | ReadonlyArray<string> => {
  if (typeof type === "string") return type === "null" ? [] : type
  return Array.isArray(type) ? type.filter((name) => name !== "null") : nonNullTypes
}

const DRAFT_07_OR_OLDER = /draft-0[4-7]/

const toDocument = (jsonSchema: JsonSchema.JsonSchema): JsonSchema.Document<"draft-2020-12"> => {
  const $schema = jsonSchema.$schema
  const older = typeof $schema === "string" ? DRAFT_07_OR_OLDER.test($schema) : jsonSchema.definitions !== undefined
  if (!older) return JsonSchema.fromSchemaDraft2020_12(jsonSchema)
  const converted = Result.try(() => JsonSchema.fromSchemaDraft07(jsonSchema))
  return Result.isSuccess(converted) ? converted.success : JsonSchema.fromSchemaDraft2020_12(jsonSchema)
}

const importSchema = (
  document: JsonSchema.Document<"draft-2020-12">,
  open: ReadonlySet<object>
): Schema.Top | undefined => {
  // Effect's importer throws on constructs it cannot express; that is a value here, not a defect.
  const imported = Result.try(() =>
    SchemaRepresentation.fromJsonSchemaDocument(document, { onEnter: sanitizer(open), patterns: "ignore" })
  )
  return Result.isSuccess(imported) ? imported.success : undefined
}

const isObjectSchema = (ast: SchemaAST.AST, depth = 0): boolean => {
  if (depth > 8) return false
  switch (ast._tag) {
    case "Objects":
      return true
    case "Union":
      return ast.types.every((type) => isObjectSchema(type, depth + 1))
    case "Suspend":
      return isObjectSchema(ast.thunk(), depth + 1)
    default:
      return false
  }
}

const OpenObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The schema of any arguments object, as {@link fromJsonSchema} returns it.
 *
 * @since 0.1.0
 */
export type Arguments = Schema.Codec<{ readonly [key: string]: unknown }, { readonly [key: string]: unknown }>

const fromJsonSchemaCache = new WeakMap<object, Arguments>()

const toArguments = (schema: Schema.Top): Arguments =>
  // The root was checked to be an object schema (or is the open record).
  Schema.make<Arguments>(schema.ast)

/**
 * Builds an Effect schema (a codec) from a JSON Schema object, as MCP servers
 * send for a tool's `inputSchema`, so MCP tool arguments go through
 * `Conversion.decode` with the same rules as local actions.
 *
 * The translation is Effect's own `SchemaRepresentation.fromJsonSchemaDocument`
 * (draft 2020-12; draft-07/06/04 documents, recognised by `$schema` or a root
 * `definitions`, are first converted with `JsonSchema.fromSchemaDraft07`). It
 * covers objects with `properties`/`required` (optional keys for the others),
 * arrays and tuples, `enum`/`const`, `integer` (`Schema.Int`), `number`
 * (finite), `boolean`, `string`, `anyOf`/`oneOf`/`allOf`, nullable types
 * (`type: ["string", "null"]`, OpenAPI's `nullable: true`) and local
 * `$ref`/`$defs` (recursion included), with numeric and length bounds.
 *
 * Choices and defaults:
 * - an object that declares `properties` is closed, so undeclared keys are
 *   dropped; one without (`{"type":"object"}`) accepts any
 *   keys and keeps them; an explicit `additionalProperties` schema is kept;
 *   objects that take part in an `allOf` (or a `$ref` beside `properties`)
 *   stay open, so each side accepts the other's keys, and keep unknown keys;
 * - `pattern`/`patternProperties` are ignored (a server's regular expression
 *   could block validation; the server still validates);
 * - unsupported constructs (`if`/`then`/`else`, `not`, `contains`,
 *   `dependent*`, `unevaluated*`, `$dynamicRef`, non-local `$ref`, object or
 *   array `const`/`enum`) accept any JSON value instead of failing; if the
 *   whole document still cannot be imported, each top-level property is
 *   imported on its own, and a property that fails accepts any value;
 * - a root that is not an object schema (or not a JSON object at all) becomes
 *   an open object (`Schema.Record(Schema.String, Schema.Unknown)`).
 *
 * Never throws. Results are cached by the JSON Schema object's identity.
 *
 * For example:
 * ```
 * import { Effect } from "effect"
 * import * as Conversion from "./decode.ts"
 * import { fromJsonSchema } from "./fromJsonSchema.ts"
 *
 * const inputSchema = {
 *   type: "object",
 *   properties: { id: { type: "integer" }, unit: { enum: ["celsius", "fahrenheit"] } },
 *   required: ["id"]
 * }
 * const program = Conversion.decode(fromJsonSchema(inputSchema), { id: "7" }, { action: "weather" })
 * // Effect.runSync(program) → { id: 7 }
 * ```
 *
 * @since 0.1.0
 */
export const fromJsonSchema = (jsonSchema: unknown): Arguments => {
  if (!Predicate.isObject(jsonSchema)) return toArguments(OpenObject)
  const cached = fromJsonSchemaCache.get(jsonSchema)
  if (cached !== undefined) return cached
  const document = toDocument(jsonSchema)
  const open = intersectedNodes(document)
  let schema = importSchema(document, open)
  if (schema === undefined && Predicate.isObject(document.schema.properties)) {
    const required = new Set(Array.isArray(document.schema.required) ? document.schema.required : [])
    const fields: Record<string, Schema.Top> = {}
    for (const [name, property] of Object.entries(document.schema.properties)) {
      const field =
        (Predicate.isObject(property) ? importSchema({ ...document, schema: property }, open) : undefined) ??
        Schema.Unknown
      setOwn(fields, name, required.has(name) ? field : Schema.optionalKey(field))
    }
    schema = Schema.Struct(fields)
  }
  const result = toArguments(
    schema !== undefined && isObjectSchema(SchemaAST.toEncoded(schema.ast)) ? schema : OpenObject
  )
  fromJsonSchemaCache.set(jsonSchema, result)
  return result
}
