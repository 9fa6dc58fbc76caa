/**
 * Secrets as one boundary, on what we did not write: a real HTTP service that echoes the bearer token it
 * was sent, and the real openai SDK against a local endpoint that echoes its `Authorization` header. Every
 * string that leaves the agent — errors, `agent.events`, spans exported through @effect/opentelemetry
 * (attributes, status, exception events), log lines, metric labels and the tool messages a model is sent —
 * holds no secret the agent knows, in any encoded form, with content tracing on and off.
 *
 * C49: a webService's token echoed into `gen_ai.tool.call.result` and the tool message. C50: the model
 * provider's key quoted by an llm action's result mapper, fallback or before hook. C51: a model reply that
 * echoes the key, quoted by a decode error (also cut through by the 200-character preview) or a refusal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server, ScriptedModel } from "@rolecraft/testing"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ConfigProvider, Effect, Redacted, Schema } from "effect"
import * as LocalServer from "../packages/core/test/support/LocalServer.ts"
import * as Exits from "./support/exits.ts"

const token = "wx-T0ken/echoed+by=the-service"
const key = "sk-proj-Key/of+the=provider-42"

describe("C49: a service's echo of its bearer token", () => {
  for (const traceContent of [true, false]) {
    it.live(`reaches no span attribute, tool message, event or error (traceContent ${traceContent})`, () =>
      Effect.gen(function* () {
        const server = yield* LocalServer.start((request, response) =>
          LocalServer.reply(
            response,
            request.path === "/fail" ? 400 : 200,
            { "content-type": "application/json" },
            JSON.stringify({ echoed: request.headers.authorization ?? "" })
          )
        )
        const weather = (path: string) =>
          Action.webService({
            description: `echo ${path}`,
            parameters: { city: Schema.String },
            endpoint: `${server.url}${path}`,
            auth: "BEARER",
            authTokenEnv: "WEATHER_API_KEY"
          })
        const role = Role.make({
          identity: { name: "client", goal: "call services", domain: "http" },
          actions: { echo: weather("/echo"), fail: weather("/fail") }
        })
        const exits = Exits.make()
        const model = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([
            { id: "c1", name: "echo", arguments: { city: "Lisbon" } },
            { id: "c2", name: "fail", arguments: { city: "Porto" } }
          ]),
          ScriptedModel.reply("Done.")
        ])
        yield* Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "c49", roles: [role], traceContent })
          yield* exits.listen(agent.events)
          const direct = yield* agent.executeAction("echo", { city: "Vienna" })
          // The caller gets the service's answer as it is: it is the caller's own value.
          assert.deepStrictEqual(direct, { echoed: `Bearer ${token}` })
          exits.errors.push(yield* Effect.flip(agent.executeAction("fail", { city: "Graz" })))
          const result = yield* Effect.provide(agent.chat("Weather?"), model.layer)
          assert.strictEqual(result._tag, "Completed")
          if (result._tag === "Completed") exits.messages.push(Exits.toolMessages(result.messages))
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        }).pipe(
          Effect.scoped,
          Effect.provide(NodeHttpClient.layerUndici),
          Effect.provide(exits.layer),
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnv({ env: { WEATHER_API_KEY: token } })
          )
        )
        // The service saw the token and echoed it: the test can fail.
        assert.isTrue(server.received.every((request) => request.headers.authorization === `Bearer ${token}`))
        const spans = exits.exporter.getFinishedSpans()
        const echoSpans = spans.filter((span) => span.name === "execute_tool echo")
        assert.strictEqual(echoSpans.length, 2)
        if (traceContent) {
          assert.deepStrictEqual(
            echoSpans.map((span) => span.attributes["gen_ai.tool.call.result"]),
            ['{"echoed":"Bearer [REDACTED]"}', '{"echoed":"Bearer [REDACTED]"}']
          )
        }
        assert.include(exits.texts()["tool messages"], '{"echoed":"Bearer [REDACTED]"}')
        assert.deepStrictEqual(Exits.leaks(exits.texts(), [token]), [])
      })
    )
  }
})

describe("Mcp.serve: a served tool's result that echoes its token", () => {
  it.live("reaches the MCP client redacted, in its text and its structuredContent", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((request, response) =>
        LocalServer.reply(
          response,
          200,
          { "content-type": "application/json" },
          JSON.stringify({ echoed: request.headers.authorization ?? "" })
        )
      )
      const role = Role.make({
        identity: { name: "client", goal: "call services", domain: "http" },
        actions: {
          echo: Action.webService({
            description: "echo",
            parameters: { city: Schema.String },
            endpoint: `${server.url}/echo`,
            auth: "BEARER",
            authTokenEnv: "WEATHER_API_KEY"
          })
        }
      })
      const result = yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "served", roles: [role] })
        const served = yield* Mcp.serve(agent, { transport: { http: { port: 0 } } })
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new Client({ name: "secrets-test", version: "1.0.0" })
            await client.connect(new StreamableHTTPClientTransport(new URL(served.url ?? "")))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        return yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { city: "Lisbon" } }))
      }).pipe(
        Effect.scoped,
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { WEATHER_API_KEY: token } })
        )
      )
      assert.isTrue(server.received.every((request) => request.headers.authorization === `Bearer ${token}`))
      assert.deepStrictEqual(result.content, [{ type: "text", text: '{"echoed":"Bearer [REDACTED]"}' }])
      assert.deepStrictEqual(result.structuredContent, { echoed: "Bearer [REDACTED]" })
    })
  )
})

const Trip = Schema.Struct({ city: Schema.String, nights: Schema.Int })

/** The real openai SDK against a local endpoint, with `key` as its API key. */
const withOpenAi = <A, E>(script: ReadonlyArray<Server.Step>, body: Effect.Effect<A, E, any>) =>
  Effect.gen(function* () {
    const server = yield* Server.make(script)
    const exit = yield* Effect.exit(
      Effect.provide(
        body,
        OpenAiLanguageModel.layer({ model: "gpt-test", apiKey: Redacted.make(key), baseURL: server.baseURL })
      )
    )
    return { exit, requests: yield* server.requests }
  })

describe("C50: the provider's key quoted by an llm action's own code", () => {
  for (const traceContent of [true, false]) {
    it.live(`a mapper, fallback or before hook quoting it leaks it nowhere (traceContent ${traceContent})`, () =>
      Effect.gen(function* () {
        const plan = (description: string) => Action.llm({ description, parameters: { city: Schema.String } })
        const role = Role.make({
          identity: { name: "planner", goal: "plan", domain: "travel" },
          actions: {
            mapped: plan("mapped").pipe(
              Action.mapResult(() => {
                throw new Error(`cannot map with OPENAI_API_KEY=${key}`)
              })
            ),
            fallen: plan("fallen").pipe(Action.fallback(() => Effect.die(`fallback saw ${key}`))),
            thrown: plan("thrown").pipe(
              Action.fallback(() => {
                throw new Error(`fallback threw Bearer ${key}`)
              })
            ),
            hooked: plan("hooked")
          },
          hooks: {
            before: (action, args) => {
              if (action === "hooked") throw new Error(`before hook: key ${key}`)
              return args
            }
          }
        })
        const exits = Exits.make()
        const { requests } = yield* withOpenAi(
          [Server.reply("Lisbon"), Server.error(400, { message: "bad request" }), Server.error(400)],
          Effect.gen(function* () {
            const agent = yield* Agent.make({ id: "c50", roles: [role], traceContent })
            yield* exits.listen(agent.events)
            for (const name of ["mapped", "fallen", "thrown", "hooked"] as const) {
              exits.errors.push(yield* Effect.flip(agent.executeAction(name, { city: "Lisbon" })))
            }
            const response = yield* agent.execute({ action: "hooked", params: { city: "Porto" } })
            assert.isFalse(response.success)
            exits.errors.push(response.error)
            for (let i = 0; i < 10; i++) yield* Effect.yieldNow
          }).pipe(Effect.scoped, Effect.provide(exits.layer))
        )
        // The key was sent (so quoting it is possible) and each action failed.
        assert.isTrue(requests.every((request) => request.headers.authorization === `Bearer ${key}`))
        assert.strictEqual(exits.errors.length, 5)
        assert.deepStrictEqual(
          exits.errors.map((error) => (error as { readonly message: string }).message.includes("[REDACTED]")),
          [true, true, true, true, true]
        )
        const failed = exits.exporter.getFinishedSpans().filter((span) => span.name.startsWith("execute_tool"))
        assert.strictEqual(failed.length, 5)
        assert.deepStrictEqual(Exits.leaks(exits.texts(), [key]), [])
      })
    )
  }
})

describe("C51: a model reply that echoes the key, quoted in an error", () => {
  const echo = (make: (authorization: string) => Server.Step) =>
    Server.respond((request) => make(request.headers.authorization ?? ""))
  const city = (prefix: string) => (authorization: string) =>
    Server.reply(JSON.stringify({ city: `${prefix}${authorization}`, nights: "n/a" }))

  it.live("a decode error's preview (whole, or cut through the key) and a refusal hold no key", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "planner", goal: "plan", domain: "travel" },
        actions: {
          trip: Action.llm({ description: "Plan a trip", parameters: { city: Schema.String }, success: Trip }),
          note: Action.llm({ description: "Write a note", parameters: { city: Schema.String } })
        }
      })
      const exits = Exits.make()
      // 170 characters first: the 200-character preview cuts through the key, 13 characters into it.
      const long = "x".repeat(170)
      const { requests } = yield* withOpenAi(
        [
          echo(city("")),
          echo(city(long)),
          echo((authorization) => Server.reply(null, { refusal: `refused for ${authorization}` })),
          echo(city("")),
          echo(city(long))
        ],
        Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "c51", roles: [role], traceContent: true })
          yield* exits.listen(agent.events)
          exits.errors.push(yield* Effect.flip(agent.executeAction("trip", { city: "Lisbon" })))
          exits.errors.push(yield* Effect.flip(agent.executeAction("trip", { city: "Porto" })))
          exits.errors.push(yield* Effect.flip(agent.executeAction("note", { city: "Faro" })))
          exits.errors.push(yield* Effect.flip(agent.chat("Plan Lisbon", { output: Trip })))
          exits.errors.push(yield* Effect.flip(agent.chat("Plan Porto", { output: Trip })))
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        }).pipe(Effect.scoped, Effect.provide(exits.layer))
      )
      assert.strictEqual(requests.length, 5)
      assert.deepStrictEqual(
        exits.errors.map((error) => (error as { readonly category: string }).category),
        ["VALIDATION", "VALIDATION", "EXECUTION", "VALIDATION", "VALIDATION"]
      )
      // The preview still shows the reply around the key.
      assert.include((exits.errors[0] as { readonly message: string }).message, "Bearer [REDACTED]")
      assert.include((exits.errors[2] as { readonly message: string }).message, "refused for Bearer [REDACTED]")
      assert.deepStrictEqual(Exits.leaks(exits.texts(), [key]), [])
      // Nor does the start of the key a cut left behind.
      assert.notInclude(Object.values(exits.texts()).join("\n"), key.slice(0, 8))
    })
  )
})

describe("a stdio MCP server's environment", () => {
  it.effect("its credential variables are secrets of the agent; its other variables are not", () =>
    Effect.gen(function* () {
      const credential = "ghp_Stdio/Token+in=env-0001"
      const note = "a note that is no secret"
      const role = Role.make({
        identity: { name: "client", goal: "call services", domain: "mcp" },
        actions: {
          lookup: Action.local({
            description: "look up",
            parameters: {},
            run: () => {
              throw new Error(`saw ${credential} and ${note}`)
            }
          })
        }
      })
      const agent = yield* Agent.make({
        id: "stdio-env",
        roles: [role],
        mcpServers: { github: { command: "github-mcp-server", env: { GITHUB_TOKEN: credential, NOTES: note } } }
      })
      const error = yield* Effect.flip(agent.executeAction("lookup", {}))
      assert.include(error.message, `saw [REDACTED] and ${note}`)
      assert.deepStrictEqual(Exits.leaks({ error: Exits.show(error) }, [credential]), [])
      assert.strictEqual(yield* agent.redact(`token ${credential}`), "token [REDACTED]")
    }).pipe(Effect.scoped)
  )
})
