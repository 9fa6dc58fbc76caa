import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as McpToolkit from "../../../src/internal/chat/mcpToolkit.ts"

const tool = (name: string, description?: string) => ({
  name,
  ...(description === undefined ? {} : { description }),
  inputSchema: { type: "object" }
})

describe("McpToolkit", () => {
  it.effect("C12: the same tool on two servers gets two names, each routed back to its own server", () =>
    Effect.gen(function* () {
      const kit = yield* McpToolkit.make([
        { action: "srv-a", tools: [tool("send_email", "Send through A")] },
        { action: "srv-b", tools: [tool("send_email", "Send through B")] }
      ])
      assert.deepStrictEqual(
        kit.tools.map((entry) => [entry.name, entry.description]),
        [
          ["srv-a_send_email", "Send through A"],
          ["srv-b_send_email", "Send through B"]
        ]
      )
      assert.deepStrictEqual(kit.route("srv-b_send_email"), { action: "srv-b", tool: "send_email" })
      assert.isUndefined(kit.route("send_email"))
    })
  )

  it.effect("C11: dots, slashes and names past 64 characters become valid, distinct names", () =>
    Effect.gen(function* () {
      const long = `hosting_${"x".repeat(70)}`
      const kit = yield* McpToolkit.make([
        {
          action: "cal",
          tools: [tool("calendar.respondToEvent"), tool("calendar_respondToEvent"), tool("user-profile/update")]
        },
        { action: "host", tools: [tool(long), tool(`${long}2`)] }
      ])
      const names = kit.tools.map((entry) => entry.name)
      assert.strictEqual(new Set(names).size, 5)
      for (const name of names) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/)
      assert.deepStrictEqual(
        kit.tools.map((entry) => kit.route(entry.name)?.tool),
        ["calendar.respondToEvent", "calendar_respondToEvent", "user-profile/update", long, `${long}2`]
      )
    })
  )

  it.effect(
    "C07: an object schema without properties is offered with properties {}; the description has a default",
    () =>
      Effect.gen(function* () {
        const kit = yield* McpToolkit.make([{ action: "go", tools: [tool("get_server_version")] }])
        assert.deepStrictEqual(kit.tools[0]?.parameters, { type: "object", properties: {} })
        assert.strictEqual(kit.tools[0]?.description, "get_server_version (MCP tool of go)")
      })
  )

  it.effect("actions offered alongside get names unique across actions and MCP tools, each routed to its own", () =>
    Effect.gen(function* () {
      const kit = yield* McpToolkit.make([{ action: "srv-a", tools: [tool("send_email", "Send through A")] }], {
        actions: [{ key: "srv-a_send_email", description: "A local action", parameters: { type: "object" } }]
      })
      const [action, mcp] = kit.tools
      assert.strictEqual(action?.name, "srv-a_send_email")
      assert.match(mcp?.name ?? "", /^srv-a_send_email_[0-9a-f]{8}$/)
      assert.deepStrictEqual(kit.route(action?.name ?? ""), { action: "srv-a_send_email" })
      assert.deepStrictEqual(kit.route(mcp?.name ?? ""), { action: "srv-a", tool: "send_email" })
    })
  )
})
