/**
 * C09, for its kind: `null` for an argument that is optional in the original schema means "absent", on every
 * action kind and whatever the model was shown (strict mode sends optional fields required-plus-nullable, so a
 * model sends `null` for them; models send `null` for optional fields without strict mode too). `null` for a
 * field that is required and not nullable is still VALIDATION.
 *
 * - A property over generated schemas (nested structs with optional fields, arrays, records, nullable values,
 *   literals) × strict or not × the two ways arguments are validated (an action's Effect Schema, through the
 *   agent's pipeline; an MCP tool's JSON Schema `inputSchema`, imported): every value the offered tool schema
 *   accepts, and every value a model sends with `null` for an optional field, is accepted, and decodes to the
 *   same value with those `null`s left out (a `null` the schema itself accepts stays).
 * - A table of every action kind (local, webService, llm, mcpTool on a real MCP SDK server whose schema has the
 *   field optional) × strict or not, through a chat turn over the real `openai` SDK and through a direct call:
 *   `{"query":"x","limit":null}` runs as `{query:"x"}` — nothing reaches a service, a server or a prompt as
 *   `null` — and `{"query":null}` is VALIDATION.
 */
import { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { ChatCompletionsServer as Server, InMemoryMcp } from "@rolecraft/testing"
import { Effect, Exit, Layer, Result, Schema } from "effect"
import * as fc from "fast-check"
import * as Conversion from "../../packages/core/src/internal/schema/decode.ts"
import { fromJsonSchema } from "../../packages/core/src/internal/schema/fromJsonSchema.ts"
import { jsonSchema } from "../../packages/core/src/internal/tool/jsonSchema.ts"
import * as LocalServer from "../../packages/core/test/support/LocalServer.ts"
import { type Shape, schemaOf, shapeArbitrary, valuesOf } from "../../packages/core/test/support/Shapes.ts"
import { openAiOn } from "../support/openai.ts"

const numRuns = Number(process.env.FAULTS_RUNS ?? 200)

type Struct = Extract<Shape, { readonly kind: "struct" }>

/** Generated parameters: a struct at the root (an action's parameters are an object). */
const structs = fc
  .tuple(shapeArbitrary, shapeArbitrary, fc.boolean())
  .map(
    ([first, second, optional]): Struct => ({
      kind: "struct",
      fields: [
        ["query", first, false],
        ["limit", second, optional]
      ]
    })
  )
  .chain((root) =>
    fc.oneof(
      fc.constant(root),
      shapeArbitrary.filter((shape): shape is Struct => shape.kind === "struct")
    )
  )

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** What a model may send for a shape: any value, with an optional field absent, `null`, or a value. */
const sentValuesOf = (shape: Shape): fc.Arbitrary<unknown> => {
  switch (shape.kind) {
    case "string":
      return fc.string({ maxLength: 6 })
    case "int":
      return fc.integer({ min: -1_000, max: 1_000 })
    case "finite":
      return fc.integer({ min: -1_000, max: 1_000 }).map((n) => n / 4)
    case "boolean":
      return fc.boolean()
    case "literals":
      return fc.constantFrom(...shape.values)
    case "array":
      return fc.array(sentValuesOf(shape.item), { maxLength: 3 })
    case "nullOr":
      return fc.oneof(fc.constant(null), sentValuesOf(shape.inner))
    case "record":
      return fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), sentValuesOf(shape.value), { maxKeys: 3 })
    case "struct": {
      const absent = Symbol("absent")
      return fc
        .tuple(
          ...shape.fields.map(([, field, optional]) =>
            optional ? fc.oneof(fc.constant(absent), fc.constant(null), sentValuesOf(field)) : sentValuesOf(field)
          )
        )
        .map((values) => {
          const out: Record<string, unknown> = {}
          shape.fields.forEach(([name], i) => {
            if (values[i] !== absent) Object.defineProperty(out, name, { value: values[i], enumerable: true })
          })
          return out
        })
    }
  }
}

/** Whether a shape's own values include `null`. */
const acceptsNull = (shape: Shape): boolean => shape.kind === "nullOr"

/** The value the arguments decode to: every `null` given for an optional field that does not take `null` left out. */
const expected = (shape: Shape, value: unknown): unknown => {
  if (value === null) return null
  switch (shape.kind) {
    case "array":
      return (value as ReadonlyArray<unknown>).map((item) => expected(shape.item, item))
    case "nullOr":
      return expected(shape.inner, value)
    case "record":
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, expected(shape.value, item)])
      )
    case "struct": {
      // An empty struct accepts any value but null (Effect's `Schema.Struct({})`), kept as it is.
      if (!isRecord(value) || shape.fields.length === 0) return value
      const out: Record<string, unknown> = {}
      for (const [name, field, optional] of shape.fields) {
        if (!Object.hasOwn(value, name)) continue
        const item = value[name]
        if (item === null && optional && !acceptsNull(field)) continue
        Object.defineProperty(out, name, { value: expected(field, item), enumerable: true })
      }
      return out
    }
    default:
      return value
  }
}

/** Values the offered tool schema accepts (strict or not), and values a model sends with `null`s. */
const argumentsFor = (shape: Struct, strict: boolean): fc.Arbitrary<unknown> => {
  const offered = jsonSchema(schemaOf(shape), { strict })
  return Result.isSuccess(offered) ? fc.oneof(valuesOf(offered.success), sentValuesOf(shape)) : sentValuesOf(shape)
}

describe("C09 property: null for an optional argument is absent, for every schema, kind and strict mode", () => {
  it("an action's parameters, through the agent's pipeline", async () => {
    const cases = fc
      .tuple(structs, fc.boolean())
      .chain(([shape, strict]) => fc.tuple(fc.constant(shape), fc.constant(strict), argumentsFor(shape, strict)))
    await fc.assert(
      fc.asyncProperty(cases, async ([shape, , args]) => {
        const echo = Action.local({
          description: "Echo the arguments",
          parameters: schemaOf(shape) as Schema.Struct<Schema.Struct.Fields>,
          run: (decoded) => decoded
        })
        const role = Role.make({ identity: { name: "echo", goal: "Echo", domain: "tests" }, actions: { echo } })
        const exit = await Effect.runPromiseExit(
          Effect.flatMap(Agent.make({ id: "null-as-absent", roles: [role] }), (agent) =>
            agent.executeAction("echo", args as Record<string, unknown>)
          ).pipe(Effect.scoped)
        )
        assert.isTrue(Exit.isSuccess(exit), `${JSON.stringify(shape)} refused ${JSON.stringify(args)}: ${String(exit)}`)
        if (Exit.isSuccess(exit)) assert.deepStrictEqual(exit.value, expected(shape, args), JSON.stringify(shape))
      }),
      { numRuns: Math.min(numRuns, 300) }
    )
  })

  it("an MCP tool's inputSchema, imported as the arguments are validated before the call", async () => {
    const cases = fc
      .tuple(structs, fc.boolean())
      .chain(([shape, strict]) => fc.tuple(fc.constant(shape), fc.constant(strict), argumentsFor(shape, strict)))
    await fc.assert(
      fc.asyncProperty(cases, async ([shape, , args]) => {
        // The server's own schema: optional fields are not `required` (the loose projection).
        const inputSchema = Result.getOrThrow(jsonSchema(schemaOf(shape)))
        const exit = await Effect.runPromiseExit(
          Conversion.decode(fromJsonSchema(inputSchema), args, { action: "server/tool" }) as Effect.Effect<unknown>
        )
        assert.isTrue(Exit.isSuccess(exit), `${JSON.stringify(shape)} refused ${JSON.stringify(args)}: ${String(exit)}`)
        if (Exit.isSuccess(exit)) assert.deepStrictEqual(exit.value, expected(shape, args), JSON.stringify(shape))
      }),
      { numRuns }
    )
  })
})

// =============================================================================
// Every kind, strict or not, over the wire
// =============================================================================

const Parameters = { query: Schema.String, limit: Schema.optionalKey(Schema.Int) }

const mcpSchema = {
  type: "object",
  properties: { query: { type: "string" }, limit: { type: "integer" } },
  required: ["query"]
} as const

type Kind = "local" | "webService" | "llm" | "mcpTool"

/** The kind's action named `find`, and what reached the service behind it (arguments, body, prompt). */
const setup = (kind: Kind) =>
  Effect.gen(function* () {
    const received: Array<unknown> = []
    const service = yield* LocalServer.start((request, response) => {
      received.push(JSON.parse(request.body))
      response.writeHead(200, { "content-type": "application/json" })
      response.end('{"found":1}')
    })
    const find =
      kind === "local"
        ? Action.local({
            description: "Find",
            parameters: Parameters,
            run: (args) => {
              received.push(args)
              return "found"
            }
          })
        : kind === "webService"
          ? Action.webService({
              description: "Find",
              parameters: Parameters,
              endpoint: `${service.url}/find`,
              method: "POST",
              paramType: "BODY"
            })
          : kind === "llm"
            ? Action.llm({ description: "Find", parameters: Parameters })
            : Action.mcpTool({ description: "Find", server: "memory://find" })
    const role = Role.make({ identity: { name: "finder", goal: "Find", domain: "tests" }, actions: { find } })
    const mcp = InMemoryMcp.layer({
      "memory://find": () => {
        const server = new McpServer({ name: "find", version: "1.0.0" }, { capabilities: { tools: {} } })
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: [{ name: "search", inputSchema: mcpSchema }]
        }))
        server.setRequestHandler(CallToolRequestSchema, (request) => {
          received.push(request.params.arguments)
          return { content: [{ type: "text" as const, text: "found" }] }
        })
        return server
      }
    })
    return { role, received, layer: Layer.merge(NodeHttpClient.layerUndici, mcp) }
  })

const modelName = (kind: Kind) => (kind === "mcpTool" ? "find_search" : "find")

/** The arguments one call carries to the action (an mcpTool action's are `{ tool, arguments }`). */
const direct = (kind: Kind, args: Record<string, unknown>) =>
  kind === "mcpTool" ? { tool: "search", arguments: args } : args

/** What reached the service, as the arguments the action saw: an llm action's prompt is read back into them. */
const reached = (kind: Kind, received: ReadonlyArray<unknown>, requests: ReadonlyArray<Server.Recorded>) => {
  if (kind !== "llm") return received
  return requests.slice(-1).map((request) => {
    const body = request.body as { readonly messages: ReadonlyArray<{ readonly content: string }> }
    return body.messages.at(-1)?.content ?? ""
  })
}

const kinds: ReadonlyArray<Kind> = ["local", "webService", "llm", "mcpTool"]

describe("C09 table: every kind, strict or not", () => {
  for (const kind of kinds) {
    for (const strict of [false, true]) {
      it.live(`${kind}, strict ${strict}: a chat turn's {"query":"x","limit":null} runs as {query:"x"}`, () =>
        Effect.gen(function* () {
          const { role, received, layer } = yield* setup(kind)
          const server = yield* Server.make([
            Server.toolCalls([{ name: modelName(kind), arguments: '{"query":"x","limit":null}' }]),
            ...(kind === "llm" ? [Server.reply("found")] : []),
            Server.reply("Done.")
          ])
          const agent = yield* Agent.make({ id: "finder", roles: [role] })
          const result = yield* agent
            .chat("Find x", { strict })
            .pipe(Effect.provide(Layer.merge(layer, openAiOn(server))))
          assert.strictEqual(result._tag, "Completed")
          const requests = yield* server.requests
          const first = requests[0]?.body as
            | {
                readonly tools: ReadonlyArray<{
                  readonly function: { readonly parameters: { readonly [key: string]: unknown } }
                }>
              }
            | undefined
          const offered = first?.tools[0]?.function.parameters
          if (strict) {
            // Strict mode: every property listed in `required`, the optional one nullable.
            assert.deepStrictEqual(offered?.required, ["query", "limit"])
            const properties = (offered?.properties ?? {}) as { readonly [key: string]: unknown }
            assert.include(JSON.stringify(properties.limit), '"null"')
          } else {
            assert.deepStrictEqual(offered?.required, ["query"])
          }
          const last = requests.at(-1)?.body as
            | { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> }
            | undefined
          const answers = (last?.messages ?? []).filter((message) => message.role === "tool").map((m) => m.content)
          assert.notInclude(answers.join(), "VALIDATION")
          if (kind === "llm")
            assert.deepStrictEqual(reached(kind, received, requests.slice(0, 2)), ["Find\n\nInput:\nquery: x"])
          else assert.deepStrictEqual(reached(kind, received, requests), [{ query: "x" }])
        }).pipe(Effect.scoped)
      )
    }
    it.live(`${kind}: a direct call with limit null runs as absent; query null is VALIDATION`, () =>
      Effect.gen(function* () {
        const { role, received, layer } = yield* setup(kind)
        const server = yield* Server.make([Server.reply("found")])
        const agent = yield* Agent.make({ id: "finder", roles: [role] })
        const provided = Layer.merge(layer, openAiOn(server))
        // @ts-expect-error raw arguments with a null, on purpose: null for an optional key runs as absent
        yield* agent.executeAction("find", direct(kind, { query: "x", limit: null })).pipe(Effect.provide(provided))
        const refused = yield* Effect.flip(
          // @ts-expect-error a null for a required field, on purpose: VALIDATION is what this pins
          agent.executeAction("find", direct(kind, { query: null, limit: 3 })).pipe(Effect.provide(provided))
        )
        assert.strictEqual(refused._tag, "ValidationError", refused.message)
        assert.include(refused.message, "query")
        if (kind === "llm")
          assert.deepStrictEqual(reached(kind, received, yield* server.requests), ["Find\n\nInput:\nquery: x"])
        else assert.deepStrictEqual(received, [{ query: "x" }], "only the call with a valid query reached the service")
      }).pipe(Effect.scoped)
    )
  }
})
