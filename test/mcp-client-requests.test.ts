/**
 * What a real MCP server (the SDK's McpServer over streamable HTTP on
 * 127.0.0.1) asks of Rolecraft's client during a call — elicitation — and a
 * tool result whose text reports a failed protocol request (case C61).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { McpClientSdk, McpElicitation, McpSampling } from "@rolecraft/mcp"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Fiber, Layer, Stream } from "effect"
import * as HttpServer from "./fixtures/mcp-http-server.ts"

const agentFor = (url: string) =>
  Agent.make({
    id: "requests-agent",
    roles: [
      Role.make({
        identity: { name: "remote", goal: "Use remote tools", domain: "remote" },
        actions: { remote: Action.mcpTool({ description: "remote", server: url }) }
      })
    ]
  })

describe("server requests to McpClientSdk", () => {
  it.live("elicitation without a service is declined, and the server is told so (not -32601)", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const answer = yield* agent.executeAction("remote", { tool: "ask", arguments: {} })
      assert.strictEqual(answer, JSON.stringify({ action: "decline" }))
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )

  it.live("elicitation goes to the McpElicitation service; an accepted form gets the defaults it leaves out", () => {
    const asked: Array<McpElicitation.Request> = []
    const client = McpClientSdk.layer().pipe(
      Layer.provide(
        McpElicitation.layer((request) => {
          asked.push(request)
          return Effect.succeed({ action: "accept", content: { city: "Porto" } })
        })
      )
    )
    return Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const answer = yield* agent.executeAction("remote", { tool: "ask", arguments: {} })
      assert.deepStrictEqual(JSON.parse(String(answer)), { action: "accept", content: { city: "Porto", nights: 2 } })
      assert.strictEqual(asked.length, 1)
      assert.strictEqual(asked[0]?.server, "remote")
      assert.strictEqual(asked[0]?.message, "Which city?")
      assert.strictEqual(asked[0]?.mode, "form")
    }).pipe(Effect.scoped, Effect.provide(client))
  })
})

describe("sampling and roots", () => {
  it.live("sampling goes through the agent's LanguageModel (McpSampling.layerLanguageModel), its budget capped", () => {
    const seen: Array<unknown> = []
    const model = ScriptedModel.layer([
      ScriptedModel.respond((request) => {
        seen.push(request)
        return ScriptedModel.reply("Paris")
      })
    ])
    const client = McpClientSdk.layer().pipe(
      Layer.provide(McpSampling.layerLanguageModel({ maxTokens: 64 })),
      Layer.provide(model)
    )
    return Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const answer = JSON.parse(String(yield* agent.executeAction("remote", { tool: "sample", arguments: {} })))
      assert.strictEqual(answer.role, "assistant")
      assert.deepStrictEqual(answer.content, { type: "text", text: "Paris" })
      assert.strictEqual(answer.stopReason, "endTurn")
      const request = seen[0] as { messages: Array<{ role: string; content: string }>; maxTokens: number }
      assert.deepStrictEqual(request.messages, [
        { role: "system", content: "Answer in one word." },
        { role: "user", content: "Capital of France?" }
      ])
      assert.strictEqual(request.maxTokens, 64, "the server's 5,000 is capped")
    }).pipe(Effect.scoped, Effect.provide(client))
  })

  it.live("without a sampling service the client samples with the LanguageModel in context (the agent's)", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const answer = JSON.parse(String(yield* agent.executeAction("remote", { tool: "sample", arguments: {} })))
      assert.deepStrictEqual(answer.content, { type: "text", text: "Lisbon" })
    }).pipe(
      Effect.scoped,
      Effect.provide(McpClientSdk.layer()),
      Effect.provide(ScriptedModel.layer([ScriptedModel.reply("Lisbon")]))
    )
  )

  it.live("with neither a sampling service nor a model the client does not declare sampling: the request fails", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "sample", arguments: {} }))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.include(error.message, "MCP error -32601", "the client answers that it has no such method")
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )

  it.live("roots come from the client's configuration", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const answer = JSON.parse(String(yield* agent.executeAction("remote", { tool: "roots", arguments: {} })))
      assert.deepStrictEqual(answer.roots, [{ uri: "file:///work/project", name: "project" }])
    }).pipe(
      Effect.scoped,
      Effect.provide(McpClientSdk.layer({ roots: [{ uri: "file:///work/project", name: "project" }] }))
    )
  )
})

describe("what a server tells McpClientSdk unasked", () => {
  it.live("a tool call's progress and the server's log messages become agent events", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      const events = yield* agent.events.pipe(
        Stream.filter((event) => event._tag === "McpToolCallProgressed" || event._tag === "McpServerLogged"),
        Stream.take(3),
        Stream.runCollect,
        Effect.forkScoped
      )
      yield* Effect.yieldNow
      assert.strictEqual(yield* agent.executeAction("remote", { tool: "report", arguments: {} }), "reported")
      const seen = yield* Fiber.join(events)
      const progress = seen.filter((event) => event._tag === "McpToolCallProgressed")
      assert.deepStrictEqual(
        progress.map((event) => [event.action, event.tool, event.progress, event.total, event.message]),
        [
          ["remote", "report", 1, 2, "step 1"],
          ["remote", "report", 2, 2, "step 2"]
        ]
      )
      const logged = seen.find((event) => event._tag === "McpServerLogged")
      assert.strictEqual(logged?._tag === "McpServerLogged" && logged.level, "warning")
      assert.strictEqual(logged?._tag === "McpServerLogged" && logged.logger, "report")
      assert.strictEqual(logged?._tag === "McpServerLogged" && logged.message, '{"note":"disk almost full"}')
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )
})

// C61, the kind: a tool result (no `isError`) whose text is a failed protocol request, in the forms a tool
// writes it — the SDK's `MCP error <code>: …` for every JSON-RPC error code a request can meet, bare or after
// a label — is not a success (EXECUTION; VALIDATION for a bare -32602, the arguments refused); text that only
// mentions an error is a success.
const codes = [-32700, -32600, -32601, -32602, -32603, -32000, -32001, -32002, -32042, -32099]
const labels = ["", "Elicitation error: ", "Sampling failed: ", "roots/list error: ", "  Request failed: "]
const failures = codes.flatMap((code) => labels.map((label) => `${label}MCP error ${code}: something went wrong`))
const successes = [
  "All good",
  "The MCP error -32601 means a method was not found (see the docs)",
  "error: none",
  "MCP error codes are listed in the spec",
  "Result: MCP error -31999 is not a JSON-RPC code",
  "Here is a long explanation of the Elicitation error: MCP error -32601 that you saw yesterday, and many more words"
]

describe("C61: a tool result that reports a failed protocol request", () => {
  it.live(`is not a success in any of ${failures.length} forms, and a success for text that only mentions one`, () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(server.url)
      for (const text of failures) {
        const error = yield* Effect.flip(agent.executeAction("remote", { tool: "says", arguments: { text } }))
        // A bare -32602 is the server refusing the arguments, as it is with `isError`: VALIDATION.
        if (text.startsWith("MCP error -32602")) {
          assert.strictEqual(error._tag, "ValidationError", text)
          continue
        }
        assert.strictEqual(error._tag, "ExecutionFailure", text)
        assert.include(error.message, "failed MCP request", text)
        assert.include(error.message, text.trim(), text)
      }
      for (const text of successes) {
        assert.strictEqual(yield* agent.executeAction("remote", { tool: "says", arguments: { text } }), text)
      }
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )
})
