/**
 * C43 (issue 12): redaction covers everything that runs for a call. A failing
 * mcpTool result mapper (credential from `apiKeyEnv`), a failing fallback and
 * the role's hooks may quote the call's secret; no error, event or span (step
 * spans included) may show it, and an excerpt cut through a secret shows none
 * of it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { inspect } from "node:util"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, ActionError, Agent, type Events, Role } from "@rolecraft/core"
import { InMemoryMcp, Telemetry } from "@rolecraft/testing"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Schema, Stream } from "effect"

const key = "mcp-K3y/secret+value=="
const token = "web-T0ken/secret+value=="
const forms = [key, token].flatMap((secret) => [
  secret,
  encodeURIComponent(secret),
  Buffer.from(secret).toString("base64"),
  // what a cut excerpt would leave of it
  secret.slice(0, 12)
])

const echoing = () => {
  const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "echo", inputSchema: { type: "object" as const } }]
  }))
  // The server echoes the credential it was given in its answer.
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text" as const, text: `key=${key}` }] }))
  return server
}

const quoting = (where: string, value: string) =>
  new ActionError.ExecutionFailure({
    action: where,
    message: `${where} failed: ${value}`,
    // an excerpt cut through the secret, as a careless mapper would
    excerpt: `got ${value}`.slice(0, 4 + 12)
  })

const safely = (f: () => string): string => {
  try {
    return f()
  } catch (error) {
    return `<unserialisable: ${String(error)}>`
  }
}

const showError = (error: unknown): string =>
  [
    String(error),
    safely(() => JSON.stringify(error)),
    safely(() => inspect(error, { depth: 8 })),
    error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : ""
  ].join("\n")

describe("redaction of a whole call", () => {
  it.live("a mapper, fallback or hook that quotes the secret leaks it nowhere", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "client", goal: "call services", domain: "tests" },
        actions: {
          mcpMapped: Action.mcpTool({ description: "m", server: "memory://echo", apiKeyEnv: "MCP_KEY" }).pipe(
            Action.mapResult((result) => {
              throw new Error(`cannot use ${String(result.value)}`)
            })
          ),
          mcpMappedFails: Action.mcpTool({ description: "m", server: "memory://echo", apiKeyEnv: "MCP_KEY" }).pipe(
            Action.mapResult(() => Effect.fail(quoting("mapResult", key)))
          ),
          webFallback: Action.webService({
            description: "w",
            parameters: {},
            endpoint: "http://127.0.0.1:9/nowhere",
            auth: "BEARER",
            authTokenEnv: "WEB_TOKEN"
          }).pipe(Action.fallback(() => Effect.fail(quoting("fallback", token)))),
          webFallbackThrows: Action.webService({
            description: "w",
            parameters: {},
            endpoint: "http://127.0.0.1:9/nowhere",
            auth: "BEARER",
            authTokenEnv: "WEB_TOKEN"
          }).pipe(
            Action.fallback(() => {
              throw new Error(`fallback saw Bearer ${token}`)
            })
          )
        },
        hooks: {
          before: (action, args) => {
            if (action === "hooked") throw new Error(`before hook: ${key}`)
            return args
          }
        }
      })
      const hookRole = Role.make({
        identity: { name: "hooked", goal: "hooks", domain: "tests" },
        actions: {
          hooked: Action.mcpTool({ description: "h", server: "memory://echo", apiKeyEnv: "MCP_KEY" }),
          hookedAfter: Action.webService({
            description: "w",
            parameters: { note: Schema.optional(Schema.String) },
            endpoint: "http://127.0.0.1:9/nowhere",
            auth: "BEARER",
            authTokenEnv: "WEB_TOKEN"
          }).pipe(Action.fallback(() => "fine"))
        },
        hooks: {
          before: (action, args) => {
            if (action === "hooked") return Effect.fail(quoting("before", key))
            return args
          },
          after: () => {
            throw new Error(`after hook: ${token}`)
          }
        }
      })

      const recorder = Telemetry.make()
      const errors: Array<unknown> = []
      const events: Array<Events.Event> = []
      yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "call-redaction", roles: [role, hookRole], traceSteps: true })
        yield* Effect.forkScoped(Stream.runForEach(agent.events, (event) => Effect.sync(() => events.push(event))))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        for (const name of ["mcpMapped", "mcpMappedFails", "hooked"] as const) {
          errors.push(yield* Effect.flip(agent.executeAction(name, { tool: "echo" })))
        }
        for (const name of ["webFallback", "webFallbackThrows", "hookedAfter"] as const) {
          errors.push(yield* Effect.flip(agent.executeAction(name, {})))
        }
        const response = yield* agent.execute({ action: "mcpMappedFails", params: { tool: "echo" } })
        if (!response.success) errors.push(response.error)
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      }).pipe(
        Effect.scoped,
        Effect.provide(InMemoryMcp.layer({ "memory://echo": echoing })),
        // Nothing listens on port 9: each webService call fails to connect, and its fallback runs.
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provide(recorder.layer),
        Effect.withTracer(recorder.tracer),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { MCP_KEY: key, WEB_TOKEN: token } })
        )
      )

      assert.strictEqual(errors.length, 7)
      for (const error of errors) {
        assert.include((error as ActionError.ActionError).message, "[REDACTED]", showError(error))
      }
      assert.strictEqual(events.length, 14)
      const sources = [
        { name: "errors", text: errors.map(showError).join("\n") },
        {
          name: "events",
          text: events.map((event) => safely(() => JSON.stringify(event)) + inspect(event)).join("\n")
        },
        {
          name: "spans",
          text: recorder.spans
            .map(
              (span) =>
                safely(() =>
                  JSON.stringify({ name: span.name, attributes: [...span.attributes.entries()], events: span.events })
                ) +
                (span.status._tag === "Ended" && span.status.exit._tag === "Failure"
                  ? inspect(span.status.exit.cause, { depth: 10 })
                  : "")
            )
            .join("\n")
        }
      ]
      for (const source of sources) {
        assert.isAbove(source.text.length, 0, source.name)
        for (const form of forms) assert.notInclude(source.text, form, `${source.name} leak ${form}`)
      }
    })
  )
})
