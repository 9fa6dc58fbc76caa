/**
 * What an Effect schema's values JSON cannot hold are offered as: a `Schema.Date` (or `DateFromString`) as the
 * string its decoding reads, `format: "date-time"` (an ISO 8601 instant; one without an offset is read in UTC),
 * and a `Schema.BigDecimal` as its decimal text (`pattern`). Effect writes both as a plain string; the places
 * are found in a second document that keeps Effect's `expected` annotations (the JSON form of a Date says so
 * there), and only a plain string at the same place in the offered document gets the keyword. Only for schemas
 * that mention such a value.
 */
import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

const expectedOf = (schema: Schema.Top) => SchemaAST.toEncoded(Schema.toCodecJson(schema).ast).annotations?.expected
const dateExpected = expectedOf(Schema.Date)
// A BigDecimal likewise: offered as the decimal text its decoding reads.
const decimalExpected = expectedOf(Schema.BigDecimal)
const decimalPattern = "^-?\\d+(\\.\\d+)?$"

const datePlaces = (node: unknown, path: Array<string>, out: Array<ReadonlyArray<string>>, depth = 0): void => {
  if (depth > 1_000 || typeof node !== "object" || node === null) return
  const record = node as Record<string, unknown>
  if ((record.expected === dateExpected || record.expected === decimalExpected) && record.type === "string")
    out.push([record.expected === dateExpected ? "date" : "decimal", ...path])
  for (const [key, value] of Object.entries(record)) {
    path.push(key)
    datePlaces(value, path, out, depth + 1)
    path.pop()
  }
}

/** `document` (the plain projection of `parameters`) with its dates' and decimals' formats. */
export const withDateFormats = (parameters: Schema.Top, document: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  if (dateExpected === undefined) return document
  const annotated = Schema.toJsonSchemaDocument(parameters, { includeAnnotationKey: (key) => key === "expected" })
  const places: Array<ReadonlyArray<string>> = []
  datePlaces({ ...annotated.schema, $defs: annotated.definitions }, [], places)
  if (places.length === 0) return document
  const copy = structuredClone(document) as Record<string, unknown>
  for (const [kind, ...place] of places) {
    let node: unknown = copy
    for (const key of place)
      node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined
    if (typeof node !== "object" || node === null) continue
    const target = node as Record<string, unknown>
    if (target.type !== "string" || target.format !== undefined || target.pattern !== undefined) continue
    if (kind === "date") target.format = "date-time"
    else target.pattern = decimalPattern
  }
  return copy as JsonSchema.JsonSchema
}
