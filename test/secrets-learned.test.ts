/**
 * One secrets boundary that learns (cases C87, C88, C89), on what we did not write:
 *
 * - C87: an OAuth access token obtained during a call (the real MCP SDK client against a local authorization
 *   server, test/fixtures/oauth-discovery-server.ts) is quoted by the server's tool: it reaches no span, tool
 *   message, event or thread row (SQLite, read as bytes), on the first call as on later ones, direct or in a
 *   chat turn;
 * - C88: `Mcp.serve` under a `ConfigProvider` layer: a served call's log notifications, read by the SDK's own
 *   client, are redacted with that configuration's secrets, raw and base64;
 * - C89: a nested agent's credential, quoted by its model, reaches none of the outer turn's exits.
 */
import { readdirSync, readFileSync } from "node:fs"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Compose, Role, ThreadStore } from "@rolecraft/core"
import { Mcp, McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ScriptedModel } from "@rolecraft/testing"
import { Config, ConfigProvider, Effect, Layer, References } from "effect"
import { start } from "./fixtures/oauth-discovery-server.ts"
import * as Exits from "./support/exits.ts"

/** Every byte of a SQLite database (its file and its journal), as text. */
const databaseText = (folder: string): string =>
  readdirSync(folder)
    .map((name) => readFileSync(join(folder, name)).toString("latin1"))
    .join("\n")

describe("C87: an OAuth token learned during a call", () => {
  it.live("reaches no span, tool message, event or thread row, on the first call as on later ones", () =>
    Effect.gen(function* () {
      const servers = yield* start({})
      const folder = mkdtempSync(join(tmpdir(), "rolecraft-learned-"))
      const exits = Exits.make()
      const model = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "c1", name: "notes_whoami", arguments: {} }]),
        ScriptedModel.reply("You are you.")
      ])
      yield* Effect.gen(function* () {
        const agent = yield* Agent.make({
          id: "learner",
          roles: [Role.make({ identity: { name: "notes", goal: "Notes", domain: "notes" }, actions: {} })],
          mcpServers: { notes: servers.urls.mcp },
          traceContent: true
        })
        yield* exits.listen(agent.events)
        // The first call obtains the token (discovery, registration, PKCE) and its result quotes it.
        for (let i = 0; i < 2; i++) {
          // The caller gets the server's answer as it is: it is the caller's own value.
          yield* agent.executeAction("notes", { tool: "whoami", arguments: {} })
        }
        assert.strictEqual(servers.tokens.length, 1, "one authorization")
        const result = yield* agent.chat("Who am I?", { thread: "oauth" }).pipe(Effect.provide(model.layer))
        assert.strictEqual(result._tag, "Completed")
        if (result._tag === "Completed") exits.messages.push(Exits.toolMessages(result.messages))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      }).pipe(
        Effect.scoped,
        Effect.provide(exits.layer),
        Effect.provide(ThreadStore.layerSqlite({ filename: join(folder, "threads.db") })),
        Effect.provide(
          McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback" }).pipe(
            Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects])
          )
        )
      )
      const texts: Record<string, string> = { ...exits.texts(), "thread rows": databaseText(folder) }
      // The test can fail: the spans and the tool message did see the tool's answer.
      const whoami = exits.exporter.getFinishedSpans().filter((span) => span.name.startsWith("execute_tool"))
      assert.strictEqual(whoami.length, 3)
      for (const span of whoami) assert.include(String(span.attributes["gen_ai.tool.call.result"]), "[REDACTED]")
      assert.include(texts["tool messages"], "you sent the header: Bearer [REDACTED]")
      assert.include(texts["thread rows"], "[REDACTED]")
      assert.deepStrictEqual(Exits.leaks(texts, servers.tokens), [])
    }).pipe(Effect.scoped)
  )
})

const serveKey = "sk-SERVE-only/in+the=provider-7"

describe("C88: a served call's log notifications", () => {
  it.live("are redacted with the served configuration's secrets, raw and base64", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "ops", goal: "Operate", domain: "ops" },
        actions: {
          chatty: Action.local({
            description: "Logs its key, carelessly",
            parameters: {},
            run: () =>
              Effect.gen(function* () {
                const key = yield* Config.String("SERVE_KEY")
                const encoded = Buffer.from(key).toString("base64")
                yield* Effect.logDebug(`debugging with ${key}`)
                yield* Effect.logInfo(`encoded ${encoded}`)
                return "done"
              }).pipe(Effect.orDie)
          }),
          // The key is a credential of the agent: a service it calls with it.
          status: Action.webService({
            description: "Status",
            parameters: {},
            endpoint: "http://127.0.0.1:9/status",
            auth: "BEARER",
            authTokenEnv: "SERVE_KEY"
          })
        }
      })
      const messages = yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "ops", roles: [role] })
        const served = yield* Mcp.serve(agent, { transport: { http: { port: 0 } } })
        const client = new Client({ name: "log-reader", version: "1.0.0" })
        const seen: Array<string> = []
        client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
          seen.push(JSON.stringify(notification.params))
        })
        yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(served.url ?? ""))))
        yield* Effect.promise(() => client.setLoggingLevel("debug"))
        const result = yield* Effect.promise(() => client.callTool({ name: "chatty", arguments: {} }))
        assert.isUndefined(result.isError)
        yield* Effect.promise(() => client.close())
        return seen
      }).pipe(
        Effect.scoped,
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { SERVE_KEY: serveKey } })),
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provideService(References.MinimumLogLevel, "Debug")
      )
      assert.isAtLeast(messages.length, 2, "both lines were sent")
      assert.isTrue(messages.some((message) => message.includes("debugging with [REDACTED]")))
      assert.isTrue(messages.some((message) => message.includes("encoded [REDACTED]")))
      assert.deepStrictEqual(Exits.leaks({ notifications: messages.join("\n") }, [serveKey]), [])
    })
  )
})

const innerKey = "sk-INNER-account/key+of=booker-3"
const outerKey = "sk-OUTER-research/key+42"

describe("C89: a nested agent's credential, quoted by its model", () => {
  it.live("reaches no outer tool message, event, span, thread row or result", () =>
    Effect.gen(function* () {
      const folder = mkdtempSync(join(tmpdir(), "rolecraft-nested-"))
      const exits = Exits.make()
      const service = (env: string) =>
        Action.webService({
          description: "Echo the key",
          parameters: {},
          endpoint: "http://127.0.0.1:9/echo",
          auth: "BEARER",
          authTokenEnv: env
        })
      const model = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "c1", name: "reserve", arguments: { input: "look up my account" } }]),
        // The inner model quotes its agent's credential without calling anything.
        ScriptedModel.reply(`the account key is ${innerKey}`),
        ScriptedModel.reply("Done.")
      ])
      const result = yield* Effect.gen(function* () {
        const booker = yield* Agent.make({
          id: "booker",
          roles: [
            Role.make({
              identity: { name: "booker", goal: "Book", domain: "travel" },
              actions: { echoKey: service("INNER_KEY") }
            })
          ],
          traceContent: true
        })
        const research = yield* Agent.make({
          id: "research",
          roles: [
            Role.make({
              identity: { name: "research", goal: "Research", domain: "travel" },
              actions: {
                lookup: service("OUTER_KEY"),
                reserve: Compose.agent(booker, { description: "Ask the booking desk" })
              }
            })
          ],
          traceContent: true
        })
        yield* exits.listen(research.events)
        const result = yield* research.chat("look up my account", { thread: "t-secrets" })
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        return result
      }).pipe(
        Effect.scoped,
        Effect.provide(model.layer),
        Effect.provide(exits.layer),
        Effect.provide(ThreadStore.layerSqlite({ filename: join(folder, "threads.db") })),
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { INNER_KEY: innerKey, OUTER_KEY: outerKey } })
        )
      )
      assert.strictEqual(result._tag, "Completed")
      if (result._tag === "Completed") exits.messages.push(Exits.toolMessages(result.messages))
      const texts: Record<string, string> = {
        ...exits.texts(),
        "thread rows": databaseText(folder),
        result: Exits.show(result)
      }
      assert.include(texts["tool messages"], "the account key is [REDACTED]")
      assert.deepStrictEqual(Exits.leaks(texts, [innerKey, outerKey]), [])
    })
  )
})
