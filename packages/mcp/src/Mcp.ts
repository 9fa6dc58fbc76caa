/**
 * Serving a role — or a whole agent — as an MCP server: each
 * model-visible action becomes an MCP tool, and each `tools/call` runs through
 * the agent's full pipeline (authority, approval, hooks, guardrails,
 * conversion, contracts, resilience, fallback). Over stdio or streamable HTTP,
 * with the MCP SDK's low-level `Server` (it takes raw JSON Schemas, which is
 * what `agent.tools` projects).
 *
 * @example
 * ```ts
 * import { Action, Role } from "@rolecraft/core"
 * import { Mcp } from "@rolecraft/mcp"
 * import { Effect, Schema } from "effect"
 *
 * const Travel = Role.make({
 *   identity: { name: "travel", goal: "Plan trips", domain: "travel" },
 *   actions: {
 *     nights: Action.local({
 *       description: "Count the nights between two ISO dates",
 *       parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *       run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 *     })
 *   }
 * })
 *
 * // an MCP server over stdio (a client spawns this program) until the process ends
 * const program = Effect.scoped(Effect.andThen(Mcp.serve(Travel, { transport: "stdio" }), Effect.never))
 * ```
 *
 * @since 0.1.0
 */
import { createServer, type Server as NodeServer } from "node:http"
import type { AddressInfo } from "node:net"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Agent, type Role } from "@rolecraft/core"
import type { RoleDefinitionError } from "@rolecraft/core/ActionError"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as McpPrompt from "./McpPrompt.ts"
import type * as McpResource from "./McpResource.ts"
import * as Origin from "./internal/origin.ts"
import * as Catalog from "./internal/serve/catalog.ts"
import * as Http from "./internal/serve/http.ts"
import * as ServeServer from "./internal/serve/server.ts"

/**
 * How to serve.
 *
 * - `transport`: `"stdio"` (this process's stdin and stdout), or
 *   `{ http: { port, host, path, allowedHosts, allowedOrigins, maxSessions,
 *   maxSessionsPerClient, idleTimeout } }` — streamable HTTP on a
 *   `node:http` server with sessions (an `initialize` opens one, its id in
 *   `mcp-session-id`; at most `maxSessions` live at once, default 100, 503
 *   beyond, and at most `maxSessionsPerClient` from one client address,
 *   default 20, 429 beyond; one that asks for nothing but pings for longer
 *   than `idleTimeout`, default 30 minutes, is closed and its id answers
 *   404), `port` default 0 (an ephemeral port), `host`
 *   default `"127.0.0.1"`, `path` default `"/mcp"`. It answers only requests
 *   whose `Host` is a name that reaches the listener, with its port (for a
 *   loopback listener `127.0.0.1`, `localhost` and `[::1]`; on `0.0.0.0` or
 *   `::` also each interface's address; else the address itself), and, when
 *   a browser sends an `Origin`, only `http://` and one of those hosts:
 *   anything else is HTTP 403 before a server is made, so a web page on
 *   another origin, or on a name rebound to this address, cannot call a
 *   tool. `allowedHosts` adds `Host` values (as clients send them, e.g.
 *   `"mcp.example.com"` behind a proxy, or `"mcp.internal:8080"`);
 *   `allowedOrigins` adds origins (`"https://app.example.com"`). The SDK
 *   transport's own DNS-rebinding protection is on with the same lists, and
 *   a POST must be `application/json` (else 415).
 * - `name`, `version`: what the server says at `initialize` (default the
 *   agent's id, `"0.1.0"`).
 * - `id`: the id of the agent made when serving a role (default the role's
 *   name).
 * - `resources`: resources and resource templates to serve
 *   (`McpResource.make`, `McpResource.template`); the documents of the
 *   roles' knowledge sources (`spec.knowledge`) are served too, as `file:`
 *   URIs.
 * - `prompts`: prompts to offer (`McpPrompt.make`), after one per role
 *   (`McpPrompt.fromRole`: its identity and goals) unless `rolePrompts` is
 *   `false`.
 * - `approveInBand` (default `true`): when a call needs approval, carries
 *   no token and its client declared elicitation, ask the person at the
 *   client to approve that exact call, and run it once on acceptance; with
 *   `false` (approvals come from someone else, through
 *   `agent.approvals`), the call is refused with its pending token id.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly transport:
    | "stdio"
    | {
        readonly http: {
          readonly port?: number | undefined
          readonly host?: string | undefined
          readonly path?: string | undefined
          readonly allowedHosts?: ReadonlyArray<string> | undefined
          readonly allowedOrigins?: ReadonlyArray<string> | undefined
          readonly maxSessions?: number | undefined
          readonly maxSessionsPerClient?: number | undefined
          readonly idleTimeout?: Duration.Input | undefined
        }
      }
  readonly name?: string | undefined
  readonly version?: string | undefined
  readonly id?: string | undefined
  readonly resources?: ReadonlyArray<McpResource.Any> | undefined
  readonly prompts?: ReadonlyArray<McpPrompt.McpPrompt> | undefined
  readonly rolePrompts?: boolean | undefined
  readonly approveInBand?: boolean | undefined
}

/**
 * A running server.
 *
 * - `url`: where it listens (HTTP), `undefined` for stdio.
 * - `tools`: what it offers, each MCP tool `name` with the action `key` it
 *   runs.
 * - `closed`: completes when the stdio client disconnects (stdin ends); never
 *   for HTTP, which stops when the scope closes.
 * - `resourceUpdated(uri)`: tells every session subscribed to `uri`
 *   (`resources/subscribe`) that it changed (`notifications/resources/updated`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Served {
  readonly url: string | undefined
  readonly tools: ReadonlyArray<{ readonly name: string; readonly key: string }>
  readonly closed: Effect.Effect<void>
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
}

/**
 * The HTTP server could not listen (port in use, bad host).
 *
 * @category errors
 * @since 0.1.0
 */
export class ServeError extends Schema.TaggedError<ServeError>()("ServeError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

type AnyAgent = Agent.Any

const isAgent = (u: unknown): u is AnyAgent => typeof u === "object" && u !== null && Agent.TypeId in u

const defaultMaxSessions = 100
const defaultMaxSessionsPerClient = 20
const defaultIdleTimeout = "30 minutes"

const serveAgent = <R>(agent: AnyAgent, options: Options): Effect.Effect<Served, ServeError, Scope.Scope | R> =>
  Effect.gen(function* () {
    const offered = agent.tools
    const context = yield* Effect.context<R>()
    const runPlain = Effect.runPromiseWith(context)
    const served: ServeServer.Served = {
      agent,
      tools: new Map(offered.map((tool) => [tool.name, tool])),
      run: (effect, signal) => runPlain(effect, { signal }),
      runPlain: (effect) => runPlain(effect),
      approveInBand: options.approveInBand ?? true,
      owners: new Map(),
      sources: new Map(
        agent.roles.flatMap((role) =>
          Object.entries(role.actions as Record<string, { readonly parameters?: unknown }>).flatMap(([name, action]) =>
            Schema.isSchema(action.parameters) ? [[name, action.parameters] as const] : []
          )
        )
      ),
      info: { name: options.name ?? agent.id, version: options.version ?? "0.1.0" },
      catalog: Catalog.make(
        agent.roles,
        options.resources ?? [],
        options.prompts ?? [],
        options.rolePrompts === false ? [] : agent.roles.map(McpPrompt.fromRole)
      )
    }
    const sessions = new Set<ServeServer.Session>()
    const resourceUpdated = (uri: string): Effect.Effect<void> =>
      Effect.promise(() =>
        Promise.allSettled(
          [...sessions]
            .filter((session) => session.subscriptions.has(uri))
            .map((session) => session.server.sendResourceUpdated({ uri }))
        )
      )
    const open = () => {
      const session = ServeServer.make(served)
      sessions.add(session)
      session.server.onclose = () => sessions.delete(session)
      return session
    }

    const tools = offered.map((tool) => ({ name: tool.name, key: tool.action }))
    if (options.transport === "stdio") {
      const session = open()
      const closed = Deferred.makeUnsafe<void>()
      session.server.onclose = () => {
        sessions.delete(session)
        Deferred.doneUnsafe(closed, Exit.void)
      }
      const onEnd = () => void session.server.close()
      process.stdin.once("end", onEnd)
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => session.server.connect(new StdioServerTransport()),
          catch: (cause) => new ServeError({ message: `could not serve over stdio: ${String(cause)}`, cause })
        }),
        () =>
          Effect.andThen(
            Effect.sync(() => process.stdin.off("end", onEnd)),
            Effect.ignore(Effect.tryPromise(() => session.server.close()))
          )
      )
      return { url: undefined, tools, closed: Deferred.await(closed), resourceUpdated }
    }

    const http = options.transport.http
    const { port = 0, host = "127.0.0.1", path = "/mcp" } = http
    const idle = Duration.fromInputUnsafe(http.idleTimeout ?? defaultIdleTimeout)
    // Known once the server listens (the port may be ephemeral); nothing is answered before.
    let allowed: Origin.Allowed = { hosts: new Set(), origins: new Set() }
    const routes = Http.make({
      path,
      allowed: () => allowed,
      open,
      maxSessions: http.maxSessions ?? defaultMaxSessions,
      maxSessionsPerClient: http.maxSessionsPerClient ?? defaultMaxSessionsPerClient,
      idleMs: Duration.toMillis(idle)
    })
    const listening = yield* Effect.acquireRelease(
      Effect.callback<NodeServer, ServeError>((resume) => {
        const server = createServer(routes.handle)
        server.once("error", (cause) =>
          resume(
            Effect.fail(new ServeError({ message: `could not listen on ${host}:${port}: ${cause.message}`, cause }))
          )
        )
        server.listen(port, host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.andThen(
          Effect.promise(() => routes.closeAll()),
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
        )
    )
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.sync(() => routes.sweep(Date.now())),
        Schedule.spaced(Duration.min(idle, Duration.minutes(1)))
      )
    )
    const address = listening.address() as AddressInfo
    allowed = Origin.allowedFor(address, { hosts: http.allowedHosts, origins: http.allowedOrigins })
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address
    return { url: `http://${shownHost}:${address.port}${path}`, tools, closed: Effect.never, resourceUpdated }
  })

/**
 * Serves an agent's roles — or one role, through an agent made for it — as
 * an MCP server, until the scope closes.
 *
 * - Tools: the agent's `tools` — every action of its roles (and its
 *   `mcpServers`) not marked `Action.excludeFromModel` whose name the agent's
 *   authority allows, each named validly and uniquely (at most 64
 *   characters). Its `inputSchema` is the JSON Schema of its parameters as
 *   a model is shown it, stated as JSON Schema 2020-12 (`$schema`) with
 *   every struct closed (`additionalProperties: false`), plus, for an
 *   action that needs approval, an optional `_approval_token` string.
 * - Calls: `agent.execute` with the arguments as given (the pipeline converts
 *   them). A `ToolContent.Content` result is its content blocks; any other
 *   success is the text a chat turn answers a tool call with
 *   (`ToolContent.success`: a string result as is, anything else as JSON — a
 *   bigint as its decimal string, a `Date` as its ISO string, a `Map` as an
 *   object, a `Set` as an array), plus `structuredContent`, the same JSON, for
 *   an object result; a failure is an `isError: true` result whose text is
 *   `{"error":{"category","message"}}` — the nine categories, or `RETRIEVAL`
 *   for a knowledge failure — and so is a result that cannot be written (a
 *   cycle: EXECUTION, naming where it closes). An APPROVAL refusal also
 *   carries `check`, `reason` and `pendingTokenId`, in the text and in
 *   `structuredContent`; a client sends an approved token back as
 *   `_meta["rolecraft/approvalToken"]` or the `_approval_token` argument.
 *   A name that was not offered runs nothing: it is the JSON-RPC error
 *   -32602 ("Unknown tool: …", saying so when the agent's authority denies
 *   it). A call the client cancels interrupts the action. During a call the
 *   action's Effect logs reach the client at the level it set,
 *   `Progress.report` reaches it when it sent a `progressToken`, and
 *   `McpPeer.elicit` / `McpPeer.sample` ask it.
 * - Resources, prompts and completions: see {@link Options}.
 *
 * Over stdio, stdout belongs to the protocol: Effect's built-in loggers are
 * routed to stderr (`Logger.LogToStderr`) for the calls it serves.
 *
 * Fails with `ServeError` when the HTTP server cannot listen, and with
 * `RoleDefinitionError` when a role's agent cannot be made. Needs a `Scope`
 * and what the actions' own effects require.
 *
 * @example
 * ```ts
 * import { Action, Role } from "@rolecraft/core"
 * import { Mcp } from "@rolecraft/mcp"
 * import { Console, Effect, Schema } from "effect"
 *
 * const Travel = Role.make({
 *   identity: { name: "travel", goal: "Plan trips", domain: "travel" },
 *   actions: {
 *     nights: Action.local({
 *       description: "Count the nights between two ISO dates",
 *       parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *       run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 *     })
 *   }
 * })
 *
 * // Serves until the scope closes; an MCP client connects to `served.url`.
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const served = yield* Mcp.serve(Travel, { transport: { http: { port: 0 } } })
 *     yield* Console.log(served.url, served.tools.map((tool) => tool.name))
 *   })
 * )
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const serve: {
  <A extends Agent.Any>(agent: A, options: Options): Effect.Effect<Served, ServeError, Scope.Scope | Agent.Services<A>>
  <X extends Role.Any>(
    role: X,
    options: Options
  ): Effect.Effect<Served, ServeError | RoleDefinitionError, Scope.Scope | Role.Services<X>>
} = (target: AnyAgent | Role.Any, options: Options): Effect.Effect<Served, any, any> => {
  const served = isAgent(target)
    ? serveAgent(target, options)
    : Effect.flatMap(Agent.make({ id: options.id ?? target.identity.name, roles: [target] }), (agent) =>
        serveAgent(agent, options)
      )
  // Over stdio, stdout carries the protocol: Effect's own loggers must write to stderr.
  return options.transport === "stdio" ? Effect.provideService(served, Logger.LogToStderr, true) : served
}
