import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import { ValidationError } from "../src/ActionError.ts"
import * as ActionResult from "../src/ActionResult.ts"

const make = (value: unknown) => ActionResult.make(value, { action: "forecast" })

const invalid = (message: string, issues?: ReadonlyArray<{ readonly path: string; readonly message: string }>) =>
  new ValidationError({ action: "forecast", message, issues: issues ?? [{ path: "", message }] })

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("ActionResult.make", () => {
  it("keeps the raw value and the action name", () => {
    const value = { temp: 21 }
    const result = ActionResult.make(value, { action: "temperature" })
    assert.strictEqual(result.value, value)
    assert.strictEqual(result.action, "temperature")
    assert.isTrue(ActionResult.isActionResult(result))
  })

  it("is immutable", () => {
    const result = make("a")
    assert.isTrue(Object.isFrozen(result))
    assert.throws(() => {
      ;(result as { value: unknown }).value = "b"
    })
    assert.strictEqual(result.value, "a")
  })

  it("isActionResult rejects look-alikes", () => {
    for (const u of [null, undefined, "x", { value: 1, action: "a" }, { [ActionResult.TypeId]: "other" }]) {
      assert.isFalse(ActionResult.isActionResult(u))
    }
  })

  it("pipes into the module's conversions", () =>
    Effect.runSync(
      Effect.gen(function* () {
        assert.strictEqual(yield* make(42).pipe(ActionResult.asString), "42")
      })
    ))

  it.each([
    [null, true, true],
    [undefined, true, true],
    ["", false, true],
    ["  \n\t", false, true],
    [[], false, true],
    [{}, false, true],
    [Object.create(null), false, true],
    [new Uint8Array(0), false, true],
    ["x", false, false],
    [0, false, false],
    [false, false, false],
    [[null], false, false],
    [{ a: undefined }, false, false],
    [new Uint8Array([0]), false, false],
    [new Map(), false, false],
    [new Date(0), false, false]
  ])("%o: isNull %s, isEmpty %s", (value, isNull, isEmpty) => {
    const result = make(value)
    assert.deepStrictEqual([result.isNull, result.isEmpty], [isNull, isEmpty])
  })
})

describe("asString", () => {
  it.effect.each([
    ["hello", "hello"],
    [null, ""],
    [undefined, ""],
    [42, "42"],
    [1.5, "1.5"],
    [true, "true"],
    [10n, "10"],
    [{ a: 1, b: [true, null] }, '{"a":1,"b":[true,null]}'],
    [[1, "two"], '[1,"two"]'],
    [{ at: new Date(0) }, '{"at":"1970-01-01T00:00:00.000Z"}'],
    [utf8("grüße 😀"), "grüße 😀"]
  ] as const)("%o → %j", ([value, expected]) =>
    Effect.gen(function* () {
      assert.strictEqual(yield* make(value).asString, expected)
      assert.strictEqual(yield* ActionResult.asString(make(value)), expected)
    })
  )

  it.effect(
    "C31: a bigint inside an object is its decimal string, a Date its ISO string, a Map an object, a Set an array",
    () =>
      Effect.gen(function* () {
        assert.strictEqual(
          yield* make({
            id: 9007199254740993n,
            at: new Date(Date.UTC(2026, 10, 2)),
            tags: new Set(["a", "b"]),
            rooms: new Map<unknown, unknown>([
              ["single", 1],
              [2, "double"]
            ])
          }).asString,
          '{"id":"9007199254740993","at":"2026-11-02T00:00:00.000Z","tags":["a","b"],"rooms":{"single":1,"2":"double"}}'
        )
      })
  )

  it.effect("fails for a cycle (naming where it closes), deep nesting, invalid UTF-8 and functions", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = { list: [] }
      ;(cyclic.list as Array<unknown>).push({ back: cyclic })
      const cycleError = yield* Effect.flip(make(cyclic).asString)
      assert.isTrue(cycleError.message.startsWith("the object cannot be written as JSON: "))
      assert.include(cycleError.message, "$.list[0].back")
      let deep: unknown = 1
      for (let i = 0; i < 5_000; i++) deep = [deep]
      const deepError = yield* Effect.flip(make(deep).asString)
      assert.include(deepError.message, "more than 1000 levels")
      assert.deepStrictEqual(
        yield* Effect.flip(make(new Uint8Array([0xff, 0xfe])).asString),
        invalid("the bytes are not valid UTF-8")
      )
      assert.deepStrictEqual(
        yield* Effect.flip(make(() => 1).asString),
        invalid("expected a value that has a text form, got function")
      )
      assert.deepStrictEqual(
        yield* Effect.flip(make(Symbol("s")).asString),
        invalid("expected a value that has a text form, got symbol")
      )
    })
  )
})

describe("asRecord", () => {
  it.effect("a plain object is returned as is", () =>
    Effect.gen(function* () {
      const value = { temp: 21, unit: "c" }
      assert.strictEqual(yield* make(value).asRecord, value)
    })
  )

  it.effect("a string or UTF-8 bytes holding a JSON object are parsed", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* make(' {"temp": 21, "tags": ["a"]} ').asRecord, { temp: 21, tags: ["a"] })
      assert.deepStrictEqual(yield* make(utf8('{"city":"Wien"}')).asRecord, { city: "Wien" })
      assert.deepStrictEqual(yield* ActionResult.asRecord(make('{"a":null}')), { a: null })
    })
  )

  it.effect.each([
    [[1, 2], "expected a JSON object, got array"],
    ["[1,2]", "expected a JSON object, got array"],
    ["null", "expected a JSON object, got null"],
    ["5", "expected a JSON object, got number"],
    [null, "expected a JSON object, got null"],
    [undefined, "expected a JSON object, got undefined"],
    [true, "expected a JSON object, got boolean"],
    [new Map(), "expected a JSON object, got Map"],
    [new Date(0), "expected a JSON object, got Date"]
  ] as const)("%o fails: %s", ([value, message]) =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* Effect.flip(make(value).asRecord), invalid(message))
    })
  )

  it.effect("text that is not JSON fails with a bounded preview", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(make("<html>Bad Gateway</html>").asRecord)
      assert.strictEqual(error.action, "forecast")
      assert.isTrue(error.message.startsWith("the result is not valid JSON ("))
      assert.isTrue(error.message.endsWith("): <html>Bad Gateway</html>"))
      const long = `<p>${"x".repeat(3000)}`
      const longError = yield* Effect.flip(make(long).asRecord)
      assert.isTrue(longError.message.endsWith(`): ${long.slice(0, 499)}…`))
    })
  )
})

describe("asArray", () => {
  it.effect("an array as is; a string or bytes holding a JSON array parsed", () =>
    Effect.gen(function* () {
      const value = [1, { a: 2 }]
      assert.strictEqual(yield* make(value).asArray, value)
      assert.deepStrictEqual(yield* make('[1, "two", null]').asArray, [1, "two", null])
      assert.deepStrictEqual(yield* make(utf8("[]")).asArray, [])
      assert.deepStrictEqual(yield* ActionResult.asArray(make("[true]")), [true])
    })
  )

  it.effect.each([
    [{ a: 1 }, "expected a JSON array, got object"],
    ['{"a":1}', "expected a JSON array, got object"],
    ['"x"', "expected a JSON array, got string"],
    [7, "expected a JSON array, got number"],
    [null, "expected a JSON array, got null"]
  ] as const)("%o fails: %s", ([value, message]) =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* Effect.flip(make(value).asArray), invalid(message))
    })
  )
})

describe("asJson", () => {
  it.effect("a string is parsed as JSON", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* make('{"a":[1,2.5,"x",null,true]}').asJson, { a: [1, 2.5, "x", null, true] })
      assert.deepStrictEqual(yield* make('"quoted"').asJson, "quoted")
      assert.deepStrictEqual(yield* make("12").asJson, 12)
      assert.deepStrictEqual(yield* make(utf8('{"b":1}')).asJson, { b: 1 })
    })
  )

  it.effect("text that is not JSON fails", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(make("plain words").asJson)
      assert.isTrue(error.message.startsWith("the result is not valid JSON ("))
      assert.isTrue(error.message.endsWith("): plain words"))
    })
  )

  it.effect("JSON values other than strings are returned as is", () =>
    Effect.gen(function* () {
      const value = { a: [1, { b: null }], c: true }
      assert.strictEqual(yield* make(value).asJson, value)
      assert.strictEqual(yield* make(null).asJson, null)
      assert.strictEqual(yield* make(3).asJson, 3)
      assert.strictEqual(yield* ActionResult.asJson(make(false)), false)
    })
  )

  it.effect.each([
    [undefined, "", "undefined is not a JSON value"],
    [{ a: [1, { b: undefined }] }, "a[1].b", "undefined is not a JSON value"],
    [{ f: () => 1 }, "f", "a function is not a JSON value"],
    [[1n], "[0]", "a bigint is not a JSON value"],
    [{ n: Number.NaN }, "n", "NaN is not a JSON number"],
    [{ n: Number.POSITIVE_INFINITY }, "n", "Infinity is not a JSON number"],
    [{ at: new Date(0) }, "at", "a Date is not a JSON value"],
    [new Map(), "", "a Map is not a JSON value"],
    [{ s: Symbol("s") }, "s", "a symbol is not a JSON value"]
  ] as const)("%o fails at %j: %s", ([value, path, reason]) =>
    Effect.gen(function* () {
      const message = `the result is not a JSON value: ${reason}${path === "" ? "" : ` at ${path}`}`
      assert.deepStrictEqual(yield* Effect.flip(make(value).asJson), invalid(message, [{ path, message }]))
    })
  )

  it.effect("a cycle fails instead of overflowing the stack", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = { items: [] }
      ;(cyclic.items as Array<unknown>).push(cyclic)
      const message = "the result is not a JSON value: the value refers to itself at items[0]"
      assert.deepStrictEqual(yield* Effect.flip(make(cyclic).asJson), invalid(message, [{ path: "items[0]", message }]))
    })
  )

  it.effect("a shared (non-cyclic) sub-object is fine", () =>
    Effect.gen(function* () {
      const shared = { x: 1 }
      const value = { a: shared, b: [shared, shared] }
      assert.strictEqual(yield* make(value).asJson, value)
    })
  )

  it("property: a JSON value (not a string) is returned as is, its JSON text parses back, asString writes it", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value)
        if (typeof value !== "string") assert.strictEqual<unknown>(Effect.runSync(make(value).asJson), value)
        assert.deepStrictEqual(Effect.runSync(make(text).asJson), JSON.parse(text))
        const expectedText = typeof value === "string" ? value : value === null ? "" : text
        assert.strictEqual(Effect.runSync(make(value).asString), expectedText)
      })
    )
  })
})

describe("decode", () => {
  const Forecast = Schema.Struct({ city: Schema.String, temp: Schema.Finite, tags: Schema.Array(Schema.String) })

  it.effect("decodes an object, a JSON text or UTF-8 bytes into the schema's type", () =>
    Effect.gen(function* () {
      const expected = { city: "Wien", temp: 21.5, tags: ["sunny"] }
      assert.deepStrictEqual(yield* make(expected).decode(Forecast), expected)
      assert.deepStrictEqual(yield* make(JSON.stringify(expected)).decode(Forecast), expected)
      assert.deepStrictEqual(yield* make(utf8(JSON.stringify(expected))).decode(Forecast), expected)
      assert.deepStrictEqual(yield* ActionResult.decode(make(expected), Forecast), expected)
      assert.deepStrictEqual(yield* make(expected).pipe(ActionResult.decode(Forecast)), expected)
    })
  )

  it.effect("decodes classes, arrays, records and nullable structs from JSON text", () =>
    Effect.gen(function* () {
      class City extends Schema.Class<City>("City")({ name: Schema.String }) {}
      const city = yield* make('{"name":"Graz"}').decode(City)
      assert.instanceOf(city, City)
      assert.strictEqual(city.name, "Graz")
      assert.deepStrictEqual(yield* make("[1,2]").decode(Schema.Array(Schema.Finite)), [1, 2])
      assert.deepStrictEqual(yield* make('{"a":1}').decode(Schema.Record(Schema.String, Schema.Finite)), { a: 1 })
      assert.deepStrictEqual(yield* make('{"name":"x"}').decode(Schema.NullOr(City)), new City({ name: "x" }))
    })
  )

  it.effect("a string stays a string when the schema expects text", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* make('{"a":1}').decode(Schema.String), '{"a":1}')
      assert.strictEqual(yield* make('{"a":1}').decode(Schema.Union([Schema.String, Schema.Struct({})])), '{"a":1}')
      assert.strictEqual(yield* make(" 42 ").decode(Schema.NumberFromString), 42)
      assert.deepStrictEqual(
        yield* make('{"a":1}').decode(Schema.fromJsonString(Schema.Struct({ a: Schema.Finite }))),
        { a: 1 }
      )
    })
  )

  it.effect("reports every issue with its path", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(make({ city: 5, tags: ["a", 2] }).decode(Forecast))
      assert.deepStrictEqual(
        error,
        new ValidationError({
          action: "forecast",
          message:
            "the result does not match the expected schema: city: Expected string; temp: Missing key; tags[1]: Expected string",
          issues: [
            { path: "city", message: "Expected string" },
            { path: "temp", message: "Missing key" },
            { path: "tags[1]", message: "Expected string" }
          ]
        })
      )
    })
  )

  it.effect("a JSON text that is not JSON fails with a preview; a wrong root fails at path ''", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(make("Service Unavailable").decode(Forecast))
      assert.isTrue(error.message.startsWith("the result is not valid JSON ("))
      assert.isTrue(error.message.endsWith("): Service Unavailable"))
      const root = yield* Effect.flip(make("[]").decode(Forecast))
      assert.deepStrictEqual(root.issues, [{ path: "", message: "Expected object" }])
    })
  )
})
