/**
 * C60: what an MCP client reads from `Mcp.serve`, by the SDK's own client.
 *
 * - Content blocks: every `ToolContent` constructor (image and audio from bytes and from base64, an embedded
 *   text and blob resource, a resource link, and a mix with text) reaches the client as the blocks it made,
 *   and a chat turn sends the model a text for each (`ToolContent.success`).
 * - Served schemas are JSON Schema 2020-12 (`$schema`) with every struct closed (`additionalProperties: false`,
 *   nested ones too) and a record left open; the schema a model is offered is unchanged.
 * - An unknown tool is the JSON-RPC error -32602 (tested with the rest of Mcp.serve in mcp-serve.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Action, Agent, Role, ToolContent } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { Effect, Result, Schema } from "effect"

const bytes = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])
const base64 = Buffer.from(bytes).toString("base64")

// Every constructor, with the blocks a client must read and the text a model is sent.
const variants: ReadonlyArray<readonly [string, ToolContent.Content, ReadonlyArray<unknown>, string]> = [
  [
    "image_bytes",
    ToolContent.image(bytes, "image/png"),
    [{ type: "image", data: base64, mimeType: "image/png" }],
    "[image image/png, 8 bytes]"
  ],
  [
    "image_base64",
    ToolContent.image(base64, "image/png"),
    [{ type: "image", data: base64, mimeType: "image/png" }],
    "[image image/png, 8 bytes]"
  ],
  [
    "audio",
    ToolContent.audio(bytes, "audio/wav"),
    [{ type: "audio", data: base64, mimeType: "audio/wav" }],
    "[audio audio/wav, 8 bytes]"
  ],
  [
    "resource_text",
    ToolContent.resource({ uri: "docs://a", mimeType: "text/plain", text: "hello" }),
    [{ type: "resource", resource: { uri: "docs://a", mimeType: "text/plain", text: "hello" } }],
    "[resource docs://a]\nhello"
  ],
  [
    "resource_blob",
    ToolContent.resource({ uri: "docs://b", blob: bytes }),
    [{ type: "resource", resource: { uri: "docs://b", blob: base64 } }],
    "[resource docs://b, 8 bytes]"
  ],
  [
    "resource_link",
    ToolContent.resourceLink({ uri: "docs://c", name: "c", mimeType: "text/plain" }),
    [{ type: "resource_link", uri: "docs://c", name: "c", mimeType: "text/plain" }],
    "[resource link c: docs://c]"
  ],
  [
    "mixed",
    ToolContent.content(
      "Here:",
      ToolContent.image(bytes, "image/png"),
      ToolContent.resource({ uri: "docs://a", text: "x" })
    ),
    [
      { type: "text", text: "Here:" },
      { type: "image", data: base64, mimeType: "image/png" },
      { type: "resource", resource: { uri: "docs://a", text: "x" } }
    ],
    "Here:\n[image image/png, 8 bytes]\n[resource docs://a]\nx"
  ]
]

const role = Role.make({
  identity: { name: "media", goal: "Answer with media", domain: "testing" },
  actions: {
    ...Object.fromEntries(
      variants.map(([name, value]) => [name, Action.local({ description: name, parameters: {}, run: () => value })])
    ),
    shaped: Action.local({
      description: "Nested structs and a record",
      parameters: {
        name: Schema.String,
        address: Schema.Struct({ city: Schema.String, geo: Schema.Struct({ lat: Schema.Finite }) }),
        tags: Schema.Record(Schema.String, Schema.String),
        home: Schema.Struct({ street: Schema.String }).annotate({ identifier: "home" })
      },
      run: () => "ok"
    })
  }
})

describe("Mcp.serve: content blocks and served schemas", () => {
  it.live("every ToolContent content constructor reaches an MCP client as its blocks, and a model as text", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "media", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "reader", version: "1.0.0" })
          await client.connect(new StreamableHTTPClientTransport(new URL(served.url ?? "")))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      for (const [name, value, blocks, text] of variants) {
        const result = yield* Effect.promise(() => client.callTool({ name, arguments: {} }))
        assert.deepStrictEqual(result.content, blocks, name)
        assert.isUndefined(result.structuredContent, name)
        assert.deepStrictEqual(ToolContent.success(value, { action: name }), Result.succeed(text), name)
      }

      const { tools } = yield* Effect.promise(() => client.listTools())
      const schema = tools.find((tool) => tool.name === "shaped")?.inputSchema as Record<string, any>
      assert.strictEqual(schema.$schema, "https://json-schema.org/draft/2020-12/schema")
      assert.isFalse(schema.additionalProperties)
      assert.isFalse(schema.properties.address.additionalProperties)
      assert.isFalse(schema.properties.address.properties.geo.additionalProperties)
      assert.notStrictEqual(schema.properties.tags.additionalProperties, false)
      // A struct with an identifier is a definition: referenced, kept under $defs, closed too.
      assert.deepStrictEqual(schema.properties.home, { $ref: "#/$defs/home" })
      assert.isFalse(schema.$defs.home.additionalProperties)
      // What a model is offered keeps Effect's projection.
      const offered = agent.tools.find((tool) => tool.name === "shaped")?.parameters as Record<string, any>
      assert.isUndefined(offered.$schema)
      assert.isUndefined(offered.$defs)
      assert.strictEqual(offered.properties.home.type, "object")
      assert.notStrictEqual(offered.additionalProperties, false)
    }).pipe(Effect.scoped)
  )
})
