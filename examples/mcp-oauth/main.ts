/**
 * An agent using a remote MCP server that needs OAuth: the example starts a
 * local authorization server and an MCP server behind it (servers.ts, the
 * MCP SDK's own auth helpers), and the agent's client authorizes by itself —
 * discovery, dynamic client registration, PKCE, a resource indicator — on the
 * first call's 401. The browser step is `McpOAuth.layerFollowRedirects` (the
 * local authorization server approves without a login page; a real one gets
 * a service that opens the user's browser). Tokens are kept in
 * `McpTokenStore.layerMemory`; when they expire the client refreshes them.
 *
 * Run: node examples/mcp-oauth/main.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Role } from "@rolecraft/core"
import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { Console, Effect, Layer } from "effect"
import { startOAuthServers } from "./servers.ts"

const program = Effect.gen(function* () {
  const servers = yield* Effect.acquireRelease(
    Effect.promise(() => startOAuthServers()),
    (started) => Effect.promise(() => started.close())
  )
  yield* Console.log(`MCP server at ${servers.mcpUrl}, behind a local authorization server`)

  const Notes = Role.make({
    identity: { name: "notes", goal: "Find the team's notes", domain: "notes" },
    actions: { notes: Action.mcpTool({ description: "The team's notes", server: servers.mcpUrl }) }
  })
  const client = McpClientSdk.layerOAuth({
    redirectUrl: "http://127.0.0.1:8976/callback",
    clientName: "notes-agent"
  }).pipe(Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects]))

  yield* Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "notes-agent", roles: [Notes] })
    const found = yield* agent.executeAction("notes", { tool: "search_notes", arguments: { query: "roadmap" } })
    yield* Console.log(`search_notes(roadmap) -> ${JSON.stringify(found)}`)
    yield* Console.log(
      `authorized: ${servers.registrations()} registration, ${servers.authorizations()} authorization, ` +
        `${servers.tokensIssued()} token, resource ${servers.resources.join(", ")}`
    )

    servers.expireTokens()
    const again = yield* agent.executeAction("notes", { tool: "search_notes", arguments: { query: "standup" } })
    yield* Console.log(`after the token expired: search_notes(standup) -> ${JSON.stringify(again)}`)
    yield* Console.log(`refreshed: ${servers.refreshes()} refresh, still ${servers.authorizations()} authorization`)
  }).pipe(Effect.provide(client))

  // Without OAuth the same server refuses: EXECUTION naming the status and the server.
  const plain = yield* Agent.make({ id: "plain-agent", roles: [Notes] })
  const refused = yield* Effect.flip(
    plain.executeAction("notes", { tool: "search_notes", arguments: { query: "roadmap" } })
  ).pipe(Effect.provide(McpClientSdk.layer()))
  yield* Console.log(`without OAuth -> ${"category" in refused ? refused.category : refused._tag}: ${refused.message}`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
