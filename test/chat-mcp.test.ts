/**
 * Chat turns with MCP tools (SPEC §7, §8) on the scripted model and the SDK's
 * own servers over the in-memory transport: every tool of every mcpTool
 * action offered under a model-safe name and routed back to its server (C11,
 * C12), zero-parameter tools (C07), `$ref` and recursive schemas (C08),
 * conversion (C10), authority on `action/tool`, a server that cannot list its
 * tools, and an approval on an MCP tool.
 */
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Chat, type LanguageModel, type Prompt, Role } from "@rolecraft/core"
import { InMemoryMcp, ScriptedModel } from "@rolecraft/testing"
import { Effect, Schema } from "effect"
import { collectLogs } from "./fixtures/mcp.ts"

interface Received {
  readonly server: string
  readonly tool: string
  readonly arguments: unknown
}

interface Listed {
  readonly name: string
  readonly description?: string
  readonly inputSchema: Record<string, unknown>
}

/** A low-level SDK server listing `tools` exactly as given and recording every call. */
const recorder = (name: string, tools: ReadonlyArray<Listed>, received: Array<Received>) => () => {
  const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools as Array<Listed & { inputSchema: { type: "object" } }>
  }))
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    received.push({ server: name, tool: request.params.name, arguments: request.params.arguments })
    return { content: [{ type: "text" as const, text: `${name} ran ${request.params.name}` }] }
  })
  return server
}

const long = `hosting_restartNode.jsApplicationV1_${"x".repeat(40)}`

const helper = Role.make({
  identity: { name: "helper", goal: "Use tools", domain: "tools" },
  actions: {
    lookup: Action.local({
      description: "Look a word up",
      parameters: { word: Schema.String },
      run: ({ word }) => word
    }),
    "srv-a": Action.mcpTool({ description: "Server A", server: "memory://a" }),
    "srv-b": Action.mcpTool({ description: "Server B", server: "memory://b" })
  }
})

const setup = () => {
  const received: Array<Received> = []
  const servers = {
    "memory://a": recorder(
      "a",
      [
        {
          name: "send_email",
          description: "Send through A",
          inputSchema: { type: "object", properties: { to: { type: "string" } } }
        },
        { name: "get_server_version", inputSchema: { type: "object" } },
        { name: "calendar.respondToEvent", inputSchema: { type: "object" } },
        { name: "user-profile/update", inputSchema: { type: "object" } },
        { name: long, inputSchema: { type: "object" } },
        {
          name: "route",
          inputSchema: {
            type: "object",
            properties: { start: { $ref: "#/$defs/Place" }, end: { $ref: "#/$defs/Place", description: "where to" } },
            $defs: { Place: { type: "object", properties: { lat: { type: "number" }, lon: { type: "number" } } } }
          }
        },
        {
          name: "tree",
          inputSchema: {
            type: "object",
            properties: { root: { $ref: "#/$defs/Node" } },
            $defs: {
              Node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } } }
            }
          }
        },
        {
          name: "repeat",
          inputSchema: {
            type: "object",
            properties: { times: { type: "integer" }, loud: { type: "boolean" } },
            required: ["times"]
          }
        }
      ],
      received
    ),
    "memory://b": recorder(
      "b",
      [
        {
          name: "send_email",
          description: "Send through B",
          inputSchema: { type: "object", properties: { to: { type: "string" } } }
        }
      ],
      received
    )
  }
  return { received, layer: InMemoryMcp.layer(servers) }
}

const toolContents = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [message.content] : []))

const offeredNames = (request: LanguageModel.Request | undefined) => request?.tools?.map((tool) => tool.name) ?? []

describe("chat turns with MCP tools (in-memory servers)", () => {
  it.effect("every server's tools are offered with the actions under valid, unique names (C11, C12, C08)", () => {
    const { layer } = setup()
    const logs = collectLogs()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [helper] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("ok")])
      yield* agent.chat("Hi").pipe(Effect.provide(scripted.layer))
      const [request] = yield* scripted.requests
      const names = offeredNames(request)
      assert.deepStrictEqual(names.slice(0, 7), [
        "lookup",
        "srv-a_send_email",
        "srv-a_get_server_version",
        "srv-a_calendar_respondToEvent",
        "srv-a_user-profile_update",
        names[5],
        "srv-a_route"
      ])
      assert.match(names[5] ?? "", /^srv-a_hosting_restartNode_jsApplicationV1_x+_[0-9a-f]{8}$/)
      assert.strictEqual(names[5]?.length, 64)
      assert.deepStrictEqual(names.slice(7), ["srv-a_repeat", "srv-b_send_email"])
      assert.isTrue(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name)))
      // the mcpTool actions themselves are not tools: their servers' tools are
      assert.notInclude(names, "srv-a")
      const tool = (name: string) => request?.tools?.find((entry) => entry.name === name)
      assert.deepStrictEqual(tool("srv-a_get_server_version")?.parameters, { type: "object", properties: {} })
      assert.deepStrictEqual(tool("srv-a_route")?.parameters, {
        type: "object",
        properties: {
          start: { type: "object", properties: { lat: { type: "number" }, lon: { type: "number" } } },
          end: {
            type: "object",
            properties: { lat: { type: "number" }, lon: { type: "number" } },
            description: "where to"
          }
        }
      })
      assert.strictEqual(tool("srv-b_send_email")?.description, "Send through B")
      // the recursive schema is left out with a warning; the other tools are still offered
      assert.isTrue(logs.lines.some((line) => /srv-a\/tree is not offered to the model: .*recursive/.test(line)))
    }).pipe(Effect.provide(layer), Effect.provide(logs.layer))
  })

  it.effect("a call is routed to the original tool of the server whose schema was offered (C11, C12)", () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [helper] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.respond((request) =>
          ScriptedModel.toolCalls([
            { name: "srv-b_send_email", arguments: { to: "ana" } },
            { name: "srv-a_send_email", arguments: { to: "bo" } },
            { name: "srv-a_calendar_respondToEvent" },
            { name: "srv-a_user-profile_update" },
            { name: offeredNames(request).find((name) => name.startsWith("srv-a_hosting")) ?? "missing" },
            { name: "lookup", arguments: { word: "tide" } }
          ])
        ),
        ScriptedModel.reply("sent")
      ])
      const result = yield* agent.chat("Send", { concurrency: 1 }).pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(received, [
        { server: "b", tool: "send_email", arguments: { to: "ana" } },
        { server: "a", tool: "send_email", arguments: { to: "bo" } },
        { server: "a", tool: "calendar.respondToEvent", arguments: {} },
        { server: "a", tool: "user-profile/update", arguments: {} },
        { server: "a", tool: long, arguments: {} }
      ])
      assert.deepStrictEqual(toolContents(result._tag === "Completed" ? result.messages : []), [
        "b ran send_email",
        "a ran send_email",
        "a ran calendar.respondToEvent",
        "a ran user-profile/update",
        `a ran ${long}`,
        "tide"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect('C07: a tool whose schema has no properties, called with arguments "", receives {}', () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [helper] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "srv-a_get_server_version", arguments: "" }]),
        ScriptedModel.reply("v1")
      ])
      const result = yield* agent.chat("Version?").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(received, [{ server: "a", tool: "get_server_version", arguments: {} }])
    }).pipe(Effect.provide(layer))
  })

  it.effect("C10: string numbers and booleans from the model are converted against the tool's schema", () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [helper] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { name: "srv-a_repeat", arguments: { times: "3", loud: "FALSE" } },
          { name: "srv-a_repeat", arguments: { times: "3.5" } },
          { name: "srv-a_repeat", arguments: "null" }
        ]),
        ScriptedModel.reply("done")
      ])
      const result = yield* agent.chat("Repeat", { concurrency: 1 }).pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(received, [{ server: "a", tool: "repeat", arguments: { times: 3, loud: false } }])
      const [, fractional, nullArguments] = toolContents(result._tag === "Completed" ? result.messages : [])
      assert.match(fractional ?? "", /"category":"VALIDATION".*times/)
      assert.match(nullArguments ?? "", /"category":"VALIDATION","message":"arguments must be a JSON object, got null"/)
    }).pipe(Effect.provide(layer))
  })

  it.effect("authority filters MCP tools by action/tool; a denied tool is neither offered nor run", () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({
        id: "mcp-chat",
        roles: [helper],
        authority: { deny: ["srv-a/send_email", "srv-b"] }
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "srv-a_send_email", arguments: { to: "x" } }, { name: "srv-b_send_email" }]),
        ScriptedModel.reply("no")
      ])
      const result = yield* agent.chat("Send").pipe(Effect.provide(scripted.layer))
      const [request] = yield* scripted.requests
      const names = offeredNames(request)
      assert.notInclude(names, "srv-a_send_email")
      assert.isFalse(names.some((name) => name.startsWith("srv-b")))
      assert.include(names, "srv-a_get_server_version")
      assert.deepStrictEqual(received, [])
      const contents = toolContents(result._tag === "Completed" ? result.messages : [])
      assert.isTrue(contents.every((content) => content.includes('"category":"NOT_FOUND"')))
    }).pipe(Effect.provide(layer))
  })

  it.effect("an allow-listed server's unchanged list is not rebuilt each step (one warning)", () => {
    const { layer } = setup()
    const logs = collectLogs()
    return Effect.gen(function* () {
      const allowing = Role.make({
        identity: { name: "allowing", goal: "Use some tools", domain: "tools" },
        actions: {
          "srv-a": Action.mcpTool({ description: "Server A", server: "memory://a", tools: ["repeat", "tree"] })
        }
      })
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [allowing] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "srv-a_repeat", arguments: { times: 1 } }]),
        ScriptedModel.toolCalls([{ name: "srv-a_repeat", arguments: { times: 2 } }]),
        ScriptedModel.reply("done")
      ])
      const result = yield* agent.chat("Repeat").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      const requests = yield* scripted.requests
      assert.deepStrictEqual(requests.map(offeredNames), [["srv-a_repeat"], ["srv-a_repeat"], ["srv-a_repeat"]])
      const warnings = logs.lines.filter((line) => /srv-a\/tree is not offered to the model/.test(line))
      assert.strictEqual(warnings.length, 1, warnings.join("\n"))
    }).pipe(Effect.provide(layer), Effect.provide(logs.layer))
  })

  it.effect("a server that cannot list its tools is left out with a warning, and the turn goes on", () => {
    const { layer } = setup()
    const logs = collectLogs()
    return Effect.gen(function* () {
      const agent = yield* Agent.make({
        id: "mcp-chat",
        roles: [helper],
        mcpServers: { nowhere: "memory://nowhere" }
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "lookup", arguments: { word: "ok" } }]),
        ScriptedModel.reply("fine")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      const [first] = yield* scripted.requests
      assert.include(offeredNames(first), "srv-b_send_email")
      assert.isFalse(offeredNames(first).some((name) => name.startsWith("nowhere")))
      assert.isTrue(
        logs.lines.some((line) =>
          /^Warn: Chat: the tools of nowhere are not offered in this step: .*no in-memory MCP server named memory:\/\/nowhere/.test(
            line
          )
        )
      )
    }).pipe(Effect.provide(layer), Effect.provide(logs.layer))
  })

  it.effect("the agent's own mcpServers offer their tools too", () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const bare = Role.make({ identity: { name: "bare", goal: "Nothing", domain: "none" } })
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [bare], mcpServers: { mail: "memory://b" } })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "mail_send_email", arguments: { to: "cy" } }]),
        ScriptedModel.reply("sent")
      ])
      const result = yield* agent.chat("Mail cy").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(received, [{ server: "b", tool: "send_email", arguments: { to: "cy" } }])
    }).pipe(Effect.provide(layer))
  })

  it.effect("an MCP tool that needs approval pauses the turn and runs once approved, on the same server tool", () => {
    const { layer, received } = setup()
    return Effect.gen(function* () {
      const guarded = Role.make({
        identity: { name: "guarded", goal: "Mail carefully", domain: "mail" },
        actions: {
          mail: Action.mcpTool({ description: "Mail", server: "memory://b" }).pipe(
            Action.requireApproval({ reason: "Sends email" })
          )
        }
      })
      const agent = yield* Agent.make({ id: "mcp-chat", roles: [guarded] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "mail_send_email", arguments: { to: "di" } }]),
        ScriptedModel.reply("sent")
      ])
      const paused = yield* agent.chat("Mail di").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(paused._tag, "AwaitingApproval")
      if (paused._tag !== "AwaitingApproval") return
      assert.deepStrictEqual(
        paused.pending.map(({ action, tool, arguments: args, reason }) => ({ action, tool, args, reason })),
        [{ action: "mail", tool: "send_email", args: { to: "di" }, reason: "Sends email" }]
      )
      assert.deepStrictEqual(received, [])
      const result = yield* agent
        .resume(paused.state, { call_1: Chat.approve("ed") })
        .pipe(Effect.provide(scripted.layer))
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(received, [{ server: "b", tool: "send_email", arguments: { to: "di" } }])
    }).pipe(Effect.provide(layer))
  })
})
