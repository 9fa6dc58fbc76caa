import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as JsonSchema from "../../../src/internal/tool/jsonSchema.ts"

const project = (
  parameters: JsonSchema.Parameters,
  options?: { readonly strict?: boolean; readonly served?: boolean }
) => Result.getOrThrowWith(JsonSchema.jsonSchema(parameters, options), (issue) => new Error(issue.message))

const projectIssue = (parameters: JsonSchema.Parameters, options?: { readonly strict?: boolean }) =>
  Result.match(JsonSchema.jsonSchema(parameters, options), {
    onSuccess: (schema) => ({ unexpected: schema }),
    onFailure: (issue) => ({ path: issue.path, message: issue.message })
  })

const walkSchemas = (node: unknown, visit: (node: Record<string, unknown>) => void): void => {
  if (typeof node !== "object" || node === null) return
  if (!Array.isArray(node)) visit(node as Record<string, unknown>)
  for (const value of Object.values(node)) walkSchemas(value, visit)
}

describe("jsonSchema", () => {
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
        required: ["lat", "lon"]
      }
      assert.deepStrictEqual(
        project(Schema.Struct({ start: Location, end: Location.annotate({ description: "where to stop" }) })),
        {
          type: "object",
          properties: { start: expected, end: { ...expected, description: "where to stop" } },
          required: ["start", "end"]
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
        required: ["name"]
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
              description: "how many days"
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
          required: ["city", "days", "budget", "rate", "amount", "unit", "note", "scores"]
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
        required: ["hotelId"]
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

  describe("no noise a model pays for", () => {
    const Stay = Schema.Struct({
      nights: Schema.Int,
      guests: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
      rooms: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 })),
      rate: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(Number.MIN_SAFE_INTEGER)),
      extra: Schema.Struct({ note: Schema.String })
    })

    it("an integer's safe-integer bounds and additionalProperties: true are left out; a bound of its own stays", () => {
      const properties = {
        nights: { type: "integer" },
        guests: { type: "integer", minimum: 1 },
        rooms: { type: "integer", minimum: 1, maximum: 9 },
        // a number's bound is the author's, even at the safe-integer range's value
        rate: { type: "number", minimum: Number.MIN_SAFE_INTEGER },
        extra: { type: "object", properties: { note: { type: "string" } }, required: ["note"] }
      }
      assert.deepStrictEqual(project(Stay), {
        type: "object",
        properties,
        required: ["nights", "guests", "rooms", "rate", "extra"]
      })
    })

    it("served (Mcp.serve) and strict schemas leave them out too, keeping additionalProperties: false", () => {
      const served = project(Stay, { served: true }) as Record<string, unknown>
      const strict = project(Stay, { strict: true }) as Record<string, unknown>
      for (const schema of [served, strict]) {
        const text = JSON.stringify(schema)
        assert.notInclude(text, `"maximum":${Number.MAX_SAFE_INTEGER}`)
        assert.notInclude(text, '"additionalProperties":true')
        const properties = schema.properties as Record<string, unknown>
        assert.deepStrictEqual(
          [properties.nights, properties.guests],
          [{ type: "integer" }, { type: "integer", minimum: 1 }]
        )
        assert.strictEqual(schema.additionalProperties, false)
      }
    })

    it("an MCP tool's own safe-integer bounds and additionalProperties: true are left out as well", () => {
      assert.deepStrictEqual(
        project({
          type: "object",
          properties: { n: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 } },
          additionalProperties: true
        }),
        { type: "object", properties: { n: { type: "integer" } } }
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
            days: { type: ["integer", "null"] },
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
        required: ["labels"]
      })
    })
  })
})
