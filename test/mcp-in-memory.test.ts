/**
 * The in-memory MCP test layer (@rolecraft/testing): the SDK's own servers
 * over its InMemoryTransport behind McpClientSdk.make. Paging, list_changed,
 * tools that vanish, zero-parameter tools (C07), content conversion (C19),
 * two servers with the same tool name and awkward names (C11, C12).
 */
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, McpClient, Role } from "@rolecraft/core"
import * as Toolkit from "../packages/core/src/internal/tool/toolkit.ts"
import { InMemoryMcp } from "@rolecraft/testing"
import { ConfigProvider, Duration, Effect, Redacted } from "effect"
import { z } from "zod/v4"
import { collectLogs } from "./fixtures/mcp.ts"

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const agentOn = (actions: Record<string, Action.Any>, authority?: Agent.Options<[]>["authority"]) =>
  Agent.make({
    id: "memory-agent",
    roles: [Role.make({ identity: { name: "tester", goal: "Test", domain: "tests" }, actions })],
    authority
  })

/** A low-level server whose tools/list is served in pages of two. */
const paged = (names: ReadonlyArray<string>, requests: { lists: number }) => () => {
  const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    requests.lists++
    const start = Number(request.params?.cursor ?? 0)
    const page = names.slice(start, start + 2).map((name) => ({ name, inputSchema: { type: "object" as const } }))
    return start + 2 < names.length ? { tools: page, nextCursor: String(start + 2) } : { tools: page }
  })
  server.setRequestHandler(CallToolRequestSchema, (request) => text(`ran ${request.params.name}`))
  return server
}

describe("in-memory MCP servers", () => {
  it.effect("tools/list follows every page, and the list is cached per connection", () => {
    const requests = { lists: 0 }
    const names = ["t1", "t2", "t3", "t4", "t5"]
    return Effect.gen(function* () {
      const agent = yield* agentOn({ paged: Action.mcpTool({ description: "paged", server: "memory://paged" }) })
      assert.strictEqual(yield* agent.executeAction("paged", { tool: "t5" }), "ran t5")
      assert.strictEqual(yield* agent.executeAction("paged", { tool: "t1" }), "ran t1")
      assert.strictEqual(requests.lists, 3, "three pages, fetched once")
    }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://paged": paged(names, requests) })))
  })

  it.live("notifications/tools/list_changed refreshes the cached list", () => {
    let retired = false
    const factory = () => {
      const server = new McpServer({ name: "changing", version: "1.0.0" })
      const old = server.registerTool("old", { description: "Old" }, () => text("old"))
      server.registerTool("retire", { description: "Remove old, add fresh" }, () => {
        old.remove()
        server.registerTool("fresh", { description: "Fresh" }, () => text("fresh"))
        retired = true
        return text("retired")
      })
      return server
    }
    return Effect.gen(function* () {
      const client = yield* McpClient.McpClient
      const connection = yield* client.connect("memory://changing", { name: "changing" })
      const before = yield* connection.listTools()
      assert.strictEqual(yield* connection.listTools(), before, "cached")
      assert.deepStrictEqual(before.map((tool) => tool.name).sort(), ["old", "retire"])
      yield* connection.callTool("retire", {}, { timeout: Duration.seconds(5) })
      assert.isTrue(retired)
      const after = yield* connection.listTools()
      assert.deepStrictEqual(after.map((tool) => tool.name).sort(), ["fresh", "retire"])
    }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://changing": factory })))
  })

  it.effect(
    "a tool removed between list and call is NOT_FOUND with the names left (JSON-RPC error and isError text)",
    () => {
      const make = (style: "rpc" | "text") => () => {
        let listed = ["ghost", "stays"]
        const server = new Server({ name: "vanishing", version: "1.0.0" }, { capabilities: { tools: {} } })
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: listed.map((name) => ({ name, inputSchema: { type: "object" as const } }))
        }))
        server.setRequestHandler(CallToolRequestSchema, (request) => {
          if (request.params.name === "stays") return text("still here")
          listed = ["stays"]
          if (style === "rpc") throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`)
          return {
            isError: true,
            content: [{ type: "text", text: `MCP error -32602: Tool ${request.params.name} not found` }]
          }
        })
        return server
      }
      return Effect.gen(function* () {
        const agent = yield* agentOn({
          rpc: Action.mcpTool({ description: "rpc", server: "memory://rpc" }),
          text: Action.mcpTool({ description: "text", server: "memory://text" })
        })
        for (const action of ["rpc", "text"]) {
          assert.strictEqual(yield* agent.executeAction(action, { tool: "stays" }), "still here")
          const error = yield* Effect.flip(agent.executeAction(action, { tool: "ghost" }))
          assert.strictEqual(error._tag, "ActionNotFound", action)
          assert.deepStrictEqual(error._tag === "ActionNotFound" && error.available, ["stays"], action)
        }
      }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://rpc": make("rpc"), "memory://text": make("text") })))
    }
  )

  it.effect("arguments the server refuses (-32602) for a tool it still lists are VALIDATION", () => {
    const factory = () => {
      const server = new McpServer({ name: "strict", version: "1.0.0" })
      // The schema says any string; the server itself refuses short ones.
      server.registerTool(
        "code",
        { inputSchema: { value: z.string().refine((value) => value === value.toUpperCase(), "must be upper case") } },
        ({ value }) => text(value)
      )
      return server
    }
    return Effect.gen(function* () {
      const agent = yield* agentOn({ strict: Action.mcpTool({ description: "strict", server: "memory://strict" }) })
      assert.strictEqual(
        yield* agent.executeAction("strict", { tool: "code", arguments: { value: "ABCDEF" } }),
        "ABCDEF"
      )
      const error = yield* Effect.flip(agent.executeAction("strict", { tool: "code", arguments: { value: "abcdef" } }))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "strict/code: the MCP server refused the arguments")
    }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://strict": factory })))
  })

  it.effect(
    "C07: a tool whose inputSchema is {type: object} projects with properties {} and receives {} for '' or {}",
    () => {
      const received: Array<unknown> = []
      const factory = () => {
        const server = new Server({ name: "go-style", version: "1.0.0" }, { capabilities: { tools: {} } })
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: [{ name: "get_server_version", description: "Version", inputSchema: { type: "object" as const } }]
        }))
        server.setRequestHandler(CallToolRequestSchema, (request) => {
          received.push(request.params.arguments)
          return text("v1.2.3")
        })
        return server
      }
      return Effect.gen(function* () {
        const agent = yield* agentOn({ go: Action.mcpTool({ description: "go", server: "memory://go" }) })
        assert.strictEqual(yield* agent.executeAction("go", { tool: "get_server_version", arguments: "" }), "v1.2.3")
        assert.strictEqual(yield* agent.executeAction("go", { tool: "get_server_version", arguments: {} }), "v1.2.3")
        assert.strictEqual(yield* agent.executeAction("go", { tool: "get_server_version" }), "v1.2.3")
        assert.deepStrictEqual(received, [{}, {}, {}])
        const client = yield* McpClient.McpClient
        const connection = yield* client.connect("memory://go", { name: "go" })
        const kit = yield* Toolkit.offer([{ action: "go", tools: yield* connection.listTools() }])
        assert.deepStrictEqual(kit.tools[0]?.parameters, { type: "object", properties: {} })
      }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://go": factory })))
    }
  )

  it.effect(
    "C19: every block converted, base64 never inlined; structuredContent that breaks its outputSchema falls back",
    () => {
      const image = Buffer.alloc(300 * 1024, 1).toString("base64")
      const factory = () => {
        const server = new Server({ name: "content", version: "1.0.0" }, { capabilities: { tools: {} } })
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: [
            { name: "report", inputSchema: { type: "object" as const } },
            {
              name: "weather",
              inputSchema: { type: "object" as const },
              outputSchema: {
                type: "object" as const,
                properties: { temperature: { type: "number" } },
                required: ["temperature"]
              }
            }
          ]
        }))
        server.setRequestHandler(CallToolRequestSchema, (request) =>
          request.params.name === "report"
            ? {
                content: [
                  { type: "text", text: "Found report:" },
                  { type: "image", data: image, mimeType: "image/png" },
                  { type: "resource", resource: { uri: "file:///r.md", mimeType: "text/markdown", text: "# R" } },
                  { type: "resource_link", uri: "reports://q3", name: "q3.pdf", mimeType: "application/pdf" }
                ]
              }
            : { content: [{ type: "text", text: "It is warm" }], structuredContent: { temperature: "warm" } }
        )
        return server
      }
      return Effect.gen(function* () {
        const agent = yield* agentOn({
          content: Action.mcpTool({ description: "content", server: "memory://content" })
        })
        const parts = yield* agent.executeAction("content", { tool: "report" })
        assert.deepStrictEqual(parts, [
          { type: "text", text: "Found report:" },
          { type: "image", mimeType: "image/png", bytes: 300 * 1024, text: "[image image/png, 300 KB]" },
          { type: "resource", uri: "file:///r.md", mimeType: "text/markdown", text: "file:///r.md\n# R" },
          {
            type: "resource_link",
            uri: "reports://q3",
            name: "q3.pdf",
            mimeType: "application/pdf",
            text: "[resource link q3.pdf reports://q3 application/pdf]"
          }
        ])
        // structuredContent that breaks the tool's own outputSchema is not the result: the text is.
        assert.strictEqual(yield* agent.executeAction("content", { tool: "weather" }), "It is warm")
      }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://content": factory })))
    }
  )

  it.effect(
    "C11, C12: same tool on two servers and awkward names get distinct model names, each routed to its own server",
    () => {
      const long = `hosting_${"restartNode".repeat(6)}.jsApplicationV1`
      const server = (name: string) => () => {
        const instance = new Server({ name, version: "1.0.0" }, { capabilities: { tools: {} } })
        instance.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: ["send_email", "calendar.respondToEvent", "user-profile/update", long].map((tool) => ({
            name: tool,
            description: `${tool} on ${name}`,
            inputSchema: { type: "object" as const, properties: { to: { type: "string" } } }
          }))
        }))
        instance.setRequestHandler(CallToolRequestSchema, (request) =>
          text(`${name} ran ${request.params.name} for ${String(request.params.arguments?.to)}`)
        )
        return instance
      }
      return Effect.gen(function* () {
        const agent = yield* agentOn({
          "srv-a": Action.mcpTool({ description: "A", server: "memory://a" }),
          "srv-b": Action.mcpTool({ description: "B", server: "memory://b" })
        })
        const client = yield* McpClient.McpClient
        const servers = []
        for (const [action, url] of [
          ["srv-a", "memory://a"],
          ["srv-b", "memory://b"]
        ] as const) {
          const connection = yield* client.connect(url, { name: action })
          servers.push({ action, tools: yield* connection.listTools() })
        }
        const kit = yield* Toolkit.offer(servers)
        const names = kit.tools.map((tool) => tool.name)
        assert.strictEqual(new Set(names).size, 8)
        assert.isTrue(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name)))
        assert.includeMembers(names, ["srv-a_send_email", "srv-b_send_email", "srv-a_calendar_respondToEvent"])
        for (const tool of kit.tools) {
          const route = kit.find(tool.name)
          assert.isDefined(route)
          if (route === undefined) continue
          const result = yield* agent.executeAction(route.action, { tool: route.tool, arguments: { to: "ana" } })
          const expected = route.action === "srv-a" ? "memory://a" : "memory://b"
          assert.strictEqual(result, `${expected} ran ${route.tool} for ana`)
        }
      }).pipe(
        Effect.scoped,
        Effect.provide(InMemoryMcp.layer({ "memory://a": server("memory://a"), "memory://b": server("memory://b") }))
      )
    }
  )

  it.effect("a tool whose schema cannot be offered to a model is left out with a warning; the others still are", () => {
    const logs = collectLogs()
    return Effect.gen(function* () {
      const kit = yield* Toolkit.offer([
        {
          action: "tree",
          tools: [
            {
              name: "walk",
              inputSchema: {
                type: "object",
                properties: { node: { $ref: "#/$defs/Node" } },
                $defs: {
                  Node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } } }
                }
              }
            },
            { name: "count", inputSchema: { type: "object" } }
          ]
        }
      ])
      assert.deepStrictEqual(
        kit.tools.map((tool) => tool.name),
        ["tree_count"]
      )
      assert.strictEqual(kit.excluded[0]?.key, "tree/walk")
      assert.isTrue(
        logs.lines.some((line) => line.startsWith("Warn") && line.includes("MCP tool tree/walk is not offered"))
      )
    }).pipe(Effect.provide(logs.layer))
  })

  it.effect("C29: a thousand sequential calls leave no abort listeners behind (no MaxListenersExceededWarning)", () => {
    const warnings: Array<string> = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    return Effect.gen(function* () {
      process.on("warning", onWarning)
      const agent = yield* agentOn({ paged: Action.mcpTool({ description: "paged", server: "memory://paged" }) })
      for (let i = 0; i < 1_000; i++) yield* agent.executeAction("paged", { tool: "t1" })
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(warnings, [])
    }).pipe(
      Effect.ensuring(Effect.sync(() => process.off("warning", onWarning))),
      Effect.provide(InMemoryMcp.layer({ "memory://paged": paged(["t1"], { lists: 0 }) }))
    )
  })

  it.effect("authority denies by action/tool glob before the tool is looked up", () =>
    Effect.gen(function* () {
      const agent = yield* agentOn(
        { paged: Action.mcpTool({ description: "paged", server: "memory://paged" }) },
        { deny: ["paged/secret*"] }
      )
      const error = yield* Effect.flip(agent.executeAction("paged", { tool: "secret-plans" }))
      assert.strictEqual(error._tag, "Unauthorized")
      assert.strictEqual(yield* agent.executeAction("paged", { tool: "t1" }), "ran t1")
    }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://paged": paged(["t1"], { lists: 0 }) })))
  )

  it.effect("the credential read from apiKeyEnv reaches the server; an unknown in-memory server is TRANSIENT", () => {
    const seen: Array<string | undefined> = []
    const factory = ({ credential }: { readonly credential: Redacted.Redacted<string> | undefined }) => {
      seen.push(credential === undefined ? undefined : Redacted.value(credential))
      return paged(["t1"], { lists: 0 })()
    }
    return Effect.gen(function* () {
      const agent = yield* agentOn({
        keyed: Action.mcpTool({ description: "keyed", server: "memory://keyed", apiKeyEnv: "MEMORY_KEY" }),
        missing: Action.mcpTool({ description: "missing", server: "memory://nowhere" })
      })
      yield* agent.executeAction("keyed", { tool: "t1" })
      assert.deepStrictEqual(seen, ["k-123-memory-key"])
      const short = yield* Effect.flip(
        agent
          .executeAction("keyed", { tool: "t1" })
          .pipe(
            Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { MEMORY_KEY: "k1" } }))
          )
      )
      assert.strictEqual(short._tag, "ValidationError")
      assert.include(short.message, "MEMORY_KEY (apiKeyEnv) is shorter than 8 characters")
      assert.notInclude(JSON.stringify(short), 'k1"')
      assert.deepStrictEqual(seen, ["k-123-memory-key"])
      const error = yield* Effect.flip(agent.executeAction("missing", { tool: "t1" }))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.include(error.message, "no in-memory MCP server named memory://nowhere")
    }).pipe(
      Effect.provide(InMemoryMcp.layer({ "memory://keyed": factory })),
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { MEMORY_KEY: "k-123-memory-key" } })
      )
    )
  })
})

describe("in-memory MCP servers: timeouts", () => {
  it.live("a timed-out call is TIMEOUT and repeated only when the action is idempotent (the request was sent)", () => {
    const calls = { slow: 0 }
    const factory = () => {
      const server = new McpServer({ name: "slow", version: "1.0.0" })
      server.registerTool("slow", { description: "Takes a second" }, async () => {
        calls.slow++
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        return text("late")
      })
      return server
    }
    const action = (idempotent: boolean) =>
      Action.mcpTool({ description: "slow", server: "memory://slow", timeout: "100 millis", idempotent }).pipe(
        Action.resilience({ retry: { maxAttempts: 1, initialDelay: 0, retryOn: ["TIMEOUT"] } })
      )
    return Effect.gen(function* () {
      const agent = yield* agentOn({ once: action(false), twice: action(true) })
      const first = yield* Effect.flip(agent.executeAction("once", { tool: "slow" }))
      assert.strictEqual(first._tag, "Timeout")
      assert.isFalse(first._tag === "Timeout" && first.retryable)
      assert.strictEqual(calls.slow, 1, "not repeated: the tool may have run")
      const second = yield* Effect.flip(agent.executeAction("twice", { tool: "slow" }))
      assert.strictEqual(second._tag, "Timeout")
      assert.strictEqual(calls.slow, 3, "repeated once: the action is idempotent")
    }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://slow": factory })))
  })
})
