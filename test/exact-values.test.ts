/**
 * Argument values arrive exactly as the model sent them, or are refused naming the field (C74, C75):
 *
 * - integers at and beyond ±(2^53 − 1), 19-digit ids included, sent as JSON numbers to Number, BigInt and
 *   string parameters through a chat turn: a Number beyond 2^53 is VALIDATION quoting the digits sent (never a
 *   rounded run), a BigInt and a string get the exact digits; an MCP tool's integer the same;
 * - dates: `Schema.Date` is offered as `format: "date-time"` and decoded from that string; a date-time without
 *   an offset is read in UTC, on every host time zone, for `Schema.Date` and `Schema.DateFromString`;
 * - a property over generated schemas with dates, big integers and decimal strings: every value the offered
 *   schema admits decodes, to the same value under three host time zones.
 */
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { InMemoryMcp, ScriptedModel } from "@rolecraft/testing"
import { Effect, Exit, Schema } from "effect"
import * as fc from "fast-check"
import * as Conversion from "../packages/core/src/internal/schema/decode.ts"
import { parseArguments } from "../packages/core/src/internal/tool/arguments.ts"
import { jsonSchema } from "../packages/core/src/internal/tool/jsonSchema.ts"

const integers = [
  "9007199254740991",
  "-9007199254740991",
  "9007199254740992",
  "9007199254740993",
  "-9007199254740993",
  "2512292042121000001",
  "1234567890123456789",
  "-9223372036854775808"
]

// Whether a double holds the integer exactly (2^53 itself is one; 2^53 + 1 is not).
const safe = (digits: string) => BigInt(Number(digits)) === BigInt(digits)

/** Runs one chat turn whose model calls `tool` with the raw `args` text; what the action received, and the answer. */
const turn = (action: Action.Any, args: string) =>
  Effect.gen(function* () {
    const role = Role.make({
      identity: { name: "ids", goal: "Look ids up", domain: "ids" },
      actions: { lookup: action }
    })
    const agent = yield* Agent.make({ id: "ids", roles: [role] })
    const scripted = yield* ScriptedModel.make([
      ScriptedModel.toolCalls([{ name: "lookup", arguments: args }]),
      ScriptedModel.reply("done")
    ])
    yield* agent.chat("look it up").pipe(Effect.provide(scripted.layer))
    const [, second] = yield* scripted.requests
    return second?.messages.find((message) => message.role === "tool")?.content ?? ""
  }).pipe(Effect.scoped)

describe("C74: an integer beyond 2^53 never runs as another number", () => {
  for (const digits of integers) {
    it.effect(`${digits}: Number, BigInt and string parameters`, () =>
      Effect.gen(function* () {
        const seen: Array<unknown> = []
        const record = (value: unknown) => {
          seen.push(value)
          return "found"
        }
        const asNumber = yield* turn(
          Action.local({ description: "by id", parameters: { id: Schema.Number }, run: ({ id }) => record(id) }),
          `{"id":${digits}}`
        )
        if (safe(digits)) {
          assert.deepStrictEqual(seen, [Number(digits)])
        } else {
          assert.deepStrictEqual(seen, [])
          assert.include(asNumber, "VALIDATION")
          assert.include(asNumber, `id: ${digits} is beyond 2^53; a Number cannot hold it exactly`)
        }
        seen.length = 0
        yield* turn(
          Action.local({ description: "by id", parameters: { id: Schema.BigInt }, run: ({ id }) => record(id) }),
          `{"id":${digits}}`
        )
        assert.deepStrictEqual(seen, [BigInt(digits)])
        seen.length = 0
        yield* turn(
          Action.local({ description: "by id", parameters: { id: Schema.BigInt }, run: ({ id }) => record(id) }),
          `{"id":"${digits}"}`
        )
        assert.deepStrictEqual(seen, [BigInt(digits)])
        seen.length = 0
        yield* turn(
          Action.local({ description: "by id", parameters: { id: Schema.String }, run: ({ id }) => record(id) }),
          `{"id":${digits}}`
        )
        // A string parameter given a number: a safe one is refused as before; one a double cannot hold keeps its digits.
        assert.deepStrictEqual(seen, safe(digits) ? [] : [digits])
      })
    )
  }

  it.live("an MCP tool's integer parameter: VALIDATION quoting the digits, nothing reaches the server", () => {
    const received: Array<unknown> = []
    const factory = () => {
      const server = new Server({ name: "ids", version: "1.0.0" }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [
          { name: "get", inputSchema: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] } }
        ]
      }))
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        received.push(request.params.arguments)
        return { content: [{ type: "text" as const, text: "ok" }] }
      })
      return server
    }
    return Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "ids", goal: "Look ids up", domain: "ids" },
        actions: { ids: Action.mcpTool({ description: "Ids", server: "memory://ids" }) }
      })
      const agent = yield* Agent.make({ id: "ids", roles: [role] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "ids_get", arguments: `{"id":2512292042121000001}` }]),
        ScriptedModel.reply("done")
      ])
      yield* agent.chat("get it").pipe(Effect.provide(scripted.layer))
      const [, second] = yield* scripted.requests
      const answer = second?.messages.find((message) => message.role === "tool")?.content ?? ""
      assert.include(answer, "id: 2512292042121000001 is beyond 2^53; a Number cannot hold it exactly")
      assert.deepStrictEqual(received, [])
      // The history replays the arguments exactly as the model sent them.
      const call = second?.messages.find((message) => message.role === "assistant")
      assert.include(JSON.stringify(call), "2512292042121000001")
    }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://ids": factory })))
  })
})

const zones = ["UTC", "Asia/Kolkata", "America/New_York"]

/** Runs `f` under each host time zone, restoring the zone after. */
const underZones = <A>(f: () => A): ReadonlyArray<A> => {
  const before = process.env.TZ
  try {
    return zones.map((zone) => {
      process.env.TZ = zone
      return f()
    })
  } finally {
    if (before === undefined) delete process.env.TZ
    else process.env.TZ = before
  }
}

const decodeSync = (schema: Schema.Top, args: string) => {
  const parsed = parseArguments(args, { tool: "t" })
  if (parsed._tag === "Failure") return parsed.failure.message
  const exit = Effect.runSyncExit(
    Conversion.decode(schema, parsed.success, { action: "t" }) as Effect.Effect<unknown, unknown>
  )
  return Exit.isSuccess(exit)
    ? canonical(exit.value)
    : `refused: ${String(Exit.isFailure(exit) && (exit.cause as unknown))}`
}

/** A decoded value in a form to compare: dates as ISO instants, bigints as their digits. */
const canonical = (value: unknown): unknown =>
  value instanceof Date
    ? `date:${Number.isNaN(value.getTime()) ? "invalid" : value.toISOString()}`
    : typeof value === "bigint"
      ? `bigint:${value}`
      : Array.isArray(value)
        ? value.map(canonical)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, canonical(item)]))
          : value

describe("C75: dates offered as date-time strings and read the same on every host", () => {
  it("Schema.Date and Schema.DateFromString are offered as format date-time", () => {
    const offered = jsonSchema(Schema.Struct({ at: Schema.Date, from: Schema.DateFromString }), { strict: false })
    assert.deepStrictEqual(offered._tag === "Success" && offered.success.properties, {
      at: { type: "string", format: "date-time" },
      from: { type: "string", format: "date-time" }
    })
  })

  const table = [
    ["2026-05-12T10:00:00", "2026-05-12T10:00:00.000Z"],
    ["2026-05-12", "2026-05-12T00:00:00.000Z"],
    ["2026-05-12T10:00:00+02:00", "2026-05-12T08:00:00.000Z"],
    ["2026-05-12 10:00", "2026-05-12T10:00:00.000Z"]
  ] as const
  for (const schema of [Schema.Date, Schema.DateFromString]) {
    for (const [sent, instant] of table) {
      it(`${schema === Schema.Date ? "Schema.Date" : "Schema.DateFromString"} given ${sent}: ${instant} under ${zones.join(", ")}`, () => {
        const results = underZones(() => decodeSync(Schema.Struct({ at: schema }), JSON.stringify({ at: sent })))
        assert.deepStrictEqual(
          results,
          zones.map(() => ({ at: `date:${instant}` }))
        )
      })
    }
  }

  it("a string that is no date is VALIDATION naming the field", () => {
    const refused = decodeSync(Schema.Struct({ at: Schema.Date }), `{"at":"next tuesday"}`)
    assert.match(String(refused), /refused/)
    assert.include(String(refused), "at")
  })
})

// The property: schemas with dates, big integers and decimal strings among plain leaves, nested.
type Leaf = "date" | "dateFromString" | "bigint" | "decimal" | "int" | "string" | "boolean"
type Shape =
  | { readonly kind: "leaf"; readonly leaf: Leaf }
  | { readonly kind: "array"; readonly item: Shape }
  | { readonly kind: "nullOr"; readonly inner: Shape }
  | { readonly kind: "struct"; readonly fields: ReadonlyArray<readonly [string, Shape, boolean]> }

const { shape } = fc.letrec<{ shape: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .constantFrom<Leaf>("date", "dateFromString", "bigint", "decimal", "int", "string", "boolean")
      .map((leaf): Shape => ({ kind: "leaf", leaf })),
    tie("shape").map((item): Shape => ({ kind: "array", item })),
    tie("shape").map((inner): Shape => ({ kind: "nullOr", inner })),
    fc
      .uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), tie("shape"), fc.boolean()), {
        maxLength: 3,
        selector: ([name]) => name
      })
      .map((fields): Shape => ({ kind: "struct", fields }))
  )
}))

const decimal = Schema.BigDecimal

const schemaOf = (node: Shape): Schema.Top => {
  switch (node.kind) {
    case "leaf":
      return {
        date: Schema.Date,
        dateFromString: Schema.DateFromString,
        bigint: Schema.BigInt,
        decimal,
        int: Schema.Int,
        string: Schema.String,
        boolean: Schema.Boolean
      }[node.leaf]
    case "array":
      return Schema.Array(schemaOf(node.item))
    case "nullOr":
      return Schema.NullOr(schemaOf(node.inner))
    case "struct":
      return Schema.Struct(
        Object.fromEntries(
          node.fields.map(([name, field, optional]) => [
            name,
            optional ? Schema.optionalKey(schemaOf(field)) : schemaOf(field)
          ])
        )
      )
  }
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** A JSON text fragment for a value: numbers written as given (`raw`), so 19-digit integers go out as numbers. */
interface Raw {
  readonly raw: string
}
const write = (value: unknown): string =>
  isRecord(value) && typeof value.raw === "string" && Object.keys(value).length === 1
    ? value.raw
    : Array.isArray(value)
      ? `[${value.map(write).join(",")}]`
      : isRecord(value)
        ? `{${Object.entries(value)
            .map(([key, item]) => `${JSON.stringify(key)}:${write(item)}`)
            .join(",")}}`
        : JSON.stringify(value)

const instants = fc.date({
  min: new Date("1970-01-01T00:00:00Z"),
  max: new Date("2200-01-01T00:00:00Z"),
  noInvalidDate: true
})

/** Values the offered JSON Schema admits (the subset the projection writes), as a model would write them. */
const sent = (node: unknown): fc.Arbitrary<unknown> => {
  if (!isRecord(node)) throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  if (Array.isArray(node.anyOf)) return fc.oneof(...node.anyOf.map(sent))
  // An empty struct takes any value but null.
  if (isRecord(node.not) && node.not.type === "null") return fc.constantFrom<unknown>({}, { a: 1 }, "x", 1, true)
  if (Array.isArray(node.type)) return fc.oneof(...node.type.map((type) => sent({ ...node, type })))
  const patterns: ReadonlyArray<unknown> = [
    node.pattern,
    ...(Array.isArray(node.allOf) ? node.allOf.map((part) => (isRecord(part) ? part.pattern : undefined)) : [])
  ]
  switch (node.type) {
    case "string":
      if (node.format === "date-time")
        return fc.oneof(
          instants.map((date) => date.toISOString()),
          instants.map((date) => date.toISOString().slice(0, 19)),
          instants.map((date) => date.toISOString().slice(0, 10)),
          instants.map((date) => `${date.toISOString().slice(0, 19)}+05:30`)
        )
      if (patterns.includes("^-?\\d+$"))
        return fc.oneof(
          fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
          // A model often writes a big id as a JSON number.
          fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n): Raw => ({ raw: String(n) }))
        )
      if (patterns.includes("^-?\\d+(\\.\\d+)?$"))
        return fc.oneof(
          fc.stringMatching(/^-?\d{1,25}\.\d{1,25}$/),
          fc.stringMatching(/^-?[1-9]\d{16,25}\.\d{1,20}$/).map((text): Raw => ({ raw: text }))
        )
      return fc.string({ maxLength: 6 })
    case "integer":
      return fc.integer({ min: -1_000_000, max: 1_000_000 })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(sent(node.items ?? {}), { maxLength: 2 })
    case "object": {
      const properties = isRecord(node.properties) ? node.properties : {}
      const required = Array.isArray(node.required) ? (node.required as ReadonlyArray<string>) : []
      return fc.record(Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, sent(schema)])), {
        requiredKeys: [...required]
      })
    }
    default:
      throw new Error(`unexpected schema node ${JSON.stringify(node)}`)
  }
}

const numRuns = Number(process.env.FAULTS_RUNS ?? 150)

describe("C75: what is offered and what is decoded agree", () => {
  it("every value an offered schema with dates, big integers and decimals admits decodes, the same on every host", () => {
    fc.assert(
      fc.property(
        shape
          .map((root): Shape => (root.kind === "struct" ? root : { kind: "struct", fields: [["value", root, false]] }))
          .chain((root) => {
            const schema = schemaOf(root)
            const offered = jsonSchema(schema, { strict: false })
            if (offered._tag === "Failure") throw new Error(offered.failure.message)
            return sent(offered.success).map((value) => ({ schema, text: write(value) }))
          }),
        ({ schema, text }) => {
          const results = underZones(() => decodeSync(schema, text))
          for (const result of results) {
            if (typeof result === "string") throw new Error(`${text} was refused: ${result}`)
          }
          assert.deepStrictEqual(results[1], results[0])
          assert.deepStrictEqual(results[2], results[0])
          // Digits arrive as sent: every big integer and decimal of the text is in what was decoded.
          const decoded = JSON.stringify(results[0])
          for (const digits of text.match(/(?<![\d.])\d{17,}(?![\d.])/g) ?? []) assert.include(decoded, digits)
        }
      ),
      { numRuns }
    )
  })
})
