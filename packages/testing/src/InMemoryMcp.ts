/**
 * An in-memory MCP server for tests: the SDK's own server
 * (`McpServer` or the low-level `Server`) connected over the SDK's
 * `InMemoryTransport`, behind the same `McpClientSdk.make` the real layer
 * uses — so listing, paging, `list_changed`, cancellation, result reading and
 * the error mapping all run as they do against a real server.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { InMemoryMcp } from "@rolecraft/testing"
 * import { Effect } from "effect"
 * import { z } from "zod"
 *
 * const weatherServer = () => {
 *   const server = new McpServer({ name: "weather", version: "1.0.0" })
 *   server.registerTool("forecast", { inputSchema: { city: z.string() } }, ({ city }) => ({
 *     content: [{ type: "text", text: `sunny in ${city}` }]
 *   }))
 *   return server
 * }
 *
 * const Weather = Role.make({
 *   identity: { name: "weather", goal: "Report the weather", domain: "travel" },
 *   actions: { weather: Action.mcpTool({ description: "Weather tools", server: "memory://weather" }) }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "test", roles: [Weather] })
 *   return yield* agent.executeAction("weather", { tool: "forecast", arguments: { city: "Oslo" } }) // "sunny in Oslo"
 * }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://weather": weatherServer })))
 * ```
 *
 * @since 0.1.0
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Action } from "@rolecraft/core"
import * as McpClient from "@rolecraft/core/McpClient"
import * as McpClientSdk from "@rolecraft/mcp/McpClientSdk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"

/**
 * Makes a fresh server for each connection (so a reconnect meets a new one).
 * `credential` is the value the agent read from the action's `apiKeyEnv`,
 * for tests that check it arrived.
 *
 * @category models
 * @since 0.1.0
 */
export type ServerFactory = (connection: {
  readonly credential: Redacted.Redacted<string> | undefined
}) => McpServer | Server

/**
 * Which factory serves a server: a URL is looked up as is, a stdio server by
 * its `command`. E.g. `Action.mcpTool({ server: "memory://weather", … })`
 * with `{ "memory://weather": () => server }`.
 *
 * @category getters
 * @since 0.1.0
 */
export const nameOf = (server: Action.McpServer): string => (typeof server === "string" ? server : server.command)

/**
 * The `McpClient` service over in-memory servers. A server name with no
 * factory fails to connect (`McpClientError` reason `Connect`, so TRANSIENT
 * at the agent).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  servers: Readonly<Record<string, ServerFactory>>,
  options?: Omit<McpClientSdk.Options, "open">
): McpClient.McpClient["Service"] =>
  McpClientSdk.make({
    ...options,
    open: (server, connect) =>
      Effect.gen(function* () {
        const name = nameOf(server)
        const factory = Object.hasOwn(servers, name) ? servers[name] : undefined
        if (factory === undefined) {
          return yield* new McpClient.McpClientError({
            reason: "Connect",
            sent: false,
            message: `no in-memory MCP server named ${name} (known: ${Object.keys(servers).join(", ") || "none"})`
          })
        }
        const instance = factory({ credential: connect.credential?.value })
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () => instance.connect(serverSide),
            catch: (cause) =>
              new McpClient.McpClientError({
                reason: "Connect",
                sent: false,
                message: `the in-memory MCP server ${name} did not start: ${String(cause)}`,
                cause
              })
          }),
          () => Effect.ignore(Effect.tryPromise(() => instance.close()))
        )
        return { transport: clientSide, kind: "memory", diagnostics: () => ({}), received: () => undefined } as const
      })
  })

/**
 * The in-memory `McpClient` layer.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
 * import { InMemoryMcp } from "@rolecraft/testing"
 * import { z } from "zod/v4"
 *
 * const weather = () => {
 *   const server = new McpServer({ name: "weather", version: "1.0.0" })
 *   server.registerTool("forecast", { inputSchema: { city: z.string() } }, ({ city }) => ({
 *     content: [{ type: "text", text: `Sunny in ${city}` }]
 *   }))
 *   return server
 * }
 * const TestMcp = InMemoryMcp.layer({ "memory://weather": weather })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  servers: Readonly<Record<string, ServerFactory>>,
  options?: Omit<McpClientSdk.Options, "open">
): Layer.Layer<McpClient.McpClient> => Layer.succeed(McpClient.McpClient, make(servers, options))
