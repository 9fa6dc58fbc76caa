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
import { schemaOf, shapeArbitrary, valuesOf } from "../support/Shapes.ts"

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
          nights: { type: ["integer", "null"] }
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

/** Whether a JSON value holds an integer outside the safe range anywhere. */
const holdsUnsafeInteger = (value: unknown): boolean =>
  typeof value === "number"
    ? Number.isInteger(value) && !Number.isSafeInteger(value)
    : typeof value === "object" && value !== null && Object.values(value).some(holdsUnsafeInteger)

describe("structured output: property", () => {
  // The one loosening of what is offered: the safe-integer bounds of `Schema.Int` are left out (noise a model pays
  // for), so a value with an integer beyond them passes the offered schema; the decoder refuses it, as VALIDATION
  // naming the field.
  it("values generated from the offered JSON Schema (strict rewriting included) are never refused by the decoder, but for the listed loosening", async () => {
    const cases = shapeArbitrary.chain((shape) => {
      const schema = schemaOf(shape)
      const output = Output.make(schema, "answer")
      if (Result.isFailure(output)) throw new Error(`no response format for ${JSON.stringify(shape)}`)
      const offered = output.success.format.schema
      assert.notInclude(JSON.stringify(offered), String(Number.MAX_SAFE_INTEGER), "no safe-integer bound is offered")
      return fc.tuple(fc.constant(shape), fc.constant(schema), valuesOf(offered, { unbounded: true }))
    })
    let loosened = 0
    await fc.assert(
      fc.asyncProperty(cases, async ([shape, schema, value]) => {
        const exit = await Effect.runPromiseExit(
          decodeReply("answer", schema, JSON.stringify(value), "output schema") as Effect.Effect<
            unknown,
            ValidationError
          >
        )
        if (Exit.isSuccess(exit)) return
        const refusal = `${JSON.stringify(shape)} refused ${JSON.stringify(value)}: ${String(exit.cause)}`
        const error = Exit.findErrorOption(exit)
        assert.isTrue(holdsUnsafeInteger(value), refusal)
        assert.isTrue(error._tag === "Some" && error.value._tag === "ValidationError", refusal)
        const issues = error._tag === "Some" ? error.value.issues : []
        assert.isNotEmpty(issues, refusal)
        for (const issue of issues) assert.match(issue.message, /^expected an integer, got /, refusal)
        loosened++
      }),
      { numRuns: 300 }
    )
    assert.isAbove(loosened, 0, "a value beyond the safe-integer range was drawn")
  })
})
