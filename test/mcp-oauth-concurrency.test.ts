/**
 * OAuth when calls overlap, pause and cross processes, against a real authorization server and MCP server on
 * 127.0.0.1 (examples/mcp-oauth/servers.ts: refresh tokens rotate, and a reused one revokes its family):
 *
 * - parallel calls after the access token expired wait for one refresh and are sent again with its token (C82), and
 *   a property over N parallel calls × the moment of expiry;
 * - a refusal of a fresh token is EXECUTION naming the server and the status, and starts no loop;
 * - a refresh that cannot reach the authorization server is TRANSIENT, never a new browser step;
 * - two overlapping authorization attempts on one token store each exchange their code with their own verifier (C83);
 * - two processes on one Postgres token store, four calls each after every expiry: 8 of 8, one refresh per expiry.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type McpClient, Role } from "@rolecraft/core"
import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { Deferred, Effect, Exit, Layer, Redacted } from "effect"
import * as fc from "fast-check"
import { type OAuthServers, startOAuthServers } from "../examples/mcp-oauth/servers.ts"
import { point } from "./support/schedule.ts"
import { check, runs } from "./support/seeded.ts"
import { freshDatabase } from "./setup/postgresUrl.ts"

const root = fileURLToPath(new URL("..", import.meta.url))

const servers = Effect.acquireRelease(
  Effect.promise(() => startOAuthServers()),
  (started) => Effect.promise(() => started.close())
)

const agentFor = (server: OAuthServers, id = "oauth-agent") =>
  Agent.make({
    id,
    roles: [
      Role.make({
        identity: { name: "notes", goal: "Find notes", domain: "notes" },
        actions: { notes: Action.mcpTool({ description: "notes", server: server.mcpUrl }) }
      })
    ]
  })

type TestAgent = Effect.Success<ReturnType<typeof agentFor>>

const search = (agent: TestAgent, query: string) =>
  agent.executeAction("notes", { tool: "search_notes", arguments: { query } })

const oauthClient = (
  store: Layer.Layer<McpTokenStore.McpTokenStore, unknown>,
  authorization: Layer.Layer<McpOAuth.Authorization> = McpOAuth.layerFollowRedirects
) =>
  McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback" }).pipe(Layer.provide([store, authorization]))

const parallel = (agent: TestAgent, n: number, label: string) =>
  Effect.all(
    Array.from({ length: n }, (_, i) => Effect.exit(search(agent, `${label}-${i}`))),
    { concurrency: "unbounded" }
  )

describe("OAuth with calls at once", () => {
  it.live("four parallel calls after expiry: all succeed with one refresh, no browser step, no family revoked", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const agent = yield* agentFor(server)
      assert.include(yield* search(agent, "first"), 'match "first"')
      server.expireTokens()
      const exits = yield* parallel(agent, 4, "after")
      assert.deepStrictEqual(
        exits.map((exit) => (Exit.isSuccess(exit) ? "ok" : String(exit.cause))),
        ["ok", "ok", "ok", "ok"]
      )
      assert.deepStrictEqual([server.refreshes(), server.authorizations(), server.revocations()], [1, 1, 0])
    }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
  )

  it.live("the stored refresh token is the authorization server's current one after parallel refreshes", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const shared = yield* Layer.build(McpTokenStore.layerMemory)
      const store = Layer.succeedContext(shared)
      yield* Effect.gen(function* () {
        const agent = yield* agentFor(server)
        yield* search(agent, "first")
        for (let round = 0; round < 3; round++) {
          server.expireTokens()
          const exits = yield* parallel(agent, 4, `round-${round}`)
          assert.isTrue(exits.every(Exit.isSuccess))
        }
      }).pipe(Effect.scoped, Effect.provide(oauthClient(store)))
      const entry = yield* Effect.flatMap(Effect.service(McpTokenStore.McpTokenStore), (s) =>
        s.get(server.mcpUrl)
      ).pipe(Effect.provide(shared))
      assert.strictEqual(entry.tokens?.refresh_token, server.currentRefreshToken())
      assert.deepStrictEqual([server.refreshes(), server.revocations()], [3, 0])
    }).pipe(Effect.scoped)
  )

  it.live("a property over N parallel calls × the moment of expiry: all succeed, at most one refresh", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const agent = yield* agentFor(server)
      yield* search(agent, "first")
      const context = yield* Effect.context<McpClient.McpClient>()
      yield* Effect.promise(() =>
        check(
          "OAuth N calls × expiry",
          fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 6 }), async (s, n) => {
            const before = { refreshes: server.refreshes(), authorizations: server.authorizations() }
            const calls = Array.from({ length: n }, (_, i) =>
              Effect.andThen(point(s, `call ${i}`), Effect.exit(search(agent, `p-${i}`)))
            )
            const expiry = Effect.andThen(point(s, "expire"), Effect.sync(server.expireTokens))
            const [exits] = await s.waitFor(
              Effect.runPromiseWith(context)(
                Effect.all([Effect.all(calls, { concurrency: "unbounded" }), expiry], { concurrency: "unbounded" })
              )
            )
            assert.isTrue(
              exits.every(Exit.isSuccess),
              exits.map((exit) => (Exit.isSuccess(exit) ? "ok" : String(exit.cause))).join("\n")
            )
            assert.isAtMost(server.refreshes() - before.refreshes, 1)
            assert.strictEqual(server.authorizations(), before.authorizations)
            // Every run ends with the tokens expired or fresh; the next starts from whichever.
          }),
          runs(8)
        )
      )
      assert.strictEqual(server.revocations(), 0)
    }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
  )

  it.live("a fresh token refused is EXECUTION naming the server and 401, once per call, with no loop", () =>
    Effect.gen(function* () {
      const server = yield* servers
      const agent = yield* agentFor(server)
      yield* search(agent, "first")
      server.refuseAll(true)
      const exits = yield* parallel(agent, 3, "refused")
      for (const exit of exits) {
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        const failure = error?._tag === "Fail" ? error.error : undefined
        assert.strictEqual(failure?._tag, "ExecutionFailure", String(error))
        assert.include(failure?.message, "401")
        assert.include(failure?.message, server.mcpUrl)
      }
      // One refresh for the three calls (the refused token was fresh after it): bounded, not a loop.
      assert.strictEqual(server.refreshes(), 1)
      assert.strictEqual(server.authorizations(), 1)
    }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
  )

  for (const mode of ["network", "503"] as const) {
    it.live(
      `a refresh that meets ${mode === "network" ? "a dropped connection" : "a 503"} is TRANSIENT; no browser step`,
      () =>
        Effect.gen(function* () {
          const server = yield* servers
          const agent = yield* agentFor(server)
          yield* search(agent, "first")
          server.expireTokens()
          server.breakTokenEndpoint(mode)
          const error = yield* Effect.flip(search(agent, "down"))
          assert.strictEqual("category" in error ? error.category : error._tag, "TRANSIENT", error.message)
          assert.include(error.message, "could not be reached to refresh")
          assert.strictEqual(server.authorizations(), 1, "no new authorization")
          server.breakTokenEndpoint(undefined)
          assert.include(yield* search(agent, "back"), 'match "back"')
          assert.deepStrictEqual([server.refreshes(), server.authorizations()], [1, 1])
        }).pipe(Effect.scoped, Effect.provide(oauthClient(McpTokenStore.layerMemory)))
    )
  }
})

describe("OAuth authorization attempts that overlap", () => {
  it.live(
    "two clients on one token store, attempt 1's callback after attempt 2 began: each uses its own verifier",
    () =>
      Effect.gen(function* () {
        const server = yield* servers
        const shared = Layer.succeedContext(yield* Layer.build(McpTokenStore.layerMemory))
        const second = yield* Deferred.make<void>()
        const follower = yield* Effect.provide(Effect.service(McpOAuth.Authorization), McpOAuth.layerFollowRedirects)
        const challenges: Array<string | null> = []
        // Attempt 1 waits in the browser until attempt 2 has been sent there; attempt 2 goes through at once.
        const authorization = (first: boolean) =>
          Layer.succeed(
            McpOAuth.Authorization,
            McpOAuth.Authorization.of({
              authorize: (request) =>
                Effect.gen(function* () {
                  challenges.push(request.url.searchParams.get("code_challenge"))
                  if (first) yield* Deferred.await(second)
                  else yield* Deferred.succeed(second, undefined)
                  return yield* follower.authorize(request)
                })
            })
          )
        const call = (first: boolean) =>
          Effect.gen(function* () {
            const agent = yield* agentFor(server, first ? "tab-1" : "tab-2")
            return yield* search(agent, first ? "one" : "two")
          }).pipe(Effect.scoped, Effect.provide(oauthClient(shared, authorization(first))))
        const [one, two] = yield* Effect.all([call(true), Effect.andThen(Effect.sleep("50 millis"), call(false))], {
          concurrency: "unbounded"
        })
        assert.include(one, 'match "one"')
        assert.include(two, 'match "two"')
        assert.strictEqual(server.authorizations(), 2)
        assert.strictEqual(new Set(challenges).size, 2, "two attempts, two challenges")
      }).pipe(Effect.scoped)
  )
})

/** One process of test/fixtures/oauth-calls.ts; `round()` lets it make its four calls. */
const start = (mcpUrl: string, database: string, name: string) =>
  new Promise<{
    readonly round: () => Promise<{ readonly ok: number; readonly failures: ReadonlyArray<string> }>
    readonly stop: () => void
  }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@rolecraft/source", join(root, "test/fixtures/oauth-calls.ts"), mcpUrl, database, name],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    const lines = createInterface({ input: child.stdout })
    const waiting: Array<(outcome: { readonly ok: number; readonly failures: ReadonlyArray<string> }) => void> = []
    lines.on("line", (line) => {
      if (line === "ready") {
        resolve({
          round: () =>
            new Promise((done) => {
              waiting.push(done)
              child.stdin.write("go\n")
            }),
          stop: () => child.stdin.end()
        })
        return
      }
      waiting.shift()?.(JSON.parse(line) as { readonly ok: number; readonly failures: ReadonlyArray<string> })
    })
    child.once("error", reject)
  })

describe("OAuth across processes", () => {
  it.live(
    "two processes on one Postgres token store, four calls each after every expiry: 8 of 8, one refresh per expiry",
    () =>
      Effect.gen(function* () {
        const server = yield* servers
        const url = yield* freshDatabase("mcp_oauth_cas")
        const store = McpTokenStore.layerSql.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))
        // The first authorization (the one browser step), from a third client on the same store.
        yield* Effect.gen(function* () {
          yield* search(yield* agentFor(server), "first")
        }).pipe(Effect.scoped, Effect.provide(oauthClient(store)))
        const [a, b] = yield* Effect.promise(() =>
          Promise.all([start(server.mcpUrl, url, "a"), start(server.mcpUrl, url, "b")])
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => [a.stop(), b.stop()]))
        const rounds = Number(process.env.PROCESS_ROUNDS ?? 3)
        const counts: Array<{ readonly ok: number; readonly refreshes: number }> = []
        for (let round = 0; round < rounds; round++) {
          const before = server.refreshes()
          server.expireTokens()
          const outcomes = yield* Effect.promise(() => Promise.all([a.round(), b.round()]))
          const ok = outcomes.reduce((sum, outcome) => sum + outcome.ok, 0)
          counts.push({ ok, refreshes: server.refreshes() - before })
          assert.strictEqual(ok, 8, outcomes.flatMap((outcome) => outcome.failures).join("\n"))
        }
        console.log(`OAuth across two processes: ${JSON.stringify(counts)}`)
        assert.isTrue(counts.every((count) => count.refreshes <= 1))
        assert.deepStrictEqual([server.authorizations(), server.revocations()], [1, 0])
      }).pipe(Effect.scoped),
    120_000
  )
})
