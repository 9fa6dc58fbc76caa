import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import { ValidationError } from "../../../src/ActionError.ts"
import { parseArguments } from "../../../src/internal/tool/arguments.ts"

const parsed = (raw: unknown, tool = "search") => parseArguments(raw, { tool })

const failure = (raw: unknown, tool = "search") =>
  Result.match(parsed(raw, tool), {
    onSuccess: (value) => ({ unexpected: value }),
    onFailure: (error) => error
  })

describe("parseArguments", () => {
  describe("C01: empty and non-object arguments", () => {
    it.each(["", "   ", "\n\t "])("%j is the empty object", (raw) => {
      assert.deepStrictEqual(parsed(raw), Result.succeed({}))
    })

    it.each([
      ["null", "null"],
      ["5", "a number"],
      ['"text"', "a string"],
      ["[]", "an array"],
      ["true", "a boolean"]
    ])("%s is VALIDATION: arguments must be a JSON object", (raw, got) => {
      assert.deepStrictEqual(
        failure(raw, "get_forecast"),
        new ValidationError({
          action: "get_forecast",
          message: `arguments must be a JSON object, got ${got}`,
          issues: [{ path: "", message: `expected a JSON object, got ${got}` }]
        })
      )
    })

    it("the error is a VALIDATION category, not retryable", () => {
      const error = failure("null")
      assert.instanceOf(error, ValidationError)
      assert.deepStrictEqual([error.category, error.retryable], ["VALIDATION", false])
    })

    it("a JSON object is returned as parsed", () => {
      assert.deepStrictEqual(
        parsed('{"city":"Vienna","days":3,"nested":{"a":[1,null]}}'),
        Result.succeed({ city: "Vienna", days: 3, nested: { a: [1, null] } })
      )
    })
  })

  describe("C02: malformed or concatenated JSON is never repaired", () => {
    it.each([
      ['{"{"tagIds":[1,2]}'],
      ['{"action": listt_windows"}'],
      ["{lat: 48.2, lon:"],
      ['{"title":"a"}{"title":"b"}'],
      ['{"a":1,}'],
      ["{'a':1}"]
    ])("%s is VALIDATION with a preview of the raw text", (raw) => {
      const error = failure(raw, "create_note")
      assert.instanceOf(error, ValidationError)
      assert.strictEqual(error.action, "create_note")
      assert.isTrue(error.message.startsWith("arguments are not valid JSON ("))
      assert.isTrue(error.message.endsWith(`; received: ${raw}`))
      assert.strictEqual(error.issues.length, 1)
      assert.strictEqual(error.issues[0]?.path, "")
    })

    it("the preview of a long raw text is at most 500 characters", () => {
      const raw = `{"text": "${"x".repeat(5000)}`
      const error = failure(raw)
      assert.instanceOf(error, ValidationError)
      const received = error.message.slice(error.message.indexOf("; received: ") + "; received: ".length)
      assert.strictEqual(received.length, 500)
      assert.strictEqual(received, `${raw.slice(0, 499)}…`)
    })

    it("the preview never splits a surrogate pair", () => {
      const raw = `{"a":"${"x".repeat(492)}😀😀😀`
      const error = failure(raw)
      assert.instanceOf(error, ValidationError)
      const received = error.message.slice(error.message.indexOf("; received: ") + "; received: ".length)
      assert.strictEqual(received, `${raw.slice(0, 498)}…`)
    })
  })

  describe("already-parsed arguments", () => {
    it("a plain object is accepted; undefined (no arguments) is the empty object", () => {
      assert.deepStrictEqual(parsed({ city: "Vienna" }), Result.succeed({ city: "Vienna" }))
      assert.deepStrictEqual(parsed(Object.assign(Object.create(null), { a: 1 })), Result.succeed({ a: 1 }))
      assert.deepStrictEqual(parsed(undefined), Result.succeed({}))
    })

    it.each([
      [null, "null"],
      [[1], "an array"],
      [new Date(0), "an object"],
      [new Map(), "an object"],
      [5, "a number"]
    ])("%o is VALIDATION", (raw, got) => {
      assert.deepStrictEqual(
        failure(raw),
        new ValidationError({
          action: "search",
          message: `arguments must be a JSON object, got ${got}`,
          issues: [{ path: "", message: `expected a JSON object, got ${got}` }]
        })
      )
    })
  })

  it("_approval_token is stripped from model arguments", () => {
    assert.deepStrictEqual(parsed('{"hotelId":"h1","_approval_token":"tok-123"}'), Result.succeed({ hotelId: "h1" }))
    assert.deepStrictEqual(parsed({ hotelId: "h1", _approval_token: "tok-123" }), Result.succeed({ hotelId: "h1" }))
  })

  it("property: any JSON object round-trips as JSON text, any other JSON value is VALIDATION", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const raw = JSON.stringify(value)
        const result = parsed(raw)
        const isObject = typeof value === "object" && value !== null && !Array.isArray(value)
        if (isObject) {
          const { _approval_token: _, ...expected } = JSON.parse(raw) as Record<string, unknown>
          // As JSON text: a number a double cannot hold exactly is kept as the digits sent (a raw JSON value).
          assert.isTrue(Result.isSuccess(result))
          assert.strictEqual(JSON.stringify(Result.getOrThrow(result)), JSON.stringify(expected))
        } else {
          assert.isTrue(Result.isFailure(result))
        }
      })
    )
  })
})
