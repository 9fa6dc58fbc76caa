// An mcpTool action sends the call's idempotency key (IdempotencyKey.IdempotencyKey, set by a durable run) in the request's
// `_meta` under "rolecraft/idempotencyKey", read by the SDK's own server; a call without a key sends no `_meta`.
import { assert, describe, it } from "@effect/vitest"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Action, Agent, IdempotencyKey, McpClient, Role } from "@rolecraft/core"
import { InMemoryMcp } from "@rolecraft/testing"
import { Effect } from "effect"

describe("mcpTool and the idempotency key", () => {
  it.effect("the key goes in the tools/call request's _meta; no key, no _meta", () => {
    const seen: Array<unknown> = []
    const factory = () => {
      const server = new McpServer({ name: "payments", version: "1.0.0" })
      server.registerTool("charge", { description: "Charge" }, (extra) => {
        seen.push(extra._meta?.[McpClient.idempotencyKeyMeta])
        return { content: [{ type: "text" as const, text: "charged" }] }
      })
      return server
    }
    return Effect.gen(function* () {
      const agent = yield* Agent.make({
        id: "a",
        roles: [
          Role.make({
            identity: { name: "r", goal: "g", domain: "d" },
            actions: { payments: Action.mcpTool({ description: "Payments", server: "memory://payments" }) }
          })
        ]
      })
      const call = agent.executeAction("payments", { tool: "charge", arguments: {} })
      assert.strictEqual(yield* Effect.provideService(call, IdempotencyKey.IdempotencyKey, "run-1/call_1"), "charged")
      assert.strictEqual(yield* call, "charged")
      assert.deepStrictEqual(seen, ["run-1/call_1", undefined])
    }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://payments": factory })))
  })
})
