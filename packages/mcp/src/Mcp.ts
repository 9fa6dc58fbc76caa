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
import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { type CallToolResult, CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ActionResponse, Agent, type Role, ToolResult } from "@rolecraft/core"
import type { RoleDefinitionError } from "@rolecraft/core/ActionError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Origin from "./internal/origin.ts"

/**
 * How to serve.
 *
 * - `transport`: `"stdio"` (this process's stdin and stdout), or
 *   `{ http: { port, host, path, allowedHosts, allowedOrigins } }` —
 *   streamable HTTP on a `node:http` server, stateless (each POST is handled
 *   by a fresh SDK server), `port` default 0 (an ephemeral port), `host`
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
        }
      }
  readonly name?: string | undefined
  readonly version?: string | undefined
  readonly id?: string | undefined
}

/**
 * A running server.
 *
 * - `url`: where it listens (HTTP), `undefined` for stdio.
 * - `tools`: what it offers, each MCP tool `name` with the action `key` it
 *   runs.
 * - `closed`: completes when the stdio client disconnects (stdin ends); never
 *   for HTTP, which stops when the scope closes.
 *
 * @category models
 * @since 0.1.0
 */
export interface Served {
  readonly url: string | undefined
  readonly tools: ReadonlyArray<{ readonly name: string; readonly key: string }>
  readonly closed: Effect.Effect<void>
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

type AnyAgent = Agent.Agent<any, any>

const isAgent = (u: unknown): u is AnyAgent => typeof u === "object" && u !== null && Agent.TypeId in u

// The same text a chat turn answers a tool call with (`ToolResult.success`), redacted of every secret the
// agent knows, plus `structuredContent` for an object: the JSON of that text, so the two agree (a bigint in
// it is its decimal string, a Map an object; left out in the rare case redacting broke the JSON). A result
// that cannot be written (a cycle) is the EXECUTION failure a chat turn answers with.
const successResult = (agent: AnyAgent, action: string, value: unknown): Effect.Effect<CallToolResult> => {
  const text = ToolResult.success(value, { action })
  if (Result.isFailure(text)) return Effect.succeed(failureResult(text.failure.category, text.failure.message))
  return Effect.map(agent.redact(text.success), (shown) => {
    const content: CallToolResult["content"] = [{ type: "text", text: shown }]
    if (ToolResult.structured(value) === undefined) return { content }
    const structured = Result.try(() => JSON.parse(shown) as Record<string, unknown>)
    return Result.isSuccess(structured) ? { content, structuredContent: structured.success } : { content }
  })
}

const failureResult = (category: string, message: string): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: ToolResult.failure(category, message) }]
})

const toResult = (
  agent: AnyAgent,
  action: string,
  response: ActionResponse.ActionResponse
): Effect.Effect<CallToolResult> =>
  response.success
    ? successResult(agent, action, response.value)
    : Effect.succeed(failureResult(response.error.category, response.error.message))

const serveAgent = <R>(
  agent: Agent.Agent<any, R>,
  options: Options
): Effect.Effect<Served, ServeError, Scope.Scope | R> =>
  Effect.gen(function* () {
    const offered = agent.tools
    const actionOf = new Map(offered.map((tool) => [tool.name, tool.action]))
    const context = yield* Effect.context<R>()
    const run = Effect.runPromiseWith(context)
    const info = { name: options.name ?? agent.id, version: options.version ?? "0.1.0" }

    const call = (name: string, args: Record<string, unknown> | undefined, signal: AbortSignal) => {
      const key = actionOf.get(name)
      // Only what was offered can be called: an action kept from the model, or one the
      // agent's authority denies, is not reachable either. Authority first, as in a chat
      // turn: a name it denies is AUTHORITY whether or not it exists.
      if (key === undefined) {
        const available = offered.map((tool) => tool.name).join(", ")
        return Promise.resolve(
          agent.allows(name)
            ? failureResult("NOT_FOUND", `No tool named ${name}; available: ${available || "none"}`)
            : failureResult("AUTHORITY", `The agent's authority does not allow ${name}`)
        )
      }
      return run(
        agent.execute({ action: key, params: args ?? {} }).pipe(
          Effect.flatMap((response) => toResult(agent, key, response)),
          Effect.catch((failure) => Effect.succeed(failureResult("RETRIEVAL", failure.message)))
        ),
        { signal }
      )
    }

    const makeServer = (): Server => {
      const server = new Server(info, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: offered.map((tool) => ({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.parameters
        }))
      }))
      server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
        call(request.params.name, request.params.arguments, extra.signal)
      )
      return server
    }

    const tools = offered.map((tool) => ({ name: tool.name, key: tool.action }))
    if (options.transport === "stdio") {
      const server = makeServer()
      const closed = Deferred.makeUnsafe<void>()
      server.onclose = () => Deferred.doneUnsafe(closed, Exit.void)
      const onEnd = () => void server.close()
      process.stdin.once("end", onEnd)
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => server.connect(new StdioServerTransport()),
          catch: (cause) => new ServeError({ message: `could not serve over stdio: ${String(cause)}`, cause })
        }),
        () =>
          Effect.andThen(
            Effect.sync(() => process.stdin.off("end", onEnd)),
            Effect.ignore(Effect.tryPromise(() => server.close()))
          )
      )
      return { url: undefined, tools, closed: Deferred.await(closed) }
    }

    const { port = 0, host = "127.0.0.1", path = "/mcp" } = options.transport.http
    // Known once the server listens (the port may be ephemeral); nothing is answered before.
    let allowed: Origin.Allowed = { hosts: new Set(), origins: new Set() }
    const handle = (request: IncomingMessage, response: ServerResponse) => {
      const refused = Origin.refusal(allowed, request.headers.host, request.headers.origin)
      if (refused !== undefined) {
        response
          .writeHead(403, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: ${refused}.` }, id: null }))
        return
      }
      const pathname = new URL(request.url ?? "/", "http://localhost").pathname
      if (pathname !== path) {
        response.writeHead(404, { "content-type": "text/plain" }).end("Not found")
        return
      }
      if (request.method !== "POST") {
        response
          .writeHead(405, { "content-type": "application/json", allow: "POST" })
          .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }))
        return
      }
      const server = makeServer()
      const transport = new StreamableHTTPServerTransport({
        enableDnsRebindingProtection: true,
        allowedHosts: [...allowed.hosts],
        allowedOrigins: [...allowed.origins]
      })
      response.on("close", () => {
        void transport.close()
        void server.close()
      })
      server
        .connect(transport)
        .then(() => transport.handleRequest(request, response))
        .catch((error: unknown) => {
          if (!response.headersSent) {
            response
              .writeHead(500, { "content-type": "application/json" })
              .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: String(error) }, id: null }))
          }
        })
    }
    const listening = yield* Effect.acquireRelease(
      Effect.callback<NodeServer, ServeError>((resume) => {
        const server = createServer(handle)
        server.once("error", (cause) =>
          resume(
            Effect.fail(new ServeError({ message: `could not listen on ${host}:${port}: ${cause.message}`, cause }))
          )
        )
        server.listen(port, host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const address = listening.address() as AddressInfo
    allowed = Origin.allowedFor(address, {
      hosts: options.transport.http.allowedHosts,
      origins: options.transport.http.allowedOrigins
    })
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address
    return { url: `http://${shownHost}:${address.port}${path}`, tools, closed: Effect.never }
  })

/**
 * Serves an agent's roles — or one role, through an agent made for it — as
 * an MCP server, until the scope closes.
 *
 * - Tools: the agent's `tools` — every action of its roles (and its
 *   `mcpServers`) not marked `Action.excludeFromModel` whose name the agent's
 *   authority allows, each named validly and uniquely (at most 64
 *   characters) with the JSON Schema of its parameters as `inputSchema`.
 * - Calls: `agent.execute` with the arguments as given (the pipeline converts
 *   them). A success is the text a chat turn answers a tool call with
 *   (`ToolResult.success`: a string result as is, anything else as JSON — a
 *   bigint as its decimal string, a `Date` as its ISO string, a `Map` as an
 *   object, a `Set` as an array), plus `structuredContent`, the same JSON, for
 *   an object result; a failure is an `isError: true` result whose text is
 *   `{"error":{"category","message"}}` — the nine categories, or `RETRIEVAL`
 *   for a knowledge failure — and so is a result that cannot be written (a
 *   cycle: EXECUTION, naming where it closes). A name that was not
 *   offered is refused and nothing runs: `AUTHORITY` when the agent's
 *   authority denies the name, else `NOT_FOUND` listing the offered names
 *   (an excluded action included). A call the client cancels interrupts the action.
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
  <R>(agent: Agent.Agent<any, R>, options: Options): Effect.Effect<Served, ServeError, Scope.Scope | R>
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
