/**
 * Structured output (SPEC §16): the response format projected from an Effect
 * Schema (strict when it can be, object roots as is, other roots wrapped),
 * and the property that whatever the offered JSON Schema accepts — strict
 * rewriting included — the decoder accepts too, over generated schemas and
 * values generated from the offered JSON Schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Result, Schema } from "effect"
import * as fc from "fast-check"
import type { ValidationError } from "../../src/ActionError.ts"
import { decodeReply } from "../../src/internal/executor/llm.ts"
import * as Output from "../../src/internal/schema/output.ts"

const made = (schema: Schema.Top) => {
  const output = Output.make(schema, "answer")
  assert.isTrue(Result.isSuccess(output))
  return (output as Result.Success<Output.Output, never>).success
}

describe("structured output: the response format", () => {
  it("an object schema is offered strict, every property required, the optional ones nullable", () => {
    const output = made(Schema.Struct({ city: Schema.String, nights: Schema.optionalKey(Schema.Int) }))
    assert.deepStrictEqual(output.format, {
      name: "answer",
      strict: true,
      schema: {
        type: "object",
        properties: {
          city: { type: "string" },
          nights: { type: ["integer", "null"], maximum: Number.MAX_SAFE_INTEGER, minimum: Number.MIN_SAFE_INTEGER }
        },
        required: ["city", "nights"],
        additionalProperties: false
      }
    })
    assert.isFalse(output.wrapped)
  })

  it("a schema strict mode cannot express (a record) is offered with strict false", () => {
    const output = made(Schema.Struct({ prices: Schema.Record(Schema.String, Schema.Finite) }))
    assert.isFalse(output.format.strict)
    assert.deepStrictEqual(output.format.schema.required, ["prices"])
  })

  it("a root that is not an object is offered as { value } and read back from it", () => {
    const output = made(Schema.Array(Schema.String))
    assert.isTrue(output.wrapped)
    assert.deepStrictEqual(output.format.schema, {
      type: "object",
      properties: { value: { type: "array", items: { type: "string" } } },
      required: ["value"],
      additionalProperties: false
    })
    assert.deepStrictEqual(Output.candidateOf(output, { value: ["socks", "scarf"] }), ["socks", "scarf"])
  })

  it("a null strict mode allowed for an optional key is an absent key; a null the schema accepts stays", () => {
    const output = made(
      Schema.Struct({
        note: Schema.optionalKey(Schema.String),
        maybe: Schema.NullOr(Schema.String),
        nested: Schema.Array(Schema.Struct({ tag: Schema.optionalKey(Schema.String) }))
      })
    )
    assert.deepStrictEqual(
      Output.candidateOf(output, { note: null, maybe: null, nested: [{ tag: null }, { tag: "x" }] }),
      {
        maybe: null,
        nested: [{}, { tag: "x" }]
      }
    )
  })

  it.effect("a reply that does not match is VALIDATION with its issues and a preview", () =>
    Effect.gen(function* () {
      // A schema needing no services: the decoder's open requirement is closed here.
      const decode = decodeReply("plan", Schema.Struct({ nights: Schema.Int }), '{"nights":"many"}', "output schema")
      const exit = yield* Effect.exit(decode as unknown as Effect.Effect<unknown, ValidationError>)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      const failure = error !== undefined && error._tag === "Fail" ? error.error : undefined
      assert.strictEqual(failure?.category, "VALIDATION")
      assert.include(failure?.message, "plan: the model's reply does not match the output schema (nights:")
      assert.include(failure?.message, 'reply: "{\\"nights\\":\\"many\\"}"')
    })
  )
})

// =============================================================================
// The property: what the offered schema accepts, the decoder accepts
// =============================================================================

type Shape =
  | { readonly kind: "string" | "int" | "finite" | "boolean" }
  | { readonly kind: "literals"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "array"; readonly item: Shape }
  | { readonly kind: "nullOr"; readonly inner: Shape }
  | { readonly kind: "record"; readonly value: Shape }
  | {
      readonly kind: "struct"
      readonly fields: ReadonlyArray<readonly [name: string, shape: Shape, optional: boolean]>
    }

const { shape: shapeArbitrary } = fc.letrec<{ shape: Shape }>((tie) => ({
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

const schemaOf = (shape: Shape): Schema.Top => {
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

/** Values a JSON Schema (the subset the projection emits) accepts. */
const valuesOf = (node: unknown): fc.Arbitrary<unknown> => {
  if (node === true || (isRecord(node) && Object.keys(node).length === 0)) return fc.jsonValue()
  if (!isRecord(node)) throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword]
    if (Array.isArray(branches)) return fc.oneof(...branches.map(valuesOf))
  }
  if (isRecord(node.not) && node.not.type === "null" && Object.keys(node).length === 1) {
    return fc.jsonValue().filter((value) => value !== null)
  }
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum)
  if ("const" in node) return fc.constant(node.const)
  if (Array.isArray(node.type)) return fc.oneof(...node.type.map((type) => valuesOf({ ...node, type })))
  switch (node.type) {
    case "string":
      return fc.string({ maxLength: 8 })
    case "integer":
      return fc.integer({ min: -1_000_000, max: 1_000_000 })
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(valuesOf(node.items ?? true), { maxLength: 3 })
    case "object": {
      const properties = isRecord(node.properties) ? node.properties : {}
      const required = Array.isArray(node.required) ? (node.required as ReadonlyArray<string>) : []
      const known = fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, valuesOf(schema)])),
        { requiredKeys: required.filter((name) => Object.hasOwn(properties, name)) }
      )
      const extra = node.additionalProperties
      if (!isRecord(extra) || Object.keys(extra).length === 0) return known
      // extra keys carry a schema (a record): keys that are not declared properties
      const extraKeys = fc.stringMatching(/^[a-z]{1,5}$/).filter((key) => !Object.hasOwn(properties, key))
      return fc
        .tuple(known, fc.dictionary(extraKeys, valuesOf(extra), { maxKeys: 3 }))
        .map(([declared, more]) => ({ ...more, ...declared }))
    }
    default:
      throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  }
}

describe("structured output: property", () => {
  it("values generated from the offered JSON Schema (strict rewriting included) are never refused by the decoder", async () => {
    const cases = shapeArbitrary.chain((shape) => {
      const schema = schemaOf(shape)
      const output = Output.make(schema, "answer")
      if (Result.isFailure(output)) throw new Error(`no response format for ${JSON.stringify(shape)}`)
      return fc.tuple(fc.constant(shape), fc.constant(schema), valuesOf(output.success.format.schema))
    })
    await fc.assert(
      fc.asyncProperty(cases, async ([shape, schema, value]) => {
        const exit = await Effect.runPromiseExit(
          decodeReply("answer", schema, JSON.stringify(value), "output schema") as Effect.Effect<unknown, unknown>
        )
        assert.isTrue(
          Exit.isSuccess(exit),
          `${JSON.stringify(shape)} refused ${JSON.stringify(value)}: ${Exit.isFailure(exit) ? String(exit.cause) : ""}`
        )
      }),
      { numRuns: 300 }
    )
  })
})
