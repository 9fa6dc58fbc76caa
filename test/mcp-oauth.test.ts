/**
 * McpClientSdk's OAuth against a real authorization server and MCP server on
 * 127.0.0.1 built from the MCP SDK's own server-side auth helpers
 * (examples/mcp-oauth/servers.ts: mcpAuthRouter, requireBearerAuth), and
 * what a 401 is without OAuth (case C61).
 */
import { inspect } from "node:util"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Action, type ActionError, Agent, Role } from "@rolecraft/core"
import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { Effect, Layer, Redacted } from "effect"
import { type OAuthServers, startOAuthServers } from "../examples/mcp-oauth/servers.ts"
import { freshDatabase } from "./setup/postgresUrl.ts"

const servers = Effect.acquireRelease(
  Effect.promise(() => startOAuthServers()),
  (started) => Effect.promise(() => started.close())
)

const agentFor = (server: OAuthServers) =>
  Agent.make({
    id: "oauth-agent",
    roles: [
      Role.make({
        identity: { name: "notes", goal: "Find notes", domain: "notes" },
        actions: { notes: Action.mcpTool({ description: "notes", server: server.mcpUrl }) }
      })
    ]
  })

const search = (agent: Effect.Success<ReturnType<typeof agentFor>>, query: string) =>
  agent.executeAction("notes", { tool: "search_notes", arguments: { query } })

const oauthClient = (store: Layer.Layer<McpTokenStore.McpTokenStore, unknown>) =>
  McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback" }).pipe(
    Layer.provide([store, McpOAuth.layerFollowRedirects])
  )

describe("McpClientSdk with OAuth", () => {
  it.live(
    "authorizes on the first 401 (registration, PKCE, resource indicator), then reuses and refreshes the token",
    () =>
      Effect.gen(function* () {
        const server = yield* servers
        const agent = yield* agentFor(server)
        assert.include(yield* search(agent, "roadmap"), 'match "roadmap"')
        assert.strictEqual(server.registrations(), 1)
        assert.strictEqual(server.authorizations(), 1)
        assert.deepStrictEqual(server.resources, [server.mcpUrl])

        assert.include(yield* search(agent, "again"), 'match "again"')
        assert.strictEqual(server.authorizations(), 1, "the token is reused")

        server.expireTokens()
        assert.include(yield* search(agent, "later"), 'match "later"')
        assert.strictEqual(server.refreshes(), 1, "an expired token is refreshed")
        assert.strictEqual(server.authorizations(), 1, "no new browser step")
      }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
  )

  it.live("a refused browser step is EXECUTION naming 401, the server and the refusal; no token is issued", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const refusing = Layer.succeed(
        McpOAuth.Authorization,
        McpOAuth.Authorization.of({
          authorize: ({ url, redirectUrl }) =>
            Effect.succeed(new URL(`${redirectUrl}?error=access_denied&state=${url.searchParams.get("state")}`))
        })
      )
      const client = McpClientSdk.layerOAuth({}).pipe(Layer.provide([McpTokenStore.layerMemory, refusing]))
      const error = yield* Effect.gen(function* () {
        const agent = yield* agentFor(server)
        return yield* Effect.flip(search(agent, "x"))
      }).pipe(Effect.provide(client))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.include(error.message, "401")
      assert.include(error.message, server.mcpUrl)
      assert.include(error.message, "access_denied")
      assert.strictEqual(server.tokensIssued(), 0)
    }).pipe(Effect.scoped)
  )

  it.live("a forged redirect (another state) is refused, and no token is asked for", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const forging = Layer.succeed(
        McpOAuth.Authorization,
        McpOAuth.Authorization.of({
          authorize: ({ redirectUrl }) => Effect.succeed(new URL(`${redirectUrl}?code=stolen&state=forged`))
        })
      )
      const client = McpClientSdk.layerOAuth({}).pipe(Layer.provide([McpTokenStore.layerMemory, forging]))
      const error = yield* Effect.gen(function* () {
        const agent = yield* agentFor(server)
        return yield* Effect.flip(search(agent, "x"))
      }).pipe(Effect.provide(client))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.include(error.message, "state does not match")
      assert.strictEqual(server.tokensIssued(), 0)
    }).pipe(Effect.scoped)
  )

  it.live("tokens kept in Postgres (McpTokenStore.layerSql) serve a new client without a new authorization", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const url = yield* freshDatabase("mcp_oauth")
      const store = McpTokenStore.layerSql.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))
      const first = yield* Effect.gen(function* () {
        return yield* search(yield* agentFor(server), "one")
      }).pipe(Effect.scoped, Effect.provide(oauthClient(store)))
      assert.include(first, 'match "one"')
      // Another client (as after a restart), the same database.
      const second = yield* Effect.gen(function* () {
        return yield* search(yield* agentFor(server), "two")
      }).pipe(Effect.scoped, Effect.provide(oauthClient(store)))
      assert.include(second, 'match "two"')
      assert.strictEqual(server.authorizations(), 1)
      assert.strictEqual(server.registrations(), 1)
    }).pipe(Effect.scoped)
  )

  it.live("the agent redacts the OAuth tokens it met from what it lets out (agent.redact)", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const agent = yield* agentFor(server)
      yield* search(agent, "roadmap")
      assert.isAbove(server.issued.length, 0)
      for (const token of server.issued) {
        assert.notInclude(yield* agent.redact(`leaked ${token} here`), token)
      }
    }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
  )
})

describe("C61: a 401 without OAuth", () => {
  it.live("is EXECUTION naming the status and the server, on the first call and while it backs off", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const agent = yield* agentFor(server)
      const check = (
        error: ActionError.ActionError | { readonly _tag: string; readonly message: string; readonly category?: string }
      ) => {
        assert.strictEqual(error._tag, "ExecutionFailure", error.message)
        assert.strictEqual("category" in error ? error.category : undefined, "EXECUTION")
        assert.include(error.message, "HTTP 401")
        assert.include(error.message, server.mcpUrl)
        assert.include(error.message, "authorization")
      }
      check(yield* Effect.flip(search(agent, "a")))
      // The failed connect is remembered: the next call must not read as TRANSIENT ("not reconnecting …").
      check(yield* Effect.flip(search(agent, "b")))
      assert.notInclude(inspect(yield* Effect.flip(search(agent, "c"))), "TransientFailure")
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )
})
