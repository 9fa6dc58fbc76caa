/**
 * mcpTool actions against a stdio server that answers the way no SDK server
 * would (test/fixtures/mcp-fault-server.ts), spawned for real: server-sent
 * JSON-RPC error codes that collide with the SDK's own (C41), a malformed
 * result, doubled -32602 prefixes, a broken frame or a reply under a wrong
 * id, a server that never answers `initialize` or `tools/list` (C36), and an
 * attempt timer that cuts a non-idempotent call after it was sent (C45).
 *
 * No test here measures time: the ones about "not waiting the full timeout"
 * give the action a 10-minute timeout, so waiting for it fails the test by
 * vitest's own 30-second limit.
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Action, type ActionError, Agent, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { Effect, Exit } from "effect"
import { counterFile, starts } from "../fixtures/mcp.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))

const faultServer = (mode: string, counter?: string): Action.McpServer => ({
  command: process.execPath,
  args: [join(root, "test/fixtures/mcp-fault-server.ts"), mode, ...(counter === undefined ? [] : [counter])]
})

const agentWith = (actions: Record<string, Action.Any>) =>
  Agent.make({
    id: "faults",
    roles: [Role.make({ identity: { name: "ops", goal: "Operate tools", domain: "ops" }, actions })]
  })

const Sdk = McpClientSdk.layer()

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    assert.isTrue(Exit.isFailure(exit), "expected a failure")
    const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
    assert.strictEqual(error?._tag, "Fail", "expected a typed failure, not a defect")
    return (error as { readonly error: ActionError.ActionError }).error
  })

const occurrences = (text: string, part: string) => text.split(part).length - 1

describe("mcpTool against a misbehaving stdio server", () => {
  it.live(
    "C41: server-sent -32000 and -32001 are EXECUTION with code and message; the connection stays up and the server is not respawned",
    () =>
      Effect.gen(function* () {
        const counter = counterFile()
        const agent = yield* agentWith({
          tools: Action.mcpTool({ description: "tools", server: faultServer("normal", counter), timeout: "10 minutes" })
        })
        for (const [tool, code, message] of [
          ["rpc-32000", "-32000", "backend down"],
          ["rpc-32001", "-32001", "upstream request timeout"],
          ["rpc-42", "42", "custom failure"]
        ] as const) {
          const error = yield* failureOf(agent.executeAction("tools", { tool, arguments: {} }))
          assert.strictEqual(error.category, "EXECUTION", `${tool}: ${error.message}`)
          assert.isFalse(error.retryable, tool)
          assert.include(error.message, code, tool)
          assert.include(error.message, message, tool)
          assert.notInclude(error.message, "timed out", tool)
        }
        // Four calls reached this one process: the connection was never dropped.
        assert.strictEqual(yield* agent.executeAction("tools", { tool: "ok", arguments: {} }), "ok 4")
        assert.strictEqual(starts(counter), 1)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("a server-sent -32602 is VALIDATION whose message says 'MCP error -32602' once", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({ tools: Action.mcpTool({ description: "tools", server: faultServer("normal") }) })
      const error = yield* failureOf(agent.executeAction("tools", { tool: "rpc-32602", arguments: {} }))
      assert.strictEqual(error.category, "VALIDATION", error.message)
      assert.include(error.message, "Tool rpc-32602: bad arguments")
      assert.strictEqual(occurrences(error.message, "MCP error -32602"), 1, error.message)
      assert.strictEqual(
        occurrences(JSON.stringify("issues" in error ? error.issues : undefined), "MCP error -32602"),
        1
      )
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "a malformed tools/call result is EXECUTION naming the field, without a schema dump, and the server is not respawned",
    () =>
      Effect.gen(function* () {
        const counter = counterFile()
        const agent = yield* agentWith({
          tools: Action.mcpTool({ description: "tools", server: faultServer("normal", counter) })
        })
        const error = yield* failureOf(agent.executeAction("tools", { tool: "malformed", arguments: {} }))
        assert.strictEqual(error.category, "EXECUTION", error.message)
        assert.include(error.message, "malformed")
        assert.include(error.message, "content")
        // A ZodError's message is a JSON dump of its issues.
        assert.notInclude(error.message, '"expected"')
        assert.notInclude(error.message, '"code"')
        assert.isBelow(error.message.length, 400)
        assert.strictEqual(yield* agent.executeAction("tools", { tool: "ok", arguments: {} }), "ok 2")
        assert.strictEqual(starts(counter), 1)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "a broken JSON-RPC frame, or a reply under an id never asked for, fails the pending call at once (not after its 10-minute timeout)",
    () =>
      Effect.gen(function* () {
        const agent = yield* agentWith({
          tools: Action.mcpTool({ description: "tools", server: faultServer("normal"), timeout: "10 minutes" })
        })
        for (const tool of ["garbage", "wrong-id"]) {
          const error = yield* failureOf(agent.executeAction("tools", { tool, arguments: {} }))
          assert.strictEqual(error.category, "TRANSIENT", `${tool}: ${error.message}`)
          assert.include(error.message, "not a valid JSON-RPC response", tool)
          // The tool may have run: a non-idempotent action does not repeat it.
          assert.isTrue(error._tag === "TransientFailure" && error.outcomeUnknown, tool)
          assert.isFalse(error.retryable, tool)
        }
        // The frames after the broken ones still work.
        assert.match(String(yield* agent.executeAction("tools", { tool: "ok", arguments: {} })), /^ok \d$/)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "C36: a server that never answers initialize, or never answers tools/list, fails TIMEOUT within the action's 2-second timeout",
    () =>
      Effect.gen(function* () {
        for (const mode of ["silent", "no-list"]) {
          const agent = yield* agentWith({
            tools: Action.mcpTool({ description: "tools", server: faultServer(mode), timeout: "2 seconds" })
          })
          const error = yield* failureOf(agent.executeAction("tools", { tool: "ok", arguments: {} }))
          assert.strictEqual(error.category, "TIMEOUT", `${mode}: ${error.message}`)
          assert.include(error.message, "2s", mode)
        }
      }).pipe(
        Effect.scoped,
        Effect.provide(McpClientSdk.layer({ connectTimeout: "25 seconds", listTimeout: "25 seconds" }))
      )
  )
})

describe("an attempt timer that cuts a non-idempotent mcpTool call", () => {
  it.live(
    "C45: a first attempt that connects, lists and sends the call, then is cut, is TIMEOUT with the outcome unknown and not retried: the tool runs once",
    () =>
      Effect.gen(function* () {
        const calls = counterFile()
        const server = faultServer("normal")
        const agent = yield* agentWith({
          tools: Action.mcpTool({
            description: "tools",
            server: typeof server === "string" ? server : { ...server, env: { FIXTURE_CALLS: calls } }
          }).pipe(
            Action.resilience({ attemptTimeout: "3 seconds", retry: { maxAttempts: 2, initialDelay: "10 millis" } })
          )
        })
        const error = yield* failureOf(agent.executeAction("tools", { tool: "hang", arguments: {} }))
        assert.strictEqual(error.category, "TIMEOUT", error.message)
        assert.isFalse(error.retryable)
        assert.strictEqual(starts(calls), 1)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )
})
