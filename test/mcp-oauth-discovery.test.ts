/**
 * OAuth discovery validates what it follows (case C92): a table of hostile
 * setups — a server's `resource_metadata` pointing at another host, metadata
 * naming another issuer, an authorization-server mix-up, an `iss` of another
 * issuer, a plain-http remote authorization server, a resource that is not
 * the server — × the requests the client makes, against real HTTP listeners
 * on 127.0.0.1 (test/fixtures/oauth-discovery-server.ts) and the real MCP SDK
 * client behind `McpClientSdk.layerOAuth`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { Effect, Exit, Layer } from "effect"
import { Agent as Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from "undici"
import { type DiscoveryServers, honestMetadata, type Setup, start } from "./fixtures/oauth-discovery-server.ts"

const client = (options: McpOAuth.Options = {}) =>
  McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback", ...options }).pipe(
    Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects])
  )

/** One `executeAction` on the server's `search_notes`, through a fresh agent and OAuth client. */
const call = (servers: DiscoveryServers, options?: McpOAuth.Options) =>
  Effect.gen(function* () {
    const agent = yield* Agent.make({
      id: "discovery-agent",
      roles: [
        Role.make({
          identity: { name: "notes", goal: "Find notes", domain: "notes" },
          actions: { notes: Action.mcpTool({ description: "notes", server: servers.urls.mcp }) }
        })
      ]
    })
    return yield* agent.executeAction("notes", { tool: "search_notes", arguments: { query: "roadmap" } })
  }).pipe(Effect.scoped, Effect.provide(client(options)), Effect.exit)

const failure = (exit: Exit.Exit<unknown, { readonly _tag: string; readonly message: string }>) => {
  assert.isTrue(Exit.isFailure(exit), "the call must fail")
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  assert.isDefined(error)
  return (error as { readonly error: { readonly _tag: string; readonly message: string } }).error
}

/** Names `as.example.test` as 127.0.0.1 inside this process, as a hostile DNS answer would. */
const resolvingExampleTest = Effect.acquireRelease(
  Effect.sync(() => {
    const previous = getGlobalDispatcher()
    setGlobalDispatcher(
      new Dispatcher({
        connect: {
          lookup: (host, options, callback) => {
            const name = host === "as.example.test" ? "127.0.0.1" : host
            import("node:dns").then((dns) => dns.lookup(name, options, callback))
          }
        }
      })
    )
    return previous
  }),
  (previous) => Effect.sync(() => setGlobalDispatcher(previous))
)

const codeBearing = (servers: DiscoveryServers) =>
  servers.to("attacker", "/token").filter((entry) => entry.body.includes("code="))

describe("OAuth discovery validates every document it follows (C92)", () => {
  it.live("an honest setup authorizes and the call runs (the rules refuse nothing they should allow)", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        metadata: ({ server }) => ({ ...honestMetadata(server), authorization_response_iss_parameter_supported: true }),
        iss: ({ server }) => server
      })
      const exit = yield* call(servers)
      assert.isTrue(Exit.isSuccess(exit), String(exit))
      assert.strictEqual(servers.to("server", "/token").length, 1)
      assert.strictEqual(servers.received.filter((entry) => entry.listener === "attacker").length, 0)
    }).pipe(Effect.scoped)
  )

  it.live("(a) a resource_metadata URL on another origin is not fetched; the server's well-known URL is used", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        challenge: ({ attacker }) => `${attacker}/internal-admin/delete-everything?confirm=yes`
      })
      const exit = yield* call(servers)
      assert.deepStrictEqual(servers.to("attacker", "/"), [], "no request reaches the other host")
      assert.isAbove(servers.to("server", "/.well-known/oauth-protected-resource").length, 0)
      assert.isTrue(Exit.isSuccess(exit), String(exit))
    }).pipe(Effect.scoped)
  )

  it.live("the 2025-03-26 fallback (no resource metadata): the server's origin is the authorization server", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        resourceMetadata: () => undefined,
        metadata: ({ server }) => ({ ...honestMetadata(server), issuer: `${server}/oauth` })
      })
      const exit = yield* call(servers)
      assert.isTrue(Exit.isSuccess(exit), String(exit))
    }).pipe(Effect.scoped)
  )

  it.live("(a) an origin allowed by option is followed for resource metadata", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        challenge: ({ attacker }) => `${attacker}/.well-known/oauth-protected-resource/mcp`
      })
      const exit = yield* call(servers, { discovery: { resourceMetadataOrigins: [servers.urls.attacker] } })
      assert.isTrue(Exit.isSuccess(exit), String(exit))
      assert.strictEqual(servers.to("attacker", "/.well-known/oauth-protected-resource").length, 1)
    }).pipe(Effect.scoped)
  )

  const refusals: ReadonlyArray<{
    readonly name: string
    readonly setup: Setup
    readonly rule: string
    readonly resolve?: boolean
    /** The attacker's listener gets no request at all. */
    readonly untouched?: boolean
  }> = [
    {
      name: "(b) metadata from the authorization server's origin giving another issuer",
      setup: { metadata: ({ server, attacker }) => ({ ...honestMetadata(server), issuer: attacker }) },
      rule: "RFC 8414"
    },
    {
      name: "(d) an iss of another issuer, the metadata saying iss is sent",
      setup: {
        metadata: ({ server }) => ({ ...honestMetadata(server), authorization_response_iss_parameter_supported: true }),
        iss: ({ attacker }) => attacker
      },
      rule: "RFC 9207"
    },
    {
      name: "(d) no iss, the metadata saying iss is sent",
      setup: {
        metadata: ({ server }) => ({ ...honestMetadata(server), authorization_response_iss_parameter_supported: true })
      },
      rule: "RFC 9207"
    },
    {
      name: "(e) a plain-http authorization server that is not on loopback",
      setup: {
        resourceMetadata: ({ mcp, attacker }) => ({
          resource: mcp,
          authorization_servers: [attacker.replace("127.0.0.1", "as.example.test")]
        }),
        metadata: ({ attacker }) => honestMetadata(attacker.replace("127.0.0.1", "as.example.test"))
      },
      rule: "neither https nor on a loopback address",
      resolve: true
    },
    {
      name: "a protected resource document naming another server's resource and its authorization server",
      setup: {
        resourceMetadata: ({ attacker }) => ({ resource: `${attacker}/mcp`, authorization_servers: [attacker] })
      },
      rule: "RFC 9728",
      untouched: true
    },
    {
      name: "a protected resource document naming a sibling path on the server's origin",
      setup: {
        resourceMetadata: ({ server }) => ({ resource: `${server}/mcp-admin`, authorization_servers: [server] })
      },
      rule: "RFC 9728"
    },
    {
      name: "an endpoint over plain http on a remote host",
      setup: {
        metadata: ({ server }) => ({ ...honestMetadata(server), token_endpoint: "http://tokens.example.test/token" })
      },
      rule: "neither https nor on a loopback address"
    }
  ]

  for (const { name, setup, rule, resolve, untouched } of refusals) {
    it.live(`${name}: EXECUTION naming the server and the rule; no token is asked for`, () =>
      Effect.gen(function* () {
        if (resolve === true) yield* resolvingExampleTest
        const servers = yield* start(setup)
        const error = failure(yield* call(servers))
        assert.strictEqual(error._tag, "ExecutionFailure", error.message)
        assert.include(error.message, servers.urls.mcp)
        assert.include(error.message, rule)
        assert.deepStrictEqual(servers.to("server", "/token"), [])
        assert.deepStrictEqual(servers.to("attacker", "/token"), [])
        assert.deepStrictEqual(servers.to("attacker", "/register"), [])
        if (name.startsWith("(b)") || name.startsWith("(e)")) {
          assert.deepStrictEqual(servers.to("server", "/register"), [], "refused before any registration")
        }
        if (resolve === true) assert.deepStrictEqual(servers.to("attacker", "/"), [], "nothing over plain http")
        if (untouched === true) assert.deepStrictEqual(servers.to("attacker", "/"), [], "its server is not contacted")
      }).pipe(Effect.scoped)
    )
  }

  it.live("(c) a mix-up: the attacker's metadata sends the code to its own token endpoint; no code reaches it", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        resourceMetadata: ({ mcp, attacker }) => ({ resource: mcp, authorization_servers: [attacker] }),
        metadata: ({ server, attacker }, listener) =>
          listener === "attacker"
            ? { ...honestMetadata(attacker), authorization_endpoint: `${server}/authorize` }
            : honestMetadata(server)
      })
      const error = failure(yield* call(servers))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.include(error.message, "authorization_endpoint")
      assert.include(error.message, "another origin")
      assert.deepStrictEqual(codeBearing(servers), [], "no code and no verifier at the attacker")
      assert.deepStrictEqual(servers.to("server", "/authorize"), [], "no browser step either")
    }).pipe(Effect.scoped)
  )

  it.live("endpoints on another origin are used when that origin is allowed by option", () =>
    Effect.gen(function* () {
      const servers = yield* start({
        metadata: ({ server, attacker }, listener) =>
          listener === "server" ? { ...honestMetadata(server), registration_endpoint: `${attacker}/register` } : {}
      })
      const exit = yield* call(servers, { discovery: { endpointOrigins: [servers.urls.attacker] } })
      assert.isTrue(Exit.isSuccess(exit), String(exit))
      assert.strictEqual(servers.to("attacker", "/register").length, 1)
    }).pipe(Effect.scoped)
  )
})
