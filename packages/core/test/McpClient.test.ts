import { assert, describe, it } from "@effect/vitest"
import { InMemoryMcp } from "@rolecraft/testing"
import { Effect } from "effect"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as McpClient from "../src/McpClient.ts"
import * as Role from "../src/Role.ts"

const server = { command: "node", args: ["server.js"] }

describe("McpClient", () => {
  it("serverKey: equal servers share a key; the credential variable and the environment tell them apart", () => {
    assert.strictEqual(McpClient.serverKey("http://127.0.0.1:80/mcp"), McpClient.serverKey("http://127.0.0.1/mcp"))
    assert.strictEqual(
      McpClient.serverKey({ ...server, env: { B: "2", A: "1" } }),
      McpClient.serverKey({ ...server, env: { A: "1", B: "2" } })
    )
    assert.notStrictEqual(McpClient.serverKey(server), McpClient.serverKey(server, "FX_API_KEY"))
    assert.notStrictEqual(McpClient.serverKey(server), McpClient.serverKey({ ...server, env: { A: "1" } }))
    assert.strictEqual(McpClient.describeServer({ ...server, env: { SECRET: "x" } }), "node server.js")
  })

  it("describeServer leaves out a URL's user information, query and fragment, which may hold a token", () => {
    assert.strictEqual(
      McpClient.describeServer("https://ann:pw@mcp.example.com:8443/mcp?token=s3cret#x"),
      "https://mcp.example.com:8443/mcp"
    )
    assert.strictEqual(McpClient.describeServer("memory://paged"), "memory://paged")
  })

  it.effect(
    "with no McpClient provided (its requirement cast away) an mcpTool call is VALIDATION inside the run step, so its fallback runs",
    () =>
      Effect.gen(function* () {
        const tools = Action.mcpTool({ description: "tools", server })
        const role = Role.make({
          identity: { name: "r", goal: "g", domain: "d" },
          actions: { tools, rescued: tools.pipe(Action.fallback((_args, error) => `fallback after ${error.category}`)) }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        // The types ask for an McpClient: only a program that casts it away gets here.
        const untyped = <A, E>(effect: Effect.Effect<A, E, McpClient.McpClient>) => effect as Effect.Effect<A, E>
        const error = yield* Effect.flip(untyped(agent.executeAction("tools", { tool: "echo" })))
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, "McpClient not provided")
        assert.strictEqual(
          yield* untyped(agent.executeAction("rescued", { tool: "echo" })),
          "fallback after VALIDATION"
        )
      })
  )

  it.effect(
    "Agent.make({ mcpServers }) registers each server as an mcpTool action; a clash with a role's action is refused",
    () =>
      Effect.gen(function* () {
        const role = Role.make({
          identity: { name: "r", goal: "g", domain: "d" },
          actions: { local: Action.local({ description: "l", parameters: {}, run: () => 1 }) }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role], mcpServers: { weather: "http://127.0.0.1:1/mcp" } })
        // @ts-expect-error an unknown name does not compile; the run-time refusal is what this pins
        const missing = yield* Effect.flip(agent.executeAction("nope", {}))
        assert.deepStrictEqual(missing._tag === "ActionNotFound" && missing.available, ["local", "weather"])
        const clash = yield* Effect.flip(Agent.make({ id: "b", roles: [role], mcpServers: { local: server } }))
        assert.strictEqual(clash._tag, "RoleDefinitionError")
      }).pipe(Effect.provide(InMemoryMcp.layer({})))
  )

  it.effect("an mcpTool call without a tool name is VALIDATION before anything runs", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "r", goal: "g", domain: "d" },
        actions: { tools: Action.mcpTool({ description: "tools", server }) }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      // @ts-expect-error a missing tool name does not compile; the run-time check is what this pins
      const error = yield* Effect.flip(agent.executeAction("tools", { arguments: {} }))
      assert.strictEqual(error._tag, "ValidationError")
      assert.deepStrictEqual(error._tag === "ValidationError" && error.issues.map((issue) => issue.path), ["tool"])
    }).pipe(Effect.provide(InMemoryMcp.layer({})))
  )
})
