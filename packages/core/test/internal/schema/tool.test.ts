import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { ValidationError } from "../../../src/ActionError.ts"
import * as Tool from "../../../src/internal/schema/tool.ts"

const project = (parameters: Tool.Parameters, options?: { readonly strict?: boolean }) =>
  Result.getOrThrowWith(Tool.jsonSchema(parameters, options), (issue) => new Error(issue.message))

const projectIssue = (parameters: Tool.Parameters, options?: { readonly strict?: boolean }) =>
  Result.match(Tool.jsonSchema(parameters, options), {
    onSuccess: (schema) => ({ unexpected: schema }),
    onFailure: (issue) => ({ path: issue.path, message: issue.message })
  })

const parsed = (raw: unknown, tool = "search") => Tool.parseArguments(raw, { tool })

const failure = (raw: unknown, tool = "search") =>
  Result.match(parsed(raw, tool), {
    onSuccess: (value) => ({ unexpected: value }),
    onFailure: (error) => error
  })

const walkSchemas = (node: unknown, visit: (node: Record<string, unknown>) => void): void => {
  if (typeof node !== "object" || node === null) return
  if (!Array.isArray(node)) visit(node as Record<string, unknown>)
  for (const value of Object.values(node)) walkSchemas(value, visit)
}

describe("Tool.parseArguments", () => {
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

  it("property: any JSON object round-trips, any other JSON value is VALIDATION", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const raw = JSON.stringify(value)
        const result = parsed(raw)
        const isObject = typeof value === "object" && value !== null && !Array.isArray(value)
        if (isObject) {
          const { _approval_token: _, ...expected } = JSON.parse(raw) as Record<string, unknown>
          assert.deepStrictEqual(result, Result.succeed(expected))
        } else {
          assert.isTrue(Result.isFailure(result))
        }
      })
    )
  })
})

describe("Tool.jsonSchema", () => {
  describe("C07: object schemas always get properties", () => {
    it("an MCP tool with inputSchema {type: object} gets empty properties", () => {
      assert.deepStrictEqual(project({ type: "object" }), { type: "object", properties: {} })
    })

    it("strict mode also closes it", () => {
      assert.deepStrictEqual(project({ type: "object" }, { strict: true }), {
        type: "object",
        properties: {},
        required: [],
        additionalProperties: false
      })
    })

    it("properties: null (as some servers send) is no properties", () => {
      assert.deepStrictEqual(project({ type: "object", properties: null }), { type: "object", properties: {} })
    })

    it("nested object schemas, with or without type, get properties too", () => {
      assert.deepStrictEqual(
        project({
          type: "object",
          properties: {
            options: { type: "object", description: "free-form options" },
            list: { type: "array", items: { type: "object" } },
            either: { anyOf: [{ type: "object" }, { type: "string" }] },
            untyped: { properties: { a: { type: "string" } } }
          }
        }),
        {
          type: "object",
          properties: {
            options: { type: "object", description: "free-form options", properties: {} },
            list: { type: "array", items: { type: "object", properties: {} } },
            either: { anyOf: [{ type: "object", properties: {} }, { type: "string" }] },
            untyped: { properties: { a: { type: "string" } } }
          }
        }
      )
    })

    it("an empty root schema ({}, annotations only, Schema.Struct({})) becomes an empty object", () => {
      const empty = { type: "object" as const, properties: {} }
      assert.deepStrictEqual(project({}), empty)
      assert.deepStrictEqual(project({ description: "no arguments" }), { ...empty, description: "no arguments" })
      assert.deepStrictEqual(project(Schema.Struct({})), empty)
    })

    it("a root that is not an object schema is an issue", () => {
      assert.deepStrictEqual(projectIssue(Schema.String), {
        path: "",
        message: 'tool parameters must be an object schema, got type "string" (at the root)'
      })
      assert.deepStrictEqual(projectIssue({ type: "array", items: { type: "string" } }), {
        path: "",
        message: 'tool parameters must be an object schema, got type "array" (at the root)'
      })
    })
  })

  describe("C08: $ref and $defs are inlined", () => {
    const location = {
      type: "object",
      properties: { lat: { type: "number" }, lon: { type: "number" } },
      required: ["lat", "lon"]
    }

    it("a pointer ref such as #/properties/startLocation is inlined", () => {
      assert.deepStrictEqual(
        project({
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: {
            startLocation: location,
            endLocation: { $ref: "#/properties/startLocation" }
          },
          required: ["startLocation", "endLocation"]
        }),
        {
          type: "object",
          properties: { startLocation: location, endLocation: location },
          required: ["startLocation", "endLocation"]
        }
      )
    })

    it("$defs and definitions are inlined and dropped; sibling keywords are merged and win", () => {
      assert.deepStrictEqual(
        project({
          $id: "https://example.com/trip.json",
          type: "object",
          properties: {
            start: { $ref: "#/$defs/Location", description: "where to start" },
            end: { $ref: "#/definitions/Location", title: "End", default: { lat: 0, lon: 0 } },
            unit: { $ref: "#/$defs/Unit", description: "the unit for distances" }
          },
          $defs: { Location: location, Unit: { type: "string", enum: ["km", "mi"], description: "a unit" } },
          definitions: { Location: location }
        }),
        {
          type: "object",
          properties: {
            start: { ...location, description: "where to start" },
            end: { ...location, title: "End", default: { lat: 0, lon: 0 } },
            unit: { type: "string", enum: ["km", "mi"], description: "the unit for distances" }
          }
        }
      )
    })

    it("clashing structural siblings are kept under allOf, never dropped", () => {
      assert.deepStrictEqual(
        project({
          type: "object",
          properties: { name: { $ref: "#/$defs/Name", maxLength: 10, description: "short name" } },
          $defs: { Name: { type: "string", maxLength: 100 } }
        }),
        {
          type: "object",
          properties: {
            name: { allOf: [{ type: "string", maxLength: 100 }, { maxLength: 10 }], description: "short name" }
          }
        }
      )
    })

    it("refs inside refs are resolved, and no $ref, $defs, $schema or $id is left", () => {
      const schema = project({
        type: "object",
        properties: { trip: { $ref: "#/$defs/Trip" } },
        $defs: {
          Trip: { type: "object", properties: { legs: { type: "array", items: { $ref: "#/$defs/Leg" } } } },
          Leg: { type: "object", properties: { from: { $ref: "#/$defs/Place" }, to: { $ref: "#/$defs/Place" } } },
          Place: { type: "string", $comment: "a city name" }
        }
      })
      assert.deepStrictEqual(schema, {
        type: "object",
        properties: {
          trip: {
            type: "object",
            properties: {
              legs: {
                type: "array",
                items: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } } }
              }
            }
          }
        }
      })
      walkSchemas(schema, (node) => {
        for (const keyword of ["$ref", "$defs", "definitions", "$schema", "$id"]) assert.notProperty(node, keyword)
      })
    })

    it("an Effect schema reusing an identified struct is inlined with its descriptions", () => {
      const Location = Schema.Struct({ lat: Schema.Finite, lon: Schema.Finite }).annotate({ identifier: "Location" })
      const expected = {
        type: "object",
        properties: { lat: { type: "number" }, lon: { type: "number" } },
        required: ["lat", "lon"],
        additionalProperties: true
      }
      assert.deepStrictEqual(
        project(Schema.Struct({ start: Location, end: Location.annotate({ description: "where to stop" }) })),
        {
          type: "object",
          properties: { start: expected, end: { ...expected, description: "where to stop" } },
          required: ["start", "end"],
          additionalProperties: true
        }
      )
    })

    it("refs in draft-07 dependencies are inlined; name lists are kept", () => {
      assert.deepStrictEqual(
        project({
          type: "object",
          properties: { card: { type: "string" }, billing: { type: "string" } },
          dependencies: { card: ["billing"], billing: { $ref: "#/definitions/Billing" } },
          definitions: { Billing: { required: ["card"] } }
        }),
        {
          type: "object",
          properties: { card: { type: "string" }, billing: { type: "string" } },
          dependencies: { card: ["billing"], billing: { required: ["card"] } }
        }
      )
    })

    it("a Schema.Class is projected through its encoded side", () => {
      class Person extends Schema.Class<Person>("Person")({ name: Schema.String }) {}
      assert.deepStrictEqual(project(Person), {
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
        additionalProperties: true
      })
    })

    it("a recursive Effect schema is an issue naming the path of the cycle", () => {
      interface Tree {
        readonly name: string
        readonly children: ReadonlyArray<Tree>
      }
      const Tree: Schema.Codec<Tree> = Schema.Struct({
        name: Schema.String,
        children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
      })
      assert.deepStrictEqual(projectIssue(Tree), {
        path: "properties.children.items",
        message: 'the schema is recursive: "#/$defs/Objects_" refers to itself (at properties.children.items)'
      })
    })

    it.each([
      [
        "a ref to the root",
        { type: "object", properties: { sub: { type: "array", items: { $ref: "#" } } } },
        "properties.sub.items"
      ],
      [
        "a pointer ref into its own subtree",
        {
          type: "object",
          properties: { node: { type: "object", properties: { next: { $ref: "#/properties/node" } } } }
        },
        "properties.node.properties.next"
      ],
      [
        "mutually recursive definitions",
        {
          type: "object",
          properties: { a: { $ref: "#/$defs/A" } },
          $defs: {
            A: { type: "object", properties: { b: { $ref: "#/$defs/B" } } },
            B: { anyOf: [{ type: "null" }, { $ref: "#/$defs/A" }] }
          }
        },
        "properties.a.properties.b.anyOf[1]"
      ]
    ])("a recursive JSON Schema (%s) is an issue at its path", (_, schema, path) => {
      const issue = projectIssue(schema)
      assert.strictEqual("path" in issue ? issue.path : undefined, path)
      assert.isTrue("message" in issue && issue.message.startsWith("the schema is recursive"))
    })

    it("a JavaScript object cycle (no $ref) is an issue too, not a stack overflow", () => {
      const node: Record<string, unknown> = { type: "object" }
      node.properties = { self: node }
      assert.deepStrictEqual(projectIssue(node), {
        path: "properties.self",
        message: "the schema is recursive (at properties.self)"
      })
    })

    it("dangling, remote and dynamic refs are issues", () => {
      assert.deepStrictEqual(projectIssue({ type: "object", properties: { a: { $ref: "#/$defs/Missing" } } }), {
        path: "properties.a",
        message: '`$ref` "#/$defs/Missing" points to nothing (at properties.a)'
      })
      assert.deepStrictEqual(projectIssue({ type: "object", properties: { a: { $ref: "https://x.test/a.json" } } }), {
        path: "properties.a",
        message: '`$ref` "https://x.test/a.json" is not a local reference (at properties.a)'
      })
      assert.deepStrictEqual(projectIssue({ type: "object", properties: { a: { $dynamicRef: "#node" } } }), {
        path: "properties.a",
        message: "`$dynamicRef` is not supported (at properties.a)"
      })
    })

    it("shared refs that would inline to a huge schema are an issue, not an out-of-memory", () => {
      const $defs: Record<string, unknown> = { L0: { type: "string" } }
      for (let level = 1; level <= 30; level++) {
        $defs[`L${level}`] = {
          type: "object",
          properties: { a: { $ref: `#/$defs/L${level - 1}` }, b: { $ref: `#/$defs/L${level - 1}` } }
        }
      }
      const issue = projectIssue({ type: "object", properties: { top: { $ref: "#/$defs/L30" } }, $defs })
      assert.isTrue("message" in issue && issue.message.startsWith("the schema has more than 10000 nodes"))
    })

    it("a property named __proto__ (as JSON.parse makes it) is kept as a property, and the others with it", () => {
      const input = JSON.parse(
        '{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"number"}},"required":["__proto__"]}'
      ) as Record<string, unknown>
      for (const strict of [false, true]) {
        const properties = project(input, { strict }).properties
        assert.strictEqual(Object.getPrototypeOf(properties), Object.prototype, `strict: ${strict}`)
        assert.deepStrictEqual(Object.keys(properties), ["__proto__", "a"], `strict: ${strict}`)
        assert.deepStrictEqual(Object.getOwnPropertyDescriptor(properties, "__proto__")?.value, { type: "string" })
      }
    })

    it("the input schema is not mutated", () => {
      const input = {
        type: "object",
        properties: { a: { $ref: "#/$defs/A" }, b: { type: "object" } },
        $defs: { A: { type: "object" } }
      }
      const copy = structuredClone(input)
      project(input, { strict: true })
      assert.deepStrictEqual(input, copy)
    })
  })

  describe("Effect schemas", () => {
    it("keeps descriptions, literals, nullables, arrays and optional keys; simplifies Schema.Number", () => {
      assert.deepStrictEqual(
        project(
          Schema.Struct({
            city: Schema.String.annotate({ description: "the city" }),
            days: Schema.Int.annotate({ description: "how many days" }),
            budget: Schema.Number,
            rate: Schema.Finite.annotate({ description: "a rate" }),
            amount: Schema.Number.annotateKey({ description: "the amount" }),
            unit: Schema.Literals(["c", "f"]),
            note: Schema.NullOr(Schema.String),
            scores: Schema.Array(Schema.Number),
            limit: Schema.optionalKey(Schema.Number),
            offset: Schema.optional(Schema.Number)
          }).annotate({ description: "forecast request" })
        ),
        {
          type: "object",
          description: "forecast request",
          properties: {
            city: { type: "string", description: "the city" },
            days: {
              type: "integer",
              description: "how many days",
              minimum: -9007199254740991,
              maximum: 9007199254740991
            },
            budget: { type: "number" },
            rate: { type: "number", description: "a rate" },
            amount: { type: "number", description: "the amount" },
            unit: { type: "string", enum: ["c", "f"] },
            note: { anyOf: [{ type: "string" }, { type: "null" }] },
            scores: { type: "array", items: { type: "number" } },
            limit: { type: "number" },
            offset: { anyOf: [{ type: "number" }, { type: "null" }] }
          },
          required: ["city", "days", "budget", "rate", "amount", "unit", "note", "scores"],
          additionalProperties: true
        }
      )
    })

    it("no Infinity/NaN string branch is left anywhere", () => {
      const schema = project(
        Schema.Struct({
          matrix: Schema.Array(Schema.Array(Schema.Number)),
          union: Schema.Union([Schema.Number, Schema.Boolean]),
          record: Schema.Record(Schema.String, Schema.Number)
        })
      )
      walkSchemas(schema, (node) => assert.notDeepEqual(node.enum, ["Infinity", "-Infinity", "NaN"]))
      assert.deepStrictEqual(schema.properties.union, { anyOf: [{ type: "number" }, { type: "boolean" }] })
    })

    it("_approval_token never appears in the schema", () => {
      assert.deepStrictEqual(project(Schema.Struct({ hotelId: Schema.String, _approval_token: Schema.String })), {
        type: "object",
        properties: { hotelId: { type: "string" } },
        required: ["hotelId"],
        additionalProperties: true
      })
      assert.deepStrictEqual(
        project(
          {
            type: "object",
            properties: { hotelId: { type: "string" }, _approval_token: { type: "string" } },
            required: ["hotelId", "_approval_token"]
          },
          { strict: true }
        ),
        {
          type: "object",
          properties: { hotelId: { type: "string" } },
          required: ["hotelId"],
          additionalProperties: false
        }
      )
    })
  })

  describe("strict mode", () => {
    it("closes every object, requires every property, and makes optional ones nullable", () => {
      assert.deepStrictEqual(
        project(
          Schema.Struct({
            city: Schema.String,
            unit: Schema.optionalKey(Schema.Literals(["c", "f"])),
            days: Schema.optionalKey(Schema.Int),
            note: Schema.optional(Schema.String),
            filters: Schema.optionalKey(
              Schema.Struct({ tag: Schema.optionalKey(Schema.String), exact: Schema.Boolean })
            ),
            anything: Schema.optionalKey(Schema.Unknown)
          }),
          { strict: true }
        ),
        {
          type: "object",
          properties: {
            city: { type: "string" },
            unit: { type: ["string", "null"], enum: ["c", "f", null] },
            days: { type: ["integer", "null"], minimum: -9007199254740991, maximum: 9007199254740991 },
            note: { anyOf: [{ type: "string" }, { type: "null" }] },
            filters: {
              type: ["object", "null"],
              properties: { tag: { type: ["string", "null"] }, exact: { type: "boolean" } },
              required: ["tag", "exact"],
              additionalProperties: false
            },
            anything: { anyOf: [{}, { type: "null" }] }
          },
          required: ["city", "unit", "days", "note", "filters", "anything"],
          additionalProperties: false
        }
      )
    })

    it("an object schema without type gets type object", () => {
      assert.deepStrictEqual(
        project({ type: "object", properties: { a: { properties: { b: { type: "string" } } } } }, { strict: true }),
        {
          type: "object",
          properties: {
            a: {
              type: ["object", "null"],
              properties: { b: { type: ["string", "null"] } },
              required: ["b"],
              additionalProperties: false
            }
          },
          required: ["a"],
          additionalProperties: false
        }
      )
    })

    it("a record cannot be strict: an issue at its path", () => {
      assert.deepStrictEqual(
        projectIssue(Schema.Struct({ labels: Schema.Record(Schema.String, Schema.String) }), { strict: true }),
        {
          path: "properties.labels",
          message:
            "strict mode cannot express an object whose extra keys carry a schema (a record); use strict: false (at properties.labels)"
        }
      )
      assert.deepStrictEqual(project(Schema.Struct({ labels: Schema.Record(Schema.String, Schema.String) })), {
        type: "object",
        properties: { labels: { type: "object", properties: {}, additionalProperties: { type: "string" } } },
        required: ["labels"],
        additionalProperties: true
      })
    })
  })
})

describe("Tool.toolkit", () => {
  const entry = (key: string, parameters: Tool.Parameters = { type: "object" }): Tool.Entry => ({
    key,
    description: `the ${key} tool`,
    parameters
  })
  const names = (kit: Tool.Toolkit) => kit.tools.map((tool) => [tool.key, tool.name] as const)

  describe("C11: names valid for the API", () => {
    it("dots, slashes and other characters become underscores; valid names stay", () => {
      const kit = Tool.toolkit([
        entry("calendar.respondToEvent"),
        entry("user-profile/update"),
        entry("hosting_restartNode.jsApplicationV1"),
        entry("get weather für Wien"),
        entry("already_valid-Name9")
      ])
      assert.deepStrictEqual(names(kit), [
        ["calendar.respondToEvent", "calendar_respondToEvent"],
        ["user-profile/update", "user-profile_update"],
        ["hosting_restartNode.jsApplicationV1", "hosting_restartNode_jsApplicationV1"],
        ["get weather für Wien", "get_weather_f_r_Wien"],
        ["already_valid-Name9", "already_valid-Name9"]
      ])
      assert.deepStrictEqual(kit.excluded, [])
      assert.strictEqual(kit.keyOf("calendar_respondToEvent"), "calendar.respondToEvent")
      assert.strictEqual(kit.keyOf("user-profile_update"), "user-profile/update")
      assert.strictEqual(kit.keyOf("calendar.respondToEvent"), undefined)
      assert.strictEqual(kit.keyOf("read_file"), undefined)
    })

    it("a 67-character name is cut to 64 with a stable hash of the original key", () => {
      const key = `srv_mcp_${"a".repeat(59)}`
      assert.strictEqual(key.length, 67)
      const kit = Tool.toolkit([entry(key)])
      const name = kit.tools[0]?.name ?? ""
      assert.strictEqual(name.length, 64)
      assert.match(name, /^srv_mcp_a{47}_[0-9a-f]{8}$/)
      assert.strictEqual(name, Tool.modelName(key))
      assert.strictEqual(Tool.toolkit([entry("other"), entry(key)]).tools[1]?.name, name)
      assert.strictEqual(kit.keyOf(name), key)
    })

    it("a 64-character name is kept as is", () => {
      const key = "b".repeat(64)
      assert.strictEqual(Tool.modelName(key), key)
    })

    it("two long names sharing a 60-character prefix get distinct names", () => {
      const prefix = "p".repeat(60)
      const kit = Tool.toolkit([entry(`${prefix}_alpha`), entry(`${prefix}_beta`)])
      const [a, b] = kit.tools.map((tool) => tool.name)
      assert.notStrictEqual(a, b)
      assert.strictEqual(kit.keyOf(a ?? ""), `${prefix}_alpha`)
      assert.strictEqual(kit.keyOf(b ?? ""), `${prefix}_beta`)
    })

    it("a.b and a_b collide after mapping and are resolved the same whatever the order", () => {
      const forward = Tool.toolkit([entry("a.b"), entry("a_b")])
      const backward = Tool.toolkit([entry("a_b"), entry("a.b")])
      const hashed = forward.tools[0]?.name ?? ""
      assert.match(hashed, /^a_b_[0-9a-f]{8}$/)
      assert.deepStrictEqual(names(forward), [
        ["a.b", hashed],
        ["a_b", "a_b"]
      ])
      assert.deepStrictEqual(names(backward), [
        ["a_b", "a_b"],
        ["a.b", hashed]
      ])
      assert.strictEqual(forward.keyOf("a_b"), "a_b")
      assert.strictEqual(forward.keyOf(hashed), "a.b")
      assert.strictEqual(backward.keyOf(hashed), "a.b")
    })

    it("when no key owns the clashing name, all of them are hashed", () => {
      const kit = Tool.toolkit([entry("a.b"), entry("a/b"), entry("a b")])
      const [x, y, z] = kit.tools.map((tool) => tool.name)
      for (const name of [x, y, z]) assert.match(name ?? "", /^a_b_[0-9a-f]{8}$/)
      assert.strictEqual(new Set([x, y, z]).size, 3)
    })

    it("even keys whose 8-hex-digit hashes collide get distinct names, whatever the order", () => {
      // Pairs found by search: same FNV-1a hash, and the same name before the hash.
      const long = [`${"q".repeat(60)}93819`, `${"q".repeat(60)}682066`]
      const short = ["t/t/t.t.t.t.t/t/t/t.t/t/t/t.t.t/t/t/t/t/t/t/t", "t.t/t.t.t/t.t/t/t/t/t.t.t/t/t/t/t.t/t/t/t/t/t"]
      for (const keys of [long, short]) {
        const forward = Tool.toolkit(keys.map((key) => entry(key)))
        const backward = Tool.toolkit([...keys].reverse().map((key) => entry(key)))
        const [a, b] = forward.tools.map((tool) => tool.name)
        assert.notStrictEqual(a, b)
        assert.deepStrictEqual(
          backward.tools.map((tool) => tool.name),
          [b, a]
        )
        for (const tool of forward.tools) {
          assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/)
          assert.strictEqual(forward.keyOf(tool.name), tool.key)
        }
      }
    })

    it("one bad tool never breaks the others", () => {
      interface Node {
        readonly next: ReadonlyArray<Node>
      }
      const Node: Schema.Codec<Node> = Schema.Struct({
        next: Schema.Array(Schema.suspend((): Schema.Codec<Node> => Node))
      })
      const kit = Tool.toolkit([
        entry("good"),
        entry("", { type: "object" }),
        entry("recursive", Node),
        entry("good"),
        entry("dangling", { type: "object", properties: { a: { $ref: "#/nope" } } }),
        entry("other", Schema.Struct({ q: Schema.String }))
      ])
      assert.deepStrictEqual(names(kit), [
        ["good", "good"],
        ["other", "other"]
      ])
      assert.deepStrictEqual(kit.excluded, [
        { key: "", reason: "the key is empty, so the tool has no name" },
        {
          key: "recursive",
          reason:
            'its parameters cannot be offered to a model: the schema is recursive: "#/$defs/Objects_" refers to itself (at properties.next.items)'
        },
        { key: "good", reason: 'the key "good" is offered twice; the first entry is kept' },
        {
          key: "dangling",
          reason: 'its parameters cannot be offered to a model: `$ref` "#/nope" points to nothing (at properties.a)'
        }
      ])
    })

    it("tools carry key, description, projected parameters and strict", () => {
      const kit = Tool.toolkit([
        { key: "weather/get_forecast", description: "Get the forecast", parameters: { type: "object" }, strict: true },
        { key: "nights", description: "Count nights", parameters: Schema.Struct({ checkIn: Schema.String }) }
      ])
      assert.deepStrictEqual(kit.tools, [
        {
          name: "weather_get_forecast",
          key: "weather/get_forecast",
          description: "Get the forecast",
          parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
          strict: true
        },
        {
          name: "nights",
          key: "nights",
          description: "Count nights",
          parameters: {
            type: "object",
            properties: { checkIn: { type: "string" } },
            required: ["checkIn"],
            additionalProperties: true
          },
          strict: false
        }
      ])
    })
  })

  describe("C12: the same tool name on two MCP servers", () => {
    it("namespaced keys become distinct names, each mapped back to its own server", () => {
      const kit = Tool.toolkit([
        { key: "srv-a/send_email", description: "Send with A", parameters: { type: "object" } },
        { key: "srv-b/send_email", description: "Send with B", parameters: { type: "object" } }
      ])
      assert.deepStrictEqual(
        kit.tools.map((tool) => [tool.name, tool.description]),
        [
          ["srv-a_send_email", "Send with A"],
          ["srv-b_send_email", "Send with B"]
        ]
      )
      assert.strictEqual(kit.keyOf("srv-a_send_email"), "srv-a/send_email")
      assert.strictEqual(kit.keyOf("srv-b_send_email"), "srv-b/send_email")
    })

    it("srv-a/send_email and srv-a.send_email do not share a name", () => {
      const kit = Tool.toolkit([entry("srv-a/send_email"), entry("srv-a.send_email")])
      const [a, b] = kit.tools.map((tool) => tool.name)
      assert.notStrictEqual(a, b)
      assert.strictEqual(kit.keyOf(a ?? ""), "srv-a/send_email")
      assert.strictEqual(kit.keyOf(b ?? ""), "srv-a.send_email")
    })
  })

  describe("properties", () => {
    const validName = /^[a-zA-Z0-9_-]{1,64}$/
    const keyArbitrary = fc.oneof(
      fc.string({ minLength: 1, maxLength: 90 }),
      fc.string({ minLength: 60, maxLength: 130 }),
      fc.stringMatching(/^p{58}[a-z.]{0,12}$/),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }),
      fc.stringMatching(/^[a-z./_ -]{1,70}$/)
    )

    it("any non-empty key maps to a name valid for the API", () => {
      fc.assert(
        fc.property(keyArbitrary, (key) => {
          assert.match(Tool.modelName(key), validName)
          const kit = Tool.toolkit([entry(key)])
          assert.match(kit.tools[0]?.name ?? "", validName)
        })
      )
    })

    it("distinct keys get distinct valid names, keyOf round-trips, and order does not matter", () => {
      fc.assert(
        fc.property(
          fc
            .uniqueArray(keyArbitrary, { minLength: 1, maxLength: 12 })
            .chain((keys) =>
              fc.tuple(fc.constant(keys), fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }))
            ),
          ([keys, shuffled]) => {
            const kit = Tool.toolkit(keys.map((key) => entry(key)))
            assert.strictEqual(kit.tools.length, keys.length)
            const toolNames = kit.tools.map((tool) => tool.name)
            assert.strictEqual(new Set(toolNames).size, keys.length)
            for (const tool of kit.tools) {
              assert.match(tool.name, validName)
              assert.strictEqual(kit.keyOf(tool.name), tool.key)
            }
            const nameOf = new Map(kit.tools.map((tool) => [tool.key, tool.name]))
            const other = Tool.toolkit(shuffled.map((key) => entry(key)))
            for (const tool of other.tools) assert.strictEqual(tool.name, nameOf.get(tool.key))
          }
        )
      )
    })

    it("clash-prone keys (same characters up to . / _) still get distinct names", () => {
      fc.assert(
        fc.property(fc.uniqueArray(fc.stringMatching(/^[ab][._/][ab]$/), { minLength: 2, maxLength: 8 }), (keys) => {
          const kit = Tool.toolkit(keys.map((key) => entry(key)))
          assert.strictEqual(new Set(kit.tools.map((tool) => tool.name)).size, keys.length)
          for (const tool of kit.tools) assert.strictEqual(kit.keyOf(tool.name), tool.key)
        })
      )
    })
  })
})
