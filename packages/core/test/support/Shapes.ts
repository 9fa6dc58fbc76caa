/**
 * Generated schemas for property tests: a `Shape` (strings, integers, finite numbers, booleans, literals,
 * arrays, nullable values, records and structs with optional fields, nested), the Effect Schema it stands for,
 * and values a JSON Schema accepts (the subset the tool and output projections emit) — so a test can ask
 * "is every value the offered schema accepts accepted back?".
 */
import { Schema } from "effect"
import * as fc from "fast-check"

export type Shape =
  | { readonly kind: "string" | "int" | "finite" | "boolean" }
  | { readonly kind: "literals"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "array"; readonly item: Shape }
  | { readonly kind: "nullOr"; readonly inner: Shape }
  | { readonly kind: "record"; readonly value: Shape }
  | {
      readonly kind: "struct"
      readonly fields: ReadonlyArray<readonly [name: string, shape: Shape, optional: boolean]>
    }

export const { shape: shapeArbitrary } = fc.letrec<{ shape: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<Shape>({ kind: "string" }, { kind: "int" }, { kind: "finite" }, { kind: "boolean" }),
    fc
      .uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 4 })
      .map((values): Shape => ({ kind: "literals", values })),
    tie("shape").map((item): Shape => ({ kind: "array", item })),
    tie("shape").map((inner): Shape => ({ kind: "nullOr", inner })),
    tie("shape").map((value): Shape => ({ kind: "record", value })),
    fc
      .uniqueArray(fc.tuple(fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,8}$/), tie("shape"), fc.boolean()), {
        minLength: 0,
        maxLength: 4,
        selector: ([name]) => name
      })
      .map((fields): Shape => ({ kind: "struct", fields }))
  )
}))

export const schemaOf = (shape: Shape): Schema.Top => {
  switch (shape.kind) {
    case "string":
      return Schema.String
    case "int":
      return Schema.Int
    case "finite":
      return Schema.Finite
    case "boolean":
      return Schema.Boolean
    case "literals":
      return Schema.Literals(shape.values as [string, ...Array<string>])
    case "array":
      return Schema.Array(schemaOf(shape.item))
    case "nullOr":
      return Schema.NullOr(schemaOf(shape.inner))
    case "record":
      return Schema.Record(Schema.String, schemaOf(shape.value))
    case "struct":
      return Schema.Struct(
        Object.fromEntries(
          shape.fields.map(([name, field, optional]) => [
            name,
            optional ? Schema.optionalKey(schemaOf(field)) : schemaOf(field)
          ])
        )
      )
  }
}

type Json = Readonly<Record<string, unknown>>
const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Integers outside the safe range: a JSON Schema `integer` without bounds accepts them. */
export const unsafeIntegers: ReadonlyArray<number> = [2 ** 53, -(2 ** 53), 1e21]

/**
 * Values a JSON Schema (the subset the projection emits) accepts. An integer keeps within its `minimum` and
 * `maximum`; with `unbounded: true`, an integer without them may also be one outside the safe range (what an
 * offered schema, which leaves the safe-integer bounds out, lets a model send).
 */
export const valuesOf = (node: unknown, options?: { readonly unbounded?: boolean }): fc.Arbitrary<unknown> => {
  const valuesOf_ = (child: unknown) => valuesOf(child, options)
  if (node === true || (isRecord(node) && Object.keys(node).length === 0)) return fc.jsonValue()
  if (!isRecord(node)) throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword]
    if (Array.isArray(branches)) return fc.oneof(...branches.map(valuesOf_))
  }
  if (isRecord(node.not) && node.not.type === "null" && Object.keys(node).length === 1) {
    return fc.jsonValue().filter((value) => value !== null)
  }
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum)
  if ("const" in node) return fc.constant(node.const)
  if (Array.isArray(node.type)) return fc.oneof(...node.type.map((type) => valuesOf_({ ...node, type })))
  switch (node.type) {
    case "string":
      return fc.string({ maxLength: 8 })
    case "integer": {
      const min = typeof node.minimum === "number" ? node.minimum : -1_000_000
      const max = typeof node.maximum === "number" ? node.maximum : 1_000_000
      const bounded = fc.integer({ min: Math.max(min, -1_000_000), max: Math.min(max, 1_000_000) })
      const unbounded = options?.unbounded === true && node.minimum === undefined && node.maximum === undefined
      return unbounded ? fc.oneof(bounded, fc.constantFrom(...unsafeIntegers)) : bounded
    }
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(valuesOf_(node.items ?? true), { maxLength: 3 })
    case "object": {
      const properties = isRecord(node.properties) ? node.properties : {}
      const required = Array.isArray(node.required) ? (node.required as ReadonlyArray<string>) : []
      const known = fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, valuesOf_(schema)])),
        { requiredKeys: required.filter((name) => Object.hasOwn(properties, name)) }
      )
      const extra = node.additionalProperties
      if (!isRecord(extra) || Object.keys(extra).length === 0) return known
      // extra keys carry a schema (a record): keys that are not declared properties
      const extraKeys = fc.stringMatching(/^[a-z]{1,5}$/).filter((key) => !Object.hasOwn(properties, key))
      return fc
        .tuple(known, fc.dictionary(extraKeys, valuesOf_(extra), { maxKeys: 3 }))
        .map(([declared, more]) => ({ ...more, ...declared }))
    }
    default:
      throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  }
}
