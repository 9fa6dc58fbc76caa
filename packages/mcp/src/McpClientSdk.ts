/**
 * The `McpClient` service over `@modelcontextprotocol/sdk`: stdio
 * servers spawned with the SDK's `StdioClientTransport`, streamable HTTP
 * servers with its `StreamableHTTPClientTransport`, one SDK `Client` per
 * connection. `make` also takes any other transport (the in-memory test layer
 * of `@rolecraft/testing` uses it with the SDK's `InMemoryTransport`).
 *
 * What it adds to the SDK:
 * - `tools/list` follows every page, is cached per connection and refetched
 *   after `notifications/tools/list_changed`; a listed tool that is not a
 *   usable definition is left out with a warning, the others are kept;
 * - results are read loosely: a content block of an unknown type is kept
 *   (the SDK's own schema would reject the whole result);
 *   `structuredContent` is not validated here (the agent checks it against
 *   the tool's `outputSchema` and falls back to the content when it fails);
 * - every failure becomes an `McpClientError` with its reason; a stdio
 *   server's exit code or signal and the last ~2 KB of its stderr go into
 *   `Closed` failures;
 * - a stdio server's non-JSON lines on stdout (banners) are logged
 *   with the server's name and skipped; the frames around them still work;
 * - over HTTP, a 404 to a request that carried a session id is
 *   `SessionExpired` (the agent re-initialises and retries once);
 *   a 2xx whose payload is not a JSON-RPC response fails the pending calls at
 *   once with `Protocol` and a snippet of the payload, instead of
 *   leaving them to time out.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { McpClientSdk } from "@rolecraft/mcp"
 * import { Effect } from "effect"
 *
 * const Everything = Role.make({
 *   identity: { name: "demo", goal: "Try the reference server", domain: "demo" },
 *   actions: {
 *     everything: Action.mcpTool({
 *       description: "The MCP reference server",
 *       server: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
 *       tools: ["echo"]
 *     })
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "demo", roles: [Everything] })
 *   return yield* agent.executeAction("everything", { tool: "echo", arguments: { message: "hi" } }) // "Echo: hi"
 * }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer({ connectTimeout: "30 seconds" })))
 * ```
 *
 * @since 0.1.0
 */
import * as Core from "@rolecraft/core/McpClient"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Connection from "./internal/connection.ts"
import { toMillis } from "./internal/request.ts"
import * as McpTransport from "./McpTransport.ts"

/**
 * Options of {@link make} and {@link layer}.
 *
 * - `clientInfo`: the name and version sent at `initialize` (default
 *   `{ name: "rolecraft", version: "0.2.0" }`).
 * - `connectTimeout`: bounds spawning and `initialize` (default 30 seconds).
 * - `listTimeout`: bounds each `tools/list` page (default 30 seconds).
 * - `maxListPages`: the most `tools/list` pages one listing reads (default
 *   100; a fraction is rounded down, less than 1 is 1); past it the listing keeps the tools found so
 *   far and says so (reason `PageLimit`, see `McpClient.ListingStopped`).
 *   A listing also ends early, keeping what it found, on a cursor seen
 *   before, a page with no new tool name, or a cursor that is not a string;
 *   a `nextCursor` that is `""` or `null` is the end, like none.
 * - `open`: how a server is reached (default `McpTransport.openDefault`:
 *   stdio for a command, streamable HTTP for a URL).
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  readonly connectTimeout?: Duration.Input | undefined
  readonly listTimeout?: Duration.Input | undefined
  readonly maxListPages?: number | undefined
  readonly open?: McpTransport.Open | undefined
}

/** The default of `maxListPages`. */
const defaultMaxListPages = 100

// As the timeouts are clamped: a fraction is rounded down, less than 1 is 1, a non-finite value the default.
const pageLimit = (value: number | undefined): number =>
  value === undefined || !Number.isFinite(value) ? defaultMaxListPages : Math.max(1, Math.floor(value))

/**
 * Makes the service. Each `connect` creates one SDK `Client`, connects it
 * over the transport `open` gives (bounded by `connectTimeout`), and closes
 * it — stopping a stdio server — when the scope closes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options?: Options): Core.McpClient["Service"] => {
  const settings: Connection.Settings = {
    clientInfo: options?.clientInfo ?? { name: "rolecraft", version: "0.2.0" },
    connectTimeoutMs: toMillis(options?.connectTimeout, 30_000),
    listTimeoutMs: toMillis(options?.listTimeout, 30_000),
    maxListPages: pageLimit(options?.maxListPages),
    open: options?.open ?? McpTransport.openDefault
  }
  return Core.McpClient.of({
    connect: (server, connectOptions) => Connection.connect(settings, server, connectOptions)
  })
}

/**
 * The `McpClient` layer over the MCP SDK. See {@link Options} for defaults.
 *
 * An agent keeps one connection per server for each `McpClient` it is given,
 * so build this layer once and provide it around the agent's calls (as
 * below); a layer built anew for every call opens a new connection (a new
 * child process for a stdio server) each time, which lives until the agent's
 * scope closes.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { McpClientSdk } from "@rolecraft/mcp"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "fx", roles: [], mcpServers: { everything: { command: "node", args: ["server.js"] } } })
 *   return yield* agent.executeAction("everything", { tool: "echo", arguments: { message: "hi" } })
 * }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<Core.McpClient> => Layer.succeed(Core.McpClient, make(options))
