import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema, SchemaParser } from "effect"
import * as fc from "fast-check"
import type { ValidationError } from "../../../src/ActionError.ts"
import * as Conversion from "../../../src/internal/schema/decode.ts"
import { fromJsonSchema } from "../../../src/internal/schema/fromJsonSchema.ts"

const action = "book"

const decode = <S extends Schema.Top>(schema: S, input: unknown) => Conversion.decode(schema, input, { action })

const failure = <S extends Schema.Top>(
  schema: S,
  input: unknown
): Effect.Effect<ValidationError, never, S["DecodingServices"]> => Effect.flip(decode(schema, input)).pipe(Effect.orDie)

/** Synchronous decode for property tests. */
const decodeSync = (schema: Schema.Top, input: unknown): Exit.Exit<unknown, ValidationError> =>
  Effect.runSyncExit(decode(schema as Schema.Codec<unknown>, input))

const issuesOf = (exit: Exit.Exit<unknown, ValidationError>): ReadonlyArray<{ path: string; message: string }> => {
  if (Exit.isSuccess(exit)) return assert.fail(`expected a ValidationError, got ${JSON.stringify(exit.value)}`)
  const error = exit.cause.reasons[0]
  if (error?._tag !== "Fail") return assert.fail("expected a typed failure")
  return error.error.issues
}

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

const Celsius = Schema.Literals(["celsius", "fahrenheit"])

const fields = {
  integer: Schema.Int,
  number: Schema.Number,
  boolean: Schema.Boolean,
  enum: Celsius,
  caseSensitiveEnum: Schema.Literals(["a", "A"]),
  ambiguousEnum: Schema.Literals(["Ab", "aB"])
}

type Row = readonly [field: keyof typeof fields, input: unknown, expected: { readonly value: unknown } | "VALIDATION"]

const ok = (value: unknown) => ({ value })

// The coercion table of case C10 (SPEC §9 step 4).
const table: ReadonlyArray<Row> = [
  ["integer", "1458", ok(1458)],
  ["integer", " 42 ", ok(42)],
  ["integer", 42, ok(42)],
  ["integer", "1e3", ok(1000)],
  ["integer", "3.5", "VALIDATION"],
  ["integer", "", "VALIDATION"],
  ["integer", "   ", "VALIDATION"],
  ["integer", true, "VALIDATION"],
  ["number", "1e3", ok(1000)],
  ["number", "-2.5", ok(-2.5)],
  ["number", " .5 ", ok(0.5)],
  ["number", true, "VALIDATION"],
  ["number", false, "VALIDATION"],
  ["number", ["5"], "VALIDATION"],
  ["number", [], "VALIDATION"],
  ["number", "NaN", "VALIDATION"],
  ["number", "Infinity", "VALIDATION"],
  ["number", "-Infinity", "VALIDATION"],
  ["number", "1e999", "VALIDATION"],
  ["number", "abc", "VALIDATION"],
  ["number", "12abc", "VALIDATION"],
  ["number", "0x10", "VALIDATION"],
  ["number", "", "VALIDATION"],
  ["number", null, "VALIDATION"],
  ["boolean", "true", ok(true)],
  ["boolean", "FALSE", ok(false)],
  ["boolean", "false", ok(false)],
  ["boolean", "True", ok(true)],
  ["boolean", false, ok(false)],
  ["boolean", "yes", "VALIDATION"],
  ["boolean", "0", "VALIDATION"],
  ["boolean", "1", "VALIDATION"],
  ["boolean", "", "VALIDATION"],
  ["boolean", " true", "VALIDATION"],
  ["boolean", 1, "VALIDATION"],
  ["boolean", 0, "VALIDATION"],
  ["enum", "celsius", ok("celsius")],
  ["enum", "Celsius", ok("celsius")],
  ["enum", "FAHRENHEIT", ok("fahrenheit")],
  ["enum", "cel", "VALIDATION"],
  ["enum", "celsius ", "VALIDATION"],
  ["enum", "kelvin", "VALIDATION"],
  ["caseSensitiveEnum", "a", ok("a")],
  ["caseSensitiveEnum", "A", ok("A")],
  ["ambiguousEnum", "aB", ok("aB")],
  ["ambiguousEnum", "ab", "VALIDATION"],
  ["ambiguousEnum", "AB", "VALIDATION"]
]

describe("Conversion.decode", () => {
  describe("the coercion table (case C10)", () => {
    it.effect.each(table)("%s field given %j", ([field, input, expected]) =>
      Effect.gen(function* () {
        const schema = Schema.Struct({ value: fields[field] })
        const exit = yield* Effect.exit(decode(schema, { value: input }))
        if (expected === "VALIDATION") {
          const issues = issuesOf(exit)
          assert.deepStrictEqual(
            issues.map((issue) => issue.path),
            ["value"]
          )
        } else {
          assert.deepStrictEqual<Exit.Exit<unknown, ValidationError>>(exit, Exit.succeed({ value: expected.value }))
        }
      })
    )
  })

  it.effect("a non-integral string for an Int field fails as not an integer, quoting what was sent", () =>
    Effect.gen(function* () {
      const error = yield* failure(Schema.Struct({ id: Schema.Int }), { id: "3.5" })
      assert.strictEqual(error._tag, "ValidationError")
      assert.strictEqual(error.category, "VALIDATION")
      assert.strictEqual(error.action, action)
      assert.deepStrictEqual(error.issues, [{ path: "id", message: 'expected an integer, got "3.5"' }])
    })
  )

  it.effect("an enum miss lists the allowed literals", () =>
    Effect.gen(function* () {
      const error = yield* failure(Schema.Struct({ unit: Celsius }), { unit: "kelvin" })
      assert.deepStrictEqual(error.issues, [
        { path: "unit", message: 'expected one of "celsius" | "fahrenheit", got "kelvin"' }
      ])
    })
  )

  it.effect("every failing field is reported with its path, deep ones included", () =>
    Effect.gen(function* () {
      const Booking = Schema.Struct({
        name: Schema.String,
        unit: Celsius,
        guests: Schema.Array(Schema.Struct({ name: Schema.String, age: Schema.Int }))
      })
      const error = yield* failure(Booking, {
        unit: "kelvin",
        guests: [
          { name: "Ada", age: "36" },
          { name: "Bob", age: "3.5" }
        ]
      })
      assert.deepStrictEqual(error.issues, [
        { path: "name", message: "missing" },
        { path: "unit", message: 'expected one of "celsius" | "fahrenheit", got "kelvin"' },
        { path: "guests[1].age", message: 'expected an integer, got "3.5"' }
      ])
      assert.strictEqual(
        error.message,
        'Invalid arguments for book: name: missing; unit: expected one of "celsius" | "fahrenheit", got "kelvin"; guests[1].age: expected an integer, got "3.5"'
      )
    })
  )

  it.effect("quoted values are cut to 40 characters", () =>
    Effect.gen(function* () {
      const error = yield* failure(Schema.Struct({ count: Schema.Number }), { count: "x".repeat(100) })
      const [issue] = error.issues
      assert.strictEqual(issue?.message, `expected a number, got "${"x".repeat(38)}…`)
      assert.isAtMost((issue?.message ?? "").length - "expected a number, got ".length, 40)
    })
  )

  it.effect("a message annotation on a check is used as is", () =>
    Effect.gen(function* () {
      const Name = Schema.String.check(Schema.isMinLength(3, { message: "name is too short" }))
      const error = yield* failure(Schema.Struct({ name: Name }), { name: "Al" })
      assert.deepStrictEqual(error.issues, [{ path: "name", message: "name is too short" }])
    })
  )

  it.effect("undeclared keys are dropped", () =>
    Effect.gen(function* () {
      const value = yield* decode(Schema.Struct({ id: Schema.Int }), { id: "7", extra: "x", _approval: 1 })
      assert.deepStrictEqual(value, { id: 7 })
    })
  )

  it.effect("the caller's input is not mutated", () =>
    Effect.gen(function* () {
      const Booking = Schema.Struct({
        nights: Schema.Int,
        guests: Schema.Array(Schema.Struct({ age: Schema.Int, vip: Schema.Boolean })),
        address: Schema.Struct({ zip: Schema.Int })
      })
      const input = deepFreeze({
        nights: "2",
        guests: [{ age: "30", vip: "TRUE" }],
        address: '{"zip":"12345"}',
        extra: { keep: "me" }
      })
      const snapshot = structuredClone(input)
      const value = yield* decode(Booking, input)
      assert.deepStrictEqual(value, { nights: 2, guests: [{ age: 30, vip: true }], address: { zip: 12345 } })
      assert.deepStrictEqual(input, snapshot)
    })
  )

  describe("arguments that are not an object", () => {
    it.effect("a JSON string holding an object is decoded once", () =>
      Effect.gen(function* () {
        const value = yield* decode(Schema.Struct({ id: Schema.Int }), ' {"id":"5"} ')
        assert.deepStrictEqual(value, { id: 5 })
      })
    )

    it.effect.each([
      ["[1]"],
      [[1]],
      [5],
      [null],
      [undefined],
      ["not json"],
      [JSON.stringify(JSON.stringify({ id: 1 }))]
    ])("%j is VALIDATION at the root", ([input]) =>
      Effect.gen(function* () {
        const error = yield* failure(Schema.Struct({ id: Schema.optionalKey(Schema.Int) }), input)
        assert.strictEqual(error.issues.length, 1)
        assert.strictEqual(error.issues[0]?.path, "")
        assert.isTrue(error.issues[0]?.message.startsWith("arguments must be an object"))
        assert.isTrue(error.message.startsWith("Invalid arguments for book: arguments must be an object"))
      })
    )
  })

  describe("structure", () => {
    it.effect("a JSON string is decoded once where an object or array is expected", () =>
      Effect.gen(function* () {
        const Schema_ = Schema.Struct({
          address: Schema.Struct({ zip: Schema.Int }),
          tags: Schema.Array(Schema.String)
        })
        const value = yield* decode(Schema_, { address: '{"zip":"01234"}', tags: '["a","b"]' })
        assert.deepStrictEqual(value, { address: { zip: 1234 }, tags: ["a", "b"] })
      })
    )

    it.effect("a JSON string holding a JSON string is not decoded twice", () =>
      Effect.gen(function* () {
        const twice = JSON.stringify(JSON.stringify({ zip: 1 }))
        const error = yield* failure(Schema.Struct({ address: Schema.Struct({ zip: Schema.Int }) }), {
          address: twice
        })
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ["address"]
        )
        assert.isTrue(error.issues[0]?.message.startsWith("expected an object"))
      })
    )

    it.effect("a JSON string where a string is expected stays a string", () =>
      Effect.gen(function* () {
        const value = yield* decode(Schema.Struct({ text: Schema.String }), { text: '{"a":1}' })
        assert.deepStrictEqual(value, { text: '{"a":1}' })
      })
    )

    it.effect("optional keys may be absent, and are converted when present", () =>
      Effect.gen(function* () {
        const Schema_ = Schema.Struct({
          a: Schema.optionalKey(Schema.Int),
          b: Schema.optional(Schema.Boolean),
          c: Schema.optional(Schema.Number)
        })
        assert.deepStrictEqual(yield* decode(Schema_, {}), {})
        assert.deepStrictEqual(yield* decode(Schema_, { a: "1", b: "false", c: undefined }), {
          a: 1,
          b: false,
          c: undefined
        })
        const error = yield* failure(Schema_, { c: "many" })
        assert.deepStrictEqual(error.issues, [{ path: "c", message: 'expected a number, got "many"' }])
      })
    )

    it.effect("nullable and other unions coerce only when one member's conversion is unambiguous", () =>
      Effect.gen(function* () {
        const Schema_ = Schema.Struct({
          limit: Schema.NullOr(Schema.Int),
          text: Schema.Union([Schema.String, Schema.Number]),
          flag: Schema.Union([Schema.Number, Schema.Boolean]),
          mode: Schema.Union([Schema.Literal("auto"), Schema.Int])
        })
        assert.deepStrictEqual(yield* decode(Schema_, { limit: null, text: "5", flag: "TRUE", mode: "Auto" }), {
          limit: null,
          text: "5",
          flag: true,
          mode: "auto"
        })
        assert.deepStrictEqual(yield* decode(Schema_, { limit: "7", text: 5, flag: "2", mode: "3" }), {
          limit: 7,
          text: 5,
          flag: 2,
          mode: 3
        })
        const error = yield* failure(Schema_, { limit: "3.5", text: true, flag: "yes", mode: "3.5" })
        assert.deepStrictEqual(error.issues, [
          { path: "limit", message: 'expected an integer, got "3.5"' },
          { path: "text", message: "expected a string or a number, got true" },
          { path: "flag", message: 'expected a number or a boolean, got "yes"' },
          { path: "mode", message: 'expected an integer, got "3.5"' }
        ])
      })
    )

    it.effect("a union of structs is converted through the member the value fits", () =>
      Effect.gen(function* () {
        const Shape = Schema.Union([
          Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Number }),
          Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Int })
        ])
        const value = yield* decode(Schema.Struct({ shape: Shape }), { shape: '{"kind":"square","side":"4"}' })
        assert.deepStrictEqual(value, { shape: { kind: "square", side: 4 } })
      })
    )

    it.effect("tuples, records and Schema.Enum are converted element-wise", () =>
      Effect.gen(function* () {
        const Direction = Schema.Enum({ Up: "up", Down: "down", Level: 0 })
        const Schema_ = Schema.Struct({
          pair: Schema.Tuple([Schema.Int, Schema.Boolean]),
          scores: Schema.Record(Schema.String, Schema.Number),
          direction: Direction,
          level: Direction
        })
        const value = yield* decode(Schema_, {
          pair: ["1", "false"],
          scores: { ada: "9.5", bob: 7 },
          direction: "UP",
          level: "0"
        })
        assert.deepStrictEqual(value, { pair: [1, false], scores: { ada: 9.5, bob: 7 }, direction: "up", level: 0 })
        const error = yield* failure(Schema_, {
          pair: ["x", true],
          scores: { ada: "high" },
          direction: "sideways",
          level: 0
        })
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ["pair[0]", "scores.ada", "direction"]
        )
        assert.strictEqual(error.issues[2]?.message, 'expected one of "up" | "down" | 0, got "sideways"')
      })
    )

    it.effect("recursive schemas are followed", () =>
      Effect.gen(function* () {
        interface Category {
          readonly name: string
          readonly depth: number
          readonly children: ReadonlyArray<Category>
        }
        const Category: Schema.Codec<Category> = Schema.Struct({
          name: Schema.String,
          depth: Schema.Int,
          children: Schema.Array(Schema.suspend((): Schema.Codec<Category> => Category))
        })
        const value = yield* decode(Category, {
          name: "root",
          depth: "0",
          children: [{ name: "leaf", depth: "1", children: "[]" }]
        })
        assert.deepStrictEqual(value, {
          name: "root",
          depth: 0,
          children: [{ name: "leaf", depth: 1, children: [] }]
        })
        const error = yield* failure(Category, {
          name: "root",
          depth: 0,
          children: [{ name: "leaf", depth: 1, children: [{ name: "x", depth: "deep", children: [] }] }]
        })
        assert.deepStrictEqual(error.issues, [
          { path: "children[0].children[0].depth", message: 'expected an integer, got "deep"' }
        ])
      })
    )

    it.effect("Unknown and Any fields are left alone", () =>
      Effect.gen(function* () {
        const value = yield* decode(Schema.Struct({ a: Schema.Unknown, b: Schema.Any }), { a: "1", b: '{"x":1}' })
        assert.deepStrictEqual(value, { a: "1", b: '{"x":1}' })
      })
    )

    it.effect("the user's own transformations receive their encoded form", () =>
      Effect.gen(function* () {
        const Schema_ = Schema.Struct({
          amount: Schema.NumberFromString,
          day: Schema.DateFromString,
          count: Schema.FiniteFromString
        })
        const value = yield* decode(Schema_, { amount: "12.5", day: "2026-01-02T00:00:00.000Z", count: "3" })
        assert.deepStrictEqual(value, { amount: 12.5, day: new Date("2026-01-02T00:00:00.000Z"), count: 3 })
        const error = yield* failure(Schema_, { amount: "1", day: "someday", count: "many" })
        assert.deepStrictEqual(error.issues, [
          { path: "day", message: 'expected a valid Date, got "someday"' },
          { path: "count", message: 'expected a finite number, got "many"' }
        ])
      })
    )

    it.effect("keys that are not identifiers are quoted in paths", () =>
      Effect.gen(function* () {
        const error = yield* failure(Schema.Struct({ "check-in": Schema.Int }), { "check-in": "soon" })
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ['["check-in"]']
        )
      })
    )
  })

  describe("properties", () => {
    const NumberField = Schema.Struct({ value: Schema.Number })
    const IntField = Schema.Struct({ value: Schema.Int })
    const BooleanField = Schema.Struct({ value: Schema.Boolean })

    it("any finite number's string form decodes to that number", () => {
      fc.assert(
        fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
          const exit = decodeSync(NumberField, { value: String(n) })
          assert.isTrue(Exit.isSuccess(exit))
          // `===`, so -0 and its string "0" agree
          assert.isTrue(Exit.isSuccess(exit) && (exit.value as { value: number }).value === n)
        })
      )
    })

    it("any safe integer's string, with surrounding spaces, decodes for an Int field", () => {
      const spaces = fc.array(fc.constantFrom(" ", "\t", "\n"), { maxLength: 3 }).map((chars) => chars.join(""))
      fc.assert(
        fc.property(
          fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
          spaces,
          spaces,
          (n, before, after) => {
            assert.deepStrictEqual(decodeSync(IntField, { value: `${before}${n}${after}` }), Exit.succeed({ value: n }))
          }
        )
      )
    })

    it("booleans, arrays, empty strings and non-numeric strings never decode to a number", () => {
      const notNumeric = fc.oneof(
        fc.boolean(),
        fc.array(fc.oneof(fc.integer(), fc.string())),
        fc.constantFrom("", " ", "NaN", "Infinity", "-Infinity", "1e999", "0x10", "0b1", "1_000", "1,5", "٣"),
        fc.string().filter((s) => !/\d/.test(s))
      )
      fc.assert(
        fc.property(notNumeric, (input) => {
          assert.isTrue(Exit.isFailure(decodeSync(NumberField, { value: input })))
          assert.isTrue(Exit.isFailure(decodeSync(IntField, { value: input })))
        })
      )
    })

    it("a Boolean field rejects every string but true/false in any case", () => {
      const nearlyBoolean = fc.oneof(
        fc.string(),
        fc
          .tuple(fc.constantFrom("true", "false", "TRUE", "False"), fc.string({ minLength: 1 }), fc.boolean())
          .map(([word, extra, before]) => (before ? extra + word : word + extra)),
        fc.constantFrom("yes", "no", "0", "1", "", "on", "off", "t", "f")
      )
      fc.assert(
        fc.property(
          nearlyBoolean.filter((s) => s.toLowerCase() !== "true" && s.toLowerCase() !== "false"),
          (s) => {
            assert.isTrue(Exit.isFailure(decodeSync(BooleanField, { value: s })))
          }
        )
      )
      fc.assert(
        fc.property(fc.boolean(), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), (b, upper) => {
          const word = [...String(b)].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("")
          assert.deepStrictEqual(decodeSync(BooleanField, { value: word }), Exit.succeed({ value: b }))
        })
      )
    })

    it("a nested struct given as a JSON string decodes to the same value as the object", () => {
      const Guest = Schema.Struct({
        name: Schema.String,
        age: Schema.Int,
        vip: Schema.Boolean,
        unit: Celsius,
        tags: Schema.Array(Schema.String),
        address: Schema.Struct({ zip: Schema.Int, note: Schema.optionalKey(Schema.String) })
      })
      const Booking = Schema.Struct({ guest: Guest })
      const guest = fc.record({
        name: fc.string(),
        age: fc.integer(),
        vip: fc.boolean(),
        unit: fc.constantFrom("celsius", "fahrenheit"),
        tags: fc.array(fc.string()),
        address: fc.record({ zip: fc.nat(), note: fc.string() }, { requiredKeys: ["zip"] })
      })
      fc.assert(
        fc.property(guest, (value) => {
          const fromObject = decodeSync(Booking, { guest: value })
          assert.deepStrictEqual(fromObject, Exit.succeed({ guest: value }))
          assert.deepStrictEqual(decodeSync(Booking, { guest: JSON.stringify(value) }), fromObject)
        })
      )
    })

    it("every failing field is named by its path", () => {
      const MISSING = Symbol("missing")
      type Field = { readonly schema: Schema.Top; readonly input: unknown; readonly broken: ReadonlyArray<string> }
      const field = (name: string, kind: number, ok: boolean, index: number): Field => {
        switch (kind) {
          case 0:
            return { schema: Schema.Int, input: ok ? " 12 " : "1.5", broken: ok ? [] : [name] }
          case 1:
            return { schema: Schema.Boolean, input: ok ? "FALSE" : "no", broken: ok ? [] : [name] }
          case 2:
            return { schema: Celsius, input: ok ? "Celsius" : "kelvin", broken: ok ? [] : [name] }
          case 3:
            return {
              schema: Schema.Struct({ age: Schema.Int }),
              input: ok ? { age: "3" } : JSON.stringify({ age: "old" }),
              broken: ok ? [] : [`${name}.age`]
            }
          case 4: {
            const input = ["1", "2", "3"]
            if (!ok) input[index] = "x"
            return { schema: Schema.Array(Schema.Int), input, broken: ok ? [] : [`${name}[${index}]`] }
          }
          default:
            return { schema: Schema.String, input: ok ? "s" : MISSING, broken: ok ? [] : [name] }
        }
      }
      const shape = fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.boolean(), fc.integer({ min: 0, max: 2 })), {
        minLength: 1,
        maxLength: 8
      })
      fc.assert(
        fc.property(shape, (specs) => {
          const fields: Record<string, Schema.Top> = {}
          const input: Record<string, unknown> = {}
          const expected: Array<string> = []
          specs.forEach(([kind, ok, index], i) => {
            const name = `f${i}`
            const made = field(name, kind, ok, index)
            fields[name] = made.schema
            if (made.input !== MISSING) input[name] = made.input
            expected.push(...made.broken)
          })
          const exit = decodeSync(Schema.Struct(fields), input)
          if (expected.length === 0) {
            assert.isTrue(Exit.isSuccess(exit))
          } else {
            const issues = issuesOf(exit)
            assert.deepStrictEqual(issues.map((issue) => issue.path).sort(), [...expected].sort())
            for (const issue of issues) assert.isTrue(issue.message.length > 0)
          }
        })
      )
    })
  })
})

describe("fromJsonSchema", () => {
  const decodeJson = (jsonSchema: unknown, input: unknown) => decode(fromJsonSchema(jsonSchema), input)

  it.effect('{"type":"object"} accepts an empty object and keeps any keys', () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* decodeJson({ type: "object" }, {}), {})
      assert.deepStrictEqual(yield* decodeJson({ type: "object" }, { a: 1 }), { a: 1 })
    })
  )

  it.effect("a required integer and an optional enum convert like local parameters", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        properties: {
          id: { type: "integer", description: "the reading id" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] }
        },
        required: ["id"]
      }
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { id: "1458", unit: "Celsius", extra: true }), {
        id: 1458,
        unit: "celsius"
      })
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { id: 7 }), { id: 7 })
      const error = yield* Effect.flip(decodeJson(inputSchema, { id: "3.5", unit: "kelvin" }))
      assert.deepStrictEqual(error.issues, [
        { path: "id", message: 'expected an integer, got "3.5"' },
        { path: "unit", message: 'expected one of "celsius" | "fahrenheit", got "kelvin"' }
      ])
      const missing = yield* Effect.flip(decodeJson(inputSchema, {}))
      assert.deepStrictEqual(missing.issues, [{ path: "id", message: "missing" }])
    })
  )

  it.effect("a nested object, given as a JSON string, is converted field by field", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        properties: {
          address: {
            type: "object",
            properties: { zip: { type: "integer" }, verified: { type: "boolean" } },
            required: ["zip"]
          }
        },
        required: ["address"]
      }
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { address: '{"zip":"12345","verified":"TRUE"}' }), {
        address: { zip: 12345, verified: true }
      })
      const error = yield* Effect.flip(decodeJson(inputSchema, { address: { zip: "north" } }))
      assert.deepStrictEqual(
        error.issues.map((issue) => issue.path),
        ["address.zip"]
      )
    })
  )

  it.effect("an array of numbers converts element-wise", () =>
    Effect.gen(function* () {
      const inputSchema = { type: "object", properties: { values: { type: "array", items: { type: "number" } } } }
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { values: ["1", 2.5, " 1e3 "] }), {
        values: [1, 2.5, 1000]
      })
      const error = yield* Effect.flip(decodeJson(inputSchema, { values: [1, "x", true] }))
      assert.deepStrictEqual(
        error.issues.map((issue) => issue.path),
        ["values[1]", "values[2]"]
      )
    })
  )

  it.effect("$defs and $ref resolve, recursion included", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        properties: { guest: { $ref: "#/$defs/Guest" }, tree: { $ref: "#/$defs/Node" } },
        required: ["guest"],
        $defs: {
          Guest: { type: "object", properties: { age: { type: "integer" } }, required: ["age"] },
          Node: {
            type: "object",
            properties: { value: { type: "number" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }
          }
        }
      }
      assert.deepStrictEqual(
        yield* decodeJson(inputSchema, {
          guest: { age: "40" },
          tree: { value: "1", children: [{ value: "2", children: [] }] }
        }),
        { guest: { age: 40 }, tree: { value: 1, children: [{ value: 2, children: [] }] } }
      )
      const error = yield* Effect.flip(
        decodeJson(inputSchema, { guest: { age: "old" }, tree: { children: [{ value: "x" }] } })
      )
      assert.deepStrictEqual(
        error.issues.map((issue) => issue.path),
        ["guest.age", "tree.children[0].value"]
      )
    })
  )

  it.effect("draft-07 definitions, nullable types and anyOf are understood", () =>
    Effect.gen(function* () {
      const inputSchema = {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: {
          limit: { type: ["integer", "null"] },
          page: { $ref: "#/definitions/Page" },
          when: { anyOf: [{ type: "string" }, { type: "number" }] },
          legacy: { type: "boolean", nullable: true }
        },
        definitions: { Page: { type: "object", properties: { size: { type: "integer" } } } }
      }
      assert.deepStrictEqual(
        yield* decodeJson(inputSchema, { limit: "10", page: { size: "20" }, when: "5", legacy: null }),
        { limit: 10, page: { size: 20 }, when: "5", legacy: null }
      )
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { limit: null, legacy: "false" }), {
        limit: null,
        legacy: false
      })
    })
  )

  it.effect("allOf compositions convert the keys each side declares", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        allOf: [{ $ref: "#/$defs/Base" }, { properties: { vip: { type: "boolean" } } }],
        $defs: { Base: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] } }
      }
      const value = yield* decodeJson(inputSchema, { id: "3", vip: "TRUE" })
      assert.deepStrictEqual(value, { id: 3, vip: true })
      const error = yield* Effect.flip(decodeJson(inputSchema, { vip: true }))
      assert.deepStrictEqual(error.issues, [{ path: "id", message: "missing" }])
    })
  )

  it.effect("unsupported constructs accept any value instead of failing", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        properties: {
          code: { type: "string", pattern: "^[A-Z]{3}$" },
          // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
          shape: { if: { type: "string" }, then: { minLength: 2 } },
          other: { not: { type: "string" } },
          point: { const: { x: 1 } },
          remote: { $ref: "https://example.com/schema.json" }
        },
        required: ["code"]
      }
      assert.deepStrictEqual(
        yield* decodeJson(inputSchema, { code: "usd", shape: 1, other: null, point: [1], remote: "r", extra: 1 }),
        { code: "usd", shape: 1, other: null, point: [1], remote: "r" }
      )
    })
  )

  it.effect("not: { type: 'null' } is any value but null: null is absent when optional, VALIDATION when required", () =>
    Effect.gen(function* () {
      const inputSchema = {
        type: "object",
        properties: { id: { not: { type: "null" } }, note: { not: { type: "null" } } },
        required: ["id"]
      }
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { id: [1], note: null }), { id: [1] })
      assert.deepStrictEqual(yield* decodeJson(inputSchema, { id: "a", note: { x: 1 } }), { id: "a", note: { x: 1 } })
      const error = yield* Effect.flip(decodeJson(inputSchema, { id: null }))
      assert.strictEqual(error.issues[0]?.path, "id")
    })
  )

  it.effect("a root that is not an object schema becomes an open object", () =>
    Effect.gen(function* () {
      for (const jsonSchema of [{ type: "string" }, true, null, "nonsense"]) {
        assert.deepStrictEqual(yield* decodeJson(jsonSchema, { a: 1 }), { a: 1 })
        const error = yield* Effect.flip(decodeJson(jsonSchema, "[]"))
        assert.strictEqual(error.issues[0]?.path, "")
      }
    })
  )

  it("is cached by the JSON Schema object", () => {
    const inputSchema = { type: "object", properties: { id: { type: "integer" } } }
    assert.strictEqual(fromJsonSchema(inputSchema), fromJsonSchema(inputSchema))
  })
})

describe("an open record in a union (an mcpTool's arguments)", () => {
  it("accepts exactly what the schema's own check accepts; a string stays the same string", () => {
    const Arguments = Schema.Union([Schema.Record(Schema.String, Schema.Unknown), Schema.String])
    const Wrapper = Schema.Struct({ value: Arguments })
    const accepts = SchemaParser.is(Arguments)
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.array(fc.anything()),
          fc.constantFrom(new Date(0), new Map(), null, () => 1)
        ),
        (value) => {
          const exit = decodeSync(Wrapper, { value })
          assert.strictEqual(Exit.isSuccess(exit), accepts(value))
          if (Exit.isSuccess(exit) && typeof value === "string") {
            assert.strictEqual((exit.value as { readonly value: unknown }).value, value)
          }
        }
      )
    )
  })
})
