/**
 * An mcpTool action (`currencyTools`, a role's view of an MCP server's tools),
 * pointed at the published server-everything over stdio: its tools called
 * directly through the agent's pipeline, and one failure reported in an
 * `ActionResponse`.
 *
 * Run: node examples/mcp-tools.ts
 */
import { fileURLToPath } from "node:url"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { Console, Effect } from "effect"

const everything = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)

export const TravelRole = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    // A stdio server here; a streamable HTTP one is its URL, with `apiKeyEnv` naming its credential's variable.
    currencyTools: Action.mcpTool({
      description: "Currency tools",
      server: { command: process.execPath, args: [everything, "stdio"] },
      tools: ["echo", "get-sum", "get-tiny-image"],
      timeout: "10 seconds"
    })
  }
})

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "planner", roles: [TravelRole] })

  const echoed = yield* agent.executeAction("currencyTools", { tool: "echo", arguments: { message: "bonjour" } })
  yield* Console.log(`echo -> ${JSON.stringify(echoed)}`)

  // A model sends numbers as strings: they are converted against the tool's input schema.
  const sum = yield* agent.executeAction("currencyTools", { tool: "get-sum", arguments: { a: "120.5", b: 79.5 } })
  yield* Console.log(`get-sum -> ${JSON.stringify(sum)}`)

  const image = yield* agent.executeAction("currencyTools", { tool: "get-tiny-image" })
  yield* Console.log(`get-tiny-image -> ${JSON.stringify(image)}`)

  const response = yield* agent.execute({ action: "currencyTools", params: { tool: "get-env" } })
  yield* Console.log(
    response.success
      ? `unexpected success: ${String(response.value)}`
      : `get-env -> ${response.error.category}: ${response.error.message}`
  )
}).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))

NodeRuntime.runMain(program)
