/**
 * Documented default timeouts, pinned on the TestClock so that a changed
 * default fails: a webService attempt is cut at 30 seconds, an mcpTool call
 * at 60 seconds. Each call is forked, the clock moved to a millisecond before
 * the default (the call is still running) and then to it (TIMEOUT, `after`
 * the default).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { HttpRoutes, InMemoryMcp } from "@rolecraft/testing"
import { Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"

const agentWith = (actions: Record<string, Action.Any>) =>
  Agent.make({
    id: "defaults",
    roles: [Role.make({ identity: { name: "ops", goal: "Operate", domain: "ops" }, actions })]
  })

/** Real time for the forked call's I/O (in-memory, no network) to reach its wait. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))

const cutAt = <A, E, R>(call: Effect.Effect<A, E, R>, expected: Duration.Duration) =>
  Effect.gen(function* () {
    // The agent's requirements are all provided by the caller; its type does not say so.
    const fiber = yield* Effect.forkChild(Effect.exit(call as Effect.Effect<A, E>))
    yield* settle
    yield* TestClock.adjust(Duration.subtract(expected, Duration.millis(1)))
    yield* settle
    assert.isUndefined(fiber.pollUnsafe(), "still running a millisecond before the default")
    yield* TestClock.adjust(Duration.millis(1))
    const exit = yield* Fiber.join(fiber)
    assert.isTrue(Exit.isFailure(exit))
    const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error?: unknown }).error : undefined
    assert.strictEqual((error as { readonly _tag?: string })?._tag, "Timeout", String(exit))
    assert.isTrue(Duration.equals((error as { readonly after: Duration.Duration }).after, expected))
  })

describe("default timeouts", () => {
  it.effect("a webService attempt times out at 30 seconds by default", () =>
    Effect.gen(function* () {
      const routes = HttpRoutes.make({ "GET /v1/slow": () => Effect.never })
      const agent = yield* agentWith({
        slow: Action.webService({ description: "A slow service", endpoint: "http://api.test/v1/slow", parameters: {} })
      })
      yield* cutAt(Effect.provide(agent.executeAction("slow", {}), routes.layer), Duration.seconds(30))
    })
  )

  it.effect("an mcpTool call times out at 60 seconds by default", () =>
    Effect.gen(function* () {
      const mcp = InMemoryMcp.layer({
        "memory://slow": () => {
          const server = new McpServer({ name: "slow", version: "1.0.0" })
          server.registerTool("wait", { description: "Never answers" }, () => new Promise(() => {}))
          return server
        }
      })
      const agent = yield* agentWith({ tools: Action.mcpTool({ description: "tools", server: "memory://slow" }) })
      yield* cutAt(
        Effect.provide(agent.executeAction("tools", { tool: "wait", arguments: {} }), mcp),
        Duration.seconds(60)
      )
    })
  )
})
