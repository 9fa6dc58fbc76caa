/**
 * The input schema a served tool declares: the JSON Schema of its
 * parameters as a model is shown it (local `$ref`s inlined, every object
 * with `properties`), stated as JSON Schema 2020-12 (`$schema`), with every
 * struct closed (`additionalProperties: false` where Effect writes `true`
 * for a `Schema.Struct`; a record keeps its own), and, for an action that
 * needs approval, the optional `_approval_token` a client that can only
 * send arguments uses to present an approved token. None of this reaches a
 * model: a chat turn offers the unchanged projection.
 */
import { Approval, type LanguageModel } from "@rolecraft/core"

/** The dialect every served schema declares. */
export const dialect = "https://json-schema.org/draft/2020-12/schema"

const data: ReadonlySet<string> = new Set(["enum", "const", "default", "examples", "required"])
const maps: ReadonlySet<string> = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"])

const closeMap = (map: unknown): unknown =>
  typeof map === "object" && map !== null && !Array.isArray(map)
    ? Object.fromEntries(Object.entries(map).map(([name, schema]) => [name, close(schema)]))
    : map

const close = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(close)
  if (typeof node !== "object" || node === null) return node
  // Data keywords hold values, not schemas: copied as they are; a map's keys are names, not keywords.
  const out: Record<string, unknown> = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      data.has(key) ? value : maps.has(key) ? closeMap(value) : close(value)
    ])
  )
  if (out.additionalProperties === true && typeof out.properties === "object") out.additionalProperties = false
  return out
}

/** The served form of a tool's parameters. */
export const served = (
  parameters: LanguageModel.JsonSchemaObject,
  approval: { readonly reason: string } | undefined
): Record<string, unknown> => {
  const closed = close(parameters) as Record<string, unknown>
  if (approval === undefined) return { $schema: dialect, ...closed }
  const properties = (closed.properties ?? {}) as Record<string, unknown>
  return {
    $schema: dialect,
    ...closed,
    properties: {
      ...properties,
      [Approval.reservedParameter]: {
        type: "string",
        description: `An approved approval token for this call (the action needs approval: ${approval.reason}). Leave it out to be asked, or to get the pending token id to approve.`
      }
    }
  }
}
