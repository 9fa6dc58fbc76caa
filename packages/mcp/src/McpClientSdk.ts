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
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Connection from "./internal/connection.ts"
import * as OAuthFetch from "./internal/oauth/fetch.ts"
import type * as OAuthProvider from "./internal/oauth/provider.ts"
import { McpElicitation } from "./McpElicitation.ts"
import { McpSampling } from "./McpSampling.ts"
import type * as McpOAuth from "./McpOAuth.ts"
import { toMillis } from "./internal/request.ts"
import * as McpTransport from "./McpTransport.ts"

/**
 * Options of {@link make} and {@link layer}.
 *
 * - `clientInfo`: the name and version sent at `initialize` (default
 *   `{ name: "rolecraft", version: "0.2.0" }`).
 * - `connectTimeout`: bounds spawning and `initialize` (default 30 seconds).
 *   A connection that fails names what it was doing, the server's command or
 *   URL, and this setting when it is the time that ran out; a stdio server
 *   that did not start is ended with every process it started.
 * - `listTimeout`: bounds each `tools/list` page (default 30 seconds).
 * - `maxListPages`: the most `tools/list` pages one listing reads (default
 *   100; a fraction is rounded down, less than 1 is 1); past it the listing keeps the tools found so
 *   far and says so (reason `PageLimit`, see `McpClient.ListingStopped`).
 *   A listing also ends early, keeping what it found, on a cursor seen
 *   before, a page with no new tool name, or a cursor that is not a string;
 *   a `nextCursor` that is `""` or `null` is the end, like none.
 * - `open`: how a server is reached (default `McpTransport.openDefault`:
 *   stdio for a command, streamable HTTP for a URL).
 * - `roots`: the roots the client offers servers (`roots/list`: `file://`
 *   URIs of the folders the agent works in, with names). Default none (the
 *   client does not declare roots).
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
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string | undefined }> | undefined
}

/** The default of `maxListPages`. */
const defaultMaxListPages = 100

// As the timeouts are clamped: a fraction is rounded down, less than 1 is 1, a non-finite value the default.
const pageLimit = (value: number | undefined): number =>
  value === undefined || !Number.isFinite(value) ? defaultMaxListPages : Math.max(1, Math.floor(value))

/**
 * What `make` is given besides its options: the user's elicitation service
 * (none: every elicitation request is declined), sampling service (none:
 * sampling is not declared) and OAuth (see {@link layerOAuth}). The layers
 * read `McpElicitation` and `McpSampling` from their context when built,
 * when they are provided.
 *
 * @category models
 * @since 0.2.0
 */
export interface Services {
  readonly elicitation?: McpElicitation["Service"] | undefined
  readonly sampling?: McpSampling["Service"] | undefined
  readonly oauth?:
    | {
        readonly options: (url: string) => McpOAuth.Options | undefined
        readonly context: Context.Context<OAuthProvider.Services>
      }
    | undefined
}

/**
 * Makes the service. Each `connect` creates one SDK `Client`, connects it
 * over the transport `open` gives (bounded by `connectTimeout`), and closes
 * it — stopping a stdio server — when the scope closes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options?: Options, services?: Services): Core.McpClient["Service"] => {
  const { oauth, ...answers } = services ?? {}
  const settings: Connection.Settings = {
    ...answers,
    // One client's connections share each server's authorizations in flight.
    ...(oauth === undefined ? {} : { oauth: { ...oauth, flights: OAuthFetch.makeFlights() } }),
    clientInfo: options?.clientInfo ?? { name: "rolecraft", version: "0.2.0" },
    connectTimeoutMs: toMillis(options?.connectTimeout, 30_000),
    listTimeoutMs: toMillis(options?.listTimeout, 30_000),
    maxListPages: pageLimit(options?.maxListPages),
    open: options?.open ?? McpTransport.openDefault,
    ...(options?.roots === undefined ? {} : { roots: options.roots })
  }
  // Every secret a connection obtained (OAuth tokens, registered client secrets), for the agent to redact.
  const obtained = new Map<string, Redacted.Redacted<string>>()
  const onSecret = (secret: string) => {
    if (secret !== "" && !obtained.has(secret)) obtained.set(secret, Redacted.make(secret))
  }
  return Core.McpClient.of({
    connect: (server, connectOptions) => Connection.connect(settings, server, connectOptions, onSecret),
    secrets: () => [...obtained.values()]
  })
}

// The user's services the layers read when they are built: elicitation and sampling, each optional.
const provided: Effect.Effect<Services> = Effect.map(
  Effect.all([Effect.serviceOption(McpElicitation), Effect.serviceOption(McpSampling)]),
  ([elicitation, sampling]) => ({
    ...(Option.isSome(elicitation) ? { elicitation: elicitation.value } : {}),
    ...(Option.isSome(sampling) ? { sampling: sampling.value } : {})
  })
)

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
export const layer = (options?: Options): Layer.Layer<Core.McpClient> =>
  Layer.effect(
    Core.McpClient,
    Effect.map(provided, (services) => make(options, services))
  )

/**
 * The `McpClient` layer with OAuth 2.1 for streamable HTTP servers that ask
 * for it (answer 401, or 403 `insufficient_scope`): the MCP SDK's client
 * auth discovers the server's authorization server, registers the client (or
 * uses its metadata URL or a pre-registered client), authorizes with PKCE
 * and a resource indicator, and refreshes tokens (see `McpOAuth`). `oauth`
 * is one setting for every server, or a function of the server's URL
 * (`undefined`: no OAuth for that server).
 *
 * Needs `McpTokenStore` (where tokens are kept: `McpTokenStore.layerMemory`
 * or `layerSql`) and `McpOAuth.Authorization` (the user's browser step;
 * `McpOAuth.layerFollowRedirects` for servers that approve without a user).
 * An authorization that fails, or a 401 or 403 that stays, fails the call
 * with EXECUTION naming the status and the server. Tokens never appear in
 * its errors or logs.
 *
 * @example
 * ```ts
 * import { Agent } from "@rolecraft/core"
 * import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
 * import { Effect, Layer } from "effect"
 *
 * const client = McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback" }).pipe(
 *   Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects])
 * )
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "fx", roles: [], mcpServers: { docs: "https://mcp.example.com/mcp" } })
 *   return yield* agent.executeAction("docs", { tool: "search", arguments: { query: "oauth" } })
 * }).pipe(Effect.scoped, Effect.provide(client))
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerOAuth = (
  oauth: McpOAuth.Options | ((url: string) => McpOAuth.Options | undefined),
  options?: Options
): Layer.Layer<Core.McpClient, never, OAuthProvider.Services> =>
  Layer.effect(
    Core.McpClient,
    Effect.gen(function* () {
      const services = yield* provided
      const context = yield* Effect.context<OAuthProvider.Services>()
      return make(options, {
        ...services,
        oauth: { options: typeof oauth === "function" ? oauth : () => oauth, context }
      })
    })
  )
