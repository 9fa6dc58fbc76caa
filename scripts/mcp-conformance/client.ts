/**
 * The client side of the conformance harness: the command the suite launches
 * (`<cmd> <server-url>`, scenario in MCP_CONFORMANCE_SCENARIO, credentials in
 * MCP_CONFORMANCE_CONTEXT for some auth scenarios).
 *
 * Only Rolecraft's public API: an agent with `mcpServers: { x: url }` over
 * `@rolecraft/mcp`'s `McpClientSdk.layer()`. Tools are listed the way an
 * agent lists them — a chat turn offers the server's tools to the model (here
 * `@rolecraft/testing`'s ScriptedModel, which records what it was offered) —
 * and called directly with `agent.executeAction("x", { tool, arguments })`.
 *
 * Exit 0 when every step succeeded, 1 otherwise (the error is printed).
 *
 * Run: node --conditions=@rolecraft/source scripts/mcp-conformance/client.ts <server-url>
 */
import { Agent } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const url = process.argv[2]
if (url === undefined) {
  console.error("usage: client.ts <server-url> (MCP_CONFORMANCE_SCENARIO set)")
  process.exit(2)
}

// The tool each scenario's server expects to be called (from src/scenarios/client/**).
const calls: Record<string, { readonly tool: string; readonly arguments: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: "add_numbers", arguments: { a: 5, b: 3 } },
  "elicitation-sep1034-client-defaults": { tool: "test_client_elicitation_defaults", arguments: {} },
  "sse-retry": { tool: "test_reconnection", arguments: {} }
}
const call = scenario.startsWith("auth/") ? { tool: "test-tool", arguments: {} } : calls[scenario]

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "conformance-client", roles: [], mcpServers: { x: url } })

  // tools/list, as a chat turn does it: the model is offered every tool of every MCP server.
  // CONFORMANCE_SKIP_LIST=1 skips it (to see the direct call's own error first).
  let offered: ReadonlyArray<string> = []
  if (process.env.CONFORMANCE_SKIP_LIST !== "1") {
    const listed = yield* agent.chat("List the tools.", { maxSteps: 1 }).pipe(
      Effect.provide(
        ScriptedModel.layer([
          ScriptedModel.respond((request) => {
            offered = (request.tools ?? []).map((tool) => tool.name)
            return ScriptedModel.reply("listed")
          })
        ])
      )
    )
    console.log(`tools offered to the model: ${JSON.stringify(offered)} (turn: ${listed._tag})`)
  }

  if (call !== undefined) {
    const result = yield* agent.executeAction("x", { tool: call.tool, arguments: call.arguments })
    console.log(`${call.tool} -> ${JSON.stringify(result)}`)
  }
}).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer({ connectTimeout: "20 seconds", listTimeout: "20 seconds" })))

// `Agent.make({ roles: [] })` types its requirements as `unknown` (Role.Services of `never`), though nothing is
// needed at run time once McpClientSdk is provided: hence the cast.
Effect.runPromiseExit(program as Effect.Effect<void, unknown>).then((exit) => {
  if (exit._tag === "Success") process.exit(0)
  console.error(`FAILED: ${String(exit.cause)}`)
  process.exit(1)
})
