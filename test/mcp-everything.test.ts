/**
 * mcpTool actions against the published server-everything over stdio (SPEC §8):
 * one agent, one connection, shared by the whole file.
 */
import { assert, layer } from "@effect/vitest"
import { Action, Agent, McpClient, Role } from "@rolecraft/core"
import * as Toolkit from "../packages/core/src/internal/tool/toolkit.ts"
import { McpClientSdk } from "@rolecraft/mcp"
import { Context, Duration, Effect, Layer } from "effect"
import { everything } from "./fixtures/mcp.ts"

const currencyTools = Action.mcpTool({ description: "Currency tools", server: everything, timeout: "10 seconds" })

const Fx = Role.make({
  identity: { name: "fx", goal: "Convert and sum amounts", domain: "finance" },
  actions: {
    currencyTools,
    echoOnly: Action.mcpTool({ description: "Only echo", server: everything, tools: ["echo"] }),
    shouting: currencyTools.pipe(
      Action.mapResult((result) => Effect.map(result.asString, (text) => text.toUpperCase()))
    ),
    guarded: currencyTools.pipe(Action.requireApproval({ reason: "Talks to the outside world" }))
  }
})

class Everything extends Context.Service<Everything, Agent.Agent<any, McpClient.McpClient>>()("test/Everything") {}

const Sdk = McpClientSdk.layer()

const Shared = Layer.effect(
  Everything,
  Agent.make({
    id: "fx-agent",
    roles: [Fx],
    authority: { deny: ["*/get-env"] },
    mcpServers: { everything }
  })
).pipe(Layer.provideMerge(Sdk))

layer(Shared, { excludeTestServices: true })("server-everything over stdio", (it) => {
  it.effect(
    "a direct call runs the server's tool: echo and get-sum, arguments converted against its input schema",
    () =>
      Effect.gen(function* () {
        const agent = yield* Everything
        assert.strictEqual(
          yield* agent.executeAction("currencyTools", { tool: "echo", arguments: { message: "hi" } }),
          "Echo: hi"
        )
        // get-sum declares numbers: the strings a model sends are converted before the server sees them.
        const sum = yield* agent.executeAction("currencyTools", { tool: "get-sum", arguments: { a: "2", b: " 3.5 " } })
        assert.strictEqual(sum, "The sum of 2 and 3.5 is 5.5.")
      })
  )

  it.effect("arguments may be a JSON text; an empty text is {}; anything but a JSON object is VALIDATION", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const echoed = yield* agent.executeAction("currencyTools", { tool: "echo", arguments: '{"message":"from JSON"}' })
      assert.strictEqual(echoed, "Echo: from JSON")
      const image = yield* agent.executeAction("currencyTools", { tool: "get-tiny-image", arguments: "" })
      assert.isTrue(Array.isArray(image))
      for (const raw of ["[]", "null", "5", '"text"', '{"message":']) {
        const error = yield* Effect.flip(agent.executeAction("currencyTools", { tool: "echo", arguments: raw }))
        assert.strictEqual(error._tag, "ValidationError", raw)
        assert.strictEqual(error._tag === "ValidationError" && error.action, "currencyTools/echo")
      }
    })
  )

  it.effect("structuredContent is the result when it is valid (enum value matched case-insensitively)", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const weather = yield* agent.executeAction("currencyTools", {
        tool: "get-structured-content",
        arguments: { location: "chicago" }
      })
      assert.deepStrictEqual(Object.keys(weather as object).sort(), ["conditions", "humidity", "temperature"])
    })
  )

  it.effect("C19: an image becomes a placeholder between the text parts; base64 is never inlined", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const parts = (yield* agent.executeAction("currencyTools", { tool: "get-tiny-image" })) as ReadonlyArray<{
        readonly type: string
        readonly text: string
      }>
      assert.deepStrictEqual(
        parts.map((part) => part.type),
        ["text", "image", "text"]
      )
      assert.match(parts[1]?.text ?? "", /^\[image image\/png, \d+ KB\]$/)
      assert.isBelow(JSON.stringify(parts).length, 600)
    })
  )

  it.effect("C19: embedded resources (text with its URI, blob as a placeholder) and resource links as references", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const text = (yield* agent.executeAction("currencyTools", {
        tool: "get-resource-reference",
        arguments: { resourceType: "Text", resourceId: 1 }
      })) as ReadonlyArray<{ readonly type: string; readonly text: string; readonly uri?: string }>
      const embedded = text.find((part) => part.type === "resource")
      assert.isDefined(embedded)
      assert.isTrue(embedded?.text.startsWith(`${embedded.uri}\n`))
      const blob = (yield* agent.executeAction("currencyTools", {
        tool: "get-resource-reference",
        arguments: { resourceType: "Blob", resourceId: 2 }
      })) as ReadonlyArray<{ readonly type: string; readonly text: string }>
      assert.match(blob.find((part) => part.type === "resource")?.text ?? "", /^\[resource demo:\/\/\S+ \S+, \d+ B\]$/)
      const links = (yield* agent.executeAction("currencyTools", {
        tool: "get-resource-links",
        arguments: { count: 2 }
      })) as ReadonlyArray<{ readonly type: string; readonly text: string }>
      const shown = links.filter((part) => part.type === "resource_link").map((part) => part.text)
      assert.strictEqual(shown.length, 2)
      assert.match(shown[0] ?? "", /^\[resource link .+ demo:\/\/resource\/\S+ text\/plain\]$/)
    })
  )

  it.effect("an unknown tool is NOT_FOUND with the names available", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const error = yield* Effect.flip(agent.executeAction("currencyTools", { tool: "convert", arguments: {} }))
      assert.strictEqual(error._tag, "ActionNotFound")
      if (error._tag !== "ActionNotFound") return
      assert.includeMembers([...error.available], ["echo", "get-sum", "get-tiny-image"])
      assert.include(error.message, "no tool named convert")
    })
  )

  it.effect("arguments that do not fit the tool's input schema are VALIDATION naming each field; nothing is sent", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const error = yield* Effect.flip(
        agent.executeAction("currencyTools", { tool: "get-sum", arguments: { a: "two" } })
      )
      assert.strictEqual(error._tag, "ValidationError")
      if (error._tag !== "ValidationError") return
      assert.deepStrictEqual(error.issues.map((issue) => issue.path).sort(), ["a", "b"])
    })
  )

  it.effect("authority sees action/tool; the allow-list makes other tools NOT_FOUND listing the allowed ones", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      const denied = yield* Effect.flip(agent.executeAction("currencyTools", { tool: "get-env" }))
      assert.strictEqual(denied._tag, "Unauthorized")
      assert.strictEqual(
        yield* agent.executeAction("echoOnly", { tool: "echo", arguments: { message: "ok" } }),
        "Echo: ok"
      )
      const outside = yield* Effect.flip(
        agent.executeAction("echoOnly", { tool: "get-sum", arguments: { a: 1, b: 2 } })
      )
      assert.strictEqual(outside._tag, "ActionNotFound")
      assert.deepStrictEqual(outside._tag === "ActionNotFound" && outside.available, ["echo"])
    })
  )

  it.effect("mapResult post-processes the result; an approval policy applies to mcpTool calls", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      assert.strictEqual(
        yield* agent.executeAction("shouting", { tool: "echo", arguments: { message: "quiet" } }),
        "ECHO: QUIET"
      )
      const pending = yield* Effect.flip(agent.executeAction("guarded", { tool: "echo", arguments: { message: "x" } }))
      assert.strictEqual(pending._tag, "ApprovalRequired")
    })
  )

  it.effect("Agent.make({ mcpServers }): the server acts as an mcpTool action named by its key", () =>
    Effect.gen(function* () {
      const agent = yield* Everything
      assert.strictEqual(
        yield* agent.executeAction("everything", { tool: "echo", arguments: { message: "agent" } }),
        "Echo: agent"
      )
      const response = yield* agent.execute({ action: "everything", params: { tool: "nope" } })
      assert.isFalse(response.success)
      assert.strictEqual(response.success ? "" : response.error.category, "NOT_FOUND")
    })
  )

  it.effect("every tool of the real server projects for a model under <action>/<tool>, mapped back", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.McpClient
      const connection = yield* client.connect(everything, { name: "projection" })
      assert.strictEqual(connection.server.name, "mcp-servers/everything")
      const tools = yield* connection.listTools()
      const kit = yield* Toolkit.offer([{ action: "currencyTools", tools }])
      assert.strictEqual(kit.tools.length, tools.length)
      assert.deepStrictEqual(kit.excluded, [])
      for (const tool of kit.tools) {
        assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/)
        assert.notProperty(tool.parameters, "$schema")
        assert.deepStrictEqual(kit.find(tool.name)?.action, "currencyTools")
      }
      const sum = kit.find("currencyTools_get-sum")
      assert.deepStrictEqual({ action: sum?.action, tool: sum?.tool }, { action: "currencyTools", tool: "get-sum" })
    })
  )

  it.effect("C17: the call's timeout is the SDK request's own (its 60 s default never applies)", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.McpClient
      const connection = yield* client.connect(everything, { name: "timeouts" })
      // No Effect timeout around these: only the request option bounds them.
      const error = yield* Effect.flip(
        connection.callTool(
          "trigger-long-running-operation",
          { duration: 5, steps: 5 },
          { timeout: Duration.millis(300) }
        )
      )
      assert.strictEqual(error.reason, "Timeout")
      const done = yield* connection.callTool(
        "trigger-long-running-operation",
        { duration: 1, steps: 2 },
        { timeout: Duration.seconds(10) }
      )
      assert.isFalse(done.isError === true)
    })
  )
})
