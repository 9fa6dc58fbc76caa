/**
 * mcpTool actions against the SDK's own McpServer over streamable HTTP on
 * 127.0.0.1 (SPEC §8; cases C17, C20): credentials as a bearer header,
 * expired sessions, payloads that are not JSON-RPC, HTTP statuses.
 */
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, McpClient, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { ConfigProvider, Duration, Effect, Schedule } from "effect"
import * as HttpServer from "./fixtures/mcp-http-server.ts"

const agentFor = (action: Action.Any) =>
  Agent.make({
    id: "http-agent",
    roles: [
      Role.make({ identity: { name: "web", goal: "Use remote tools", domain: "web" }, actions: { remote: action } })
    ]
  })

const Sdk = McpClientSdk.layer()
const secret = "sk-http-9a8b7c"
const withSecret = Effect.provideService(
  ConfigProvider.ConfigProvider,
  ConfigProvider.fromEnv({ env: { REMOTE_TOOLS_KEY: secret } })
)

describe("mcpTool over streamable HTTP", () => {
  it.live("calls a tool; apiKeyEnv goes as Authorization: Bearer, read through Config", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      server.token = secret
      const agent = yield* agentFor(
        Action.mcpTool({ description: "remote", server: server.url, apiKeyEnv: "REMOTE_TOOLS_KEY" })
      )
      assert.strictEqual(
        yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "hi" } }),
        "Echo: hi"
      )
      assert.isTrue(server.authorizations.length > 0)
      assert.isTrue(server.authorizations.every((header) => header === `Bearer ${secret}`))
    }).pipe(Effect.scoped, Effect.provide(Sdk), withSecret)
  )

  it.live("a server refusing the credential (401) is EXECUTION, and the credential is in no error", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      server.token = "another-key"
      const agent = yield* agentFor(
        Action.mcpTool({ description: "remote", server: server.url, apiKeyEnv: "REMOTE_TOOLS_KEY" })
      )
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "echo", arguments: { message: "hi" } }))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.strictEqual(error._tag === "ExecutionFailure" && error.status, 401)
      assert.notInclude(inspect(error, { depth: 10 }), secret)
    }).pipe(Effect.scoped, Effect.provide(Sdk), withSecret)
  )

  it.live("C20a: after a server restart the stale session gets 404; the call re-initialises once and succeeds", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(Action.mcpTool({ description: "remote", server: server.url }))
      assert.strictEqual(yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "a" } }), "Echo: a")
      assert.strictEqual(server.initializations(), 1)
      server.restart()
      assert.strictEqual(yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "b" } }), "Echo: b")
      assert.strictEqual(server.initializations(), 2)
      assert.strictEqual(yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "c" } }), "Echo: c")
      assert.strictEqual(server.initializations(), 2, "the new session is kept")
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C20a: when re-initialising fails too the call is TRANSIENT, with no retry loop", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(Action.mcpTool({ description: "remote", server: server.url }))
      yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "a" } })
      server.restart()
      const before = server.authorizations.length
      server.refuse = 503
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "echo", arguments: { message: "b" } }))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.isAtMost(server.authorizations.length - before, 2, "one stale request, one initialize")
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "C20b: a 2xx whose payload is not a JSON-RPC response is TRANSIENT at once, with a snippet (JSON and SSE)",
    () =>
      Effect.gen(function* () {
        const server = yield* HttpServer.start
        const agent = yield* agentFor(
          Action.mcpTool({ description: "remote", server: server.url, timeout: "60 seconds" })
        )
        for (const tool of ["garbage-json", "garbage-sse"]) {
          const error = yield* Effect.flip(agent.executeAction("remote", { tool })).pipe(Effect.timeout("5 seconds"))
          assert.strictEqual(error._tag, "TransientFailure", tool)
          assert.include(error.message, '{"error":"Session not found"}', tool)
          assert.isTrue(error._tag === "TransientFailure" && error.outcomeUnknown, tool)
        }
        assert.strictEqual(
          yield* agent.executeAction("remote", { tool: "echo", arguments: { message: "ok" } }),
          "Echo: ok"
        )
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("notifications/tools/list_changed over the session's stream refreshes the cached list", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const client = yield* McpClient.McpClient
      const connection = yield* client.connect(server.url, { name: "remote" })
      const before = yield* connection.listTools()
      assert.strictEqual(yield* connection.listTools(), before, "cached")
      assert.notInclude(
        before.map((tool) => tool.name),
        "fresh"
      )
      yield* connection.callTool("add-tool", {}, { timeout: Duration.seconds(5) })
      const after = yield* connection
        .listTools()
        .pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (tools) => tools !== before }),
          Effect.timeout("3 seconds")
        )
      assert.include(
        after.map((tool) => tool.name),
        "fresh"
      )
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C19: a content block of an unknown type becomes a placeholder; the blocks around it are kept", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(Action.mcpTool({ description: "remote", server: server.url }))
      assert.deepStrictEqual(yield* agent.executeAction("remote", { tool: "exotic" }), [
        { type: "text", text: "before" },
        { type: "hologram", text: "[unsupported content hologram]" },
        { type: "text", text: "after" }
      ])
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C17: a call past its timeout is TIMEOUT and the server sees the cancellation", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(
        Action.mcpTool({ description: "remote", server: server.url, timeout: "400 millis" })
      )
      yield* agent
        .executeAction("remote", { tool: "echo", arguments: { message: "warm" } })
        .pipe(Effect.retry({ times: 3 }))
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "slow", arguments: { ms: 30_000 } }))
      assert.strictEqual(error._tag, "Timeout")
      yield* Effect.sync(() => server.cancelled.length).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (count) => count > 0 }),
        Effect.timeout("3 seconds")
      )
      assert.strictEqual(server.cancelled.length, 1)
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("an interrupted call (the resilience deadline passes) is cancelled on the server too", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(
        Action.mcpTool({ description: "remote", server: server.url, timeout: "30 seconds" }).pipe(
          Action.resilience({ timeout: "400 millis" })
        )
      )
      yield* agent
        .executeAction("remote", { tool: "echo", arguments: { message: "warm" } })
        .pipe(Effect.retry({ times: 3 }))
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "slow", arguments: { ms: 30_000 } }))
      assert.strictEqual(error._tag, "Timeout")
      assert.include(error.message, "run step timed out")
      yield* Effect.sync(() => server.cancelled.length).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (count) => count > 0 }),
        Effect.timeout("3 seconds")
      )
      assert.strictEqual(server.cancelled.length, 1)
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("HTTP 503 after sending is TRANSIENT with outcome unknown (not retryable); 429 is retryable", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.start
      const agent = yield* agentFor(Action.mcpTool({ description: "remote", server: server.url }))
      const unavailable = yield* Effect.flip(agent.executeAction("remote", { tool: "http-503" }))
      assert.strictEqual(unavailable._tag, "TransientFailure")
      if (unavailable._tag !== "TransientFailure") return
      assert.strictEqual(unavailable.status, 503)
      assert.isTrue(unavailable.outcomeUnknown)
      assert.isFalse(unavailable.retryable)
      const limited = yield* Effect.flip(agent.executeAction("remote", { tool: "http-429" }))
      assert.isTrue(limited._tag === "TransientFailure" && limited.status === 429 && limited.retryable)
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("a refused connection is TRANSIENT, sent nowhere, so retryable", () =>
    Effect.gen(function* () {
      const agent = yield* agentFor(Action.mcpTool({ description: "remote", server: "http://127.0.0.1:9/mcp" }))
      const error = yield* Effect.flip(agent.executeAction("remote", { tool: "echo", arguments: { message: "x" } }))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.isTrue(error._tag === "TransientFailure" && !error.outcomeUnknown && error.retryable)
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )
})
