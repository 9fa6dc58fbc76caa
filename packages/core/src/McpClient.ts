/**
 * The `McpClient` service: what the agent needs from an MCP client
 * to run mcpTool actions — open a connection to a server, list its tools and
 * call one. Core holds only the contract; `@rolecraft/mcp` implements it over
 * `@modelcontextprotocol/sdk` (`McpClientSdk.layer`), and `@rolecraft/testing`
 * runs the SDK's own server in memory behind the same implementation.
 *
 * An mcpTool action requires it (in its `R`, and so in that of an agent
 * whose roles or `mcpServers` hold one): a program that runs one without an
 * `McpClient` layer does not compile.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { McpClientSdk } from "@rolecraft/mcp"
 * import { Effect } from "effect"
 *
 * const Notes = Role.make({
 *   identity: { name: "notes", goal: "Read the trip's notes", domain: "travel" },
 *   actions: {
 *     files: Action.mcpTool({
 *       description: "The trip's notes",
 *       server: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/notes"] },
 *       tools: ["read_text_file"]
 *     })
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "reader", roles: [Notes] })
 *   return yield* agent.executeAction("files", { tool: "read_text_file", arguments: { path: "/tmp/notes/plan.md" } })
 * }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { expected } from "./internal/expectedError.ts"
import type * as Scope from "effect/Scope"
import * as IdempotencyKey from "./internal/idempotencyKey.ts"

/**
 * A tool as an MCP server lists it (`tools/list`).
 *
 * - `name`: the server's own name for it (1–64 characters of
 *   `[A-Za-z0-9_.\-/]` under SEP-986, but any string is kept as given).
 * - `inputSchema`: the JSON Schema of its arguments, as the server sent it
 *   (`{ "type": "object" }` when the server sent none).
 * - `outputSchema`: the JSON Schema its `structuredContent` follows, if any.
 * - `annotations`: its behaviour hints, if the server listed any (see
 *   {@link ToolAnnotations}).
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolDefinition {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
  readonly annotations?: ToolAnnotations | undefined
}

/**
 * What a server says about a tool's behaviour (`annotations` in
 * `tools/list`), as it sent it: each hint is absent when the server did not
 * say. These are hints from the server, not guarantees: read them with
 * `ToolHints.of`, which fills in the MCP specification's defaults.
 *
 * @category models
 * @since 0.3.0
 */
export interface ToolAnnotations {
  readonly title?: string | undefined
  readonly readOnlyHint?: boolean | undefined
  readonly destructiveHint?: boolean | undefined
  readonly idempotentHint?: boolean | undefined
  readonly openWorldHint?: boolean | undefined
}

/**
 * One block of a tool result's `content`: `text`, `image`, `audio`,
 * `resource` (embedded), `resource_link`, or a type this client does not
 * know, kept as the server sent it.
 *
 * @category models
 * @since 0.1.0
 */
export interface ContentBlock {
  readonly type: string
  readonly [field: string]: unknown
}

/**
 * The result of `tools/call` as the server sent it. `isError: true` means the
 * tool ran and reported a failure: the call fails with EXECUTION.
 *
 * @category models
 * @since 0.1.0
 */
export interface CallToolResult {
  readonly content: ReadonlyArray<ContentBlock>
  readonly structuredContent?: Readonly<Record<string, unknown>> | undefined
  readonly isError?: boolean | undefined
}

/**
 * What a server says about itself when the connection is initialised.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerInfo {
  readonly name: string
  readonly version: string
  readonly instructions?: string | undefined
}

/**
 * Why an MCP operation failed. The agent turns each into one of the nine
 * categories (see `reason`); the service never decides categories itself.
 *
 * - `Connect`: the server could not be reached or did not initialise
 *   (spawn failure, refused connection, a failed `initialize`).
 * - `Closed`: the transport closed or the server process exited; `exitCode`
 *   or `signal` and the tail of its stderr (`stderr`, at most ~2 KB) are kept.
 * - `Timeout`: the request's timeout passed; it was cancelled on the server.
 * - `InvalidParams`: JSON-RPC -32602 (the server refused the arguments, or
 *   does not know the tool).
 * - `MethodNotFound`: JSON-RPC -32601 (e.g. the server has no tools).
 * - `SessionExpired`: streamable HTTP answered 404 to a request that carried
 *   a session id: the session is gone and the request was never executed.
 * - `Protocol`: a reply that is not a valid JSON-RPC response to the request;
 *   `snippet` holds the start of what was received.
 * - `Http`: streamable HTTP answered another non-2xx `status`.
 * - `Rpc`: any other JSON-RPC error `code` the server answered with.
 *
 * `sent` says whether the request may have reached the server: `false` only
 * when it certainly did not (so retrying cannot run the tool twice).
 *
 * @category errors
 * @since 0.1.0
 */
export class McpClientError extends expected(
  Schema.TaggedError<McpClientError>()("McpClientError", {
    reason: Schema.Literals([
      "Connect",
      "Closed",
      "Timeout",
      "InvalidParams",
      "MethodNotFound",
      "SessionExpired",
      "Protocol",
      "Http",
      "Rpc"
    ]),
    message: Schema.String,
    sent: Schema.Boolean,
    code: Schema.optionalKey(Schema.Int),
    status: Schema.optionalKey(Schema.Int),
    exitCode: Schema.optionalKey(Schema.Int),
    signal: Schema.optionalKey(Schema.String),
    stderr: Schema.optionalKey(Schema.String),
    snippet: Schema.optionalKey(Schema.String),
    cause: Schema.optionalKey(Schema.Defect())
  })
) {}

/**
 * Options of one `callTool`.
 *
 * - `timeout`: the request's timeout, passed to the client itself (the SDK's
 *   own 60-second default never applies); when it passes the request is
 *   cancelled on the server (`notifications/cancelled`) and the call fails
 *   with reason `Timeout`. Progress notifications do not extend it.
 *
 * - `meta`: the request's `_meta` (an mcpTool action sends the call's
 *   idempotency key there, under {@link idempotencyKeyMeta}); left out when
 *   absent.
 *
 * Interrupting the returned Effect cancels the request on the server too.
 *
 * @category models
 * @since 0.1.0
 */
export interface CallOptions {
  readonly timeout: Duration.Duration
  readonly meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The `_meta` key under which an mcpTool action sends the call's
 * idempotency key (`IdempotencyKey.IdempotencyKey`: in a durable run, the run id and
 * the tool call id, the same on every attempt): `"rolecraft/idempotencyKey"`.
 * A server with side effects reads it from the request's `_meta` to take
 * a call run twice once.
 *
 * @category constants
 * @since 0.2.0
 */
export const idempotencyKeyMeta: "rolecraft/idempotencyKey" = IdempotencyKey.idempotencyKeyMeta

/**
 * Why a `tools/list` listing stopped before the server said it was done
 * (a last page without a `nextCursor`, or with `""` or `null`):
 *
 * - `RepeatedCursor`: the server sent a cursor it had sent before (at once,
 *   or after a cycle): following it would never end;
 * - `NoNewTools`: a page added no tool name not listed already (the same
 *   tools under a fresh cursor on every page, or an empty page);
 * - `InvalidCursor`: the `nextCursor` is not a string;
 * - `PageLimit`: the implementation's page limit was reached
 *   (`McpClientSdk`'s `maxListPages`, default 100).
 *
 * `pages` is how many pages were read, `tools` how many distinct tools they
 * held (the list kept), `message` says it in words, naming the server.
 *
 * @category models
 * @since 0.2.0
 */
export interface ListingStopped {
  readonly reason: "RepeatedCursor" | "NoNewTools" | "InvalidCursor" | "PageLimit"
  readonly pages: number
  readonly tools: number
  readonly message: string
}

/**
 * An open connection to one MCP server, shared by every call of an agent to
 * that server. It lives until the scope it was opened in closes (then the
 * server process, if any, is stopped).
 *
 * - `server`: what the server said about itself at initialisation.
 * - `isOpen()`: `false` once the transport closed or the process exited; the
 *   agent then drops it and the next call reconnects.
 * - `listTools(options)`: every page of `tools/list`, each tool name once
 *   (the first listing of a name wins), cached for the life of the
 *   connection and refetched after the server sends
 *   `notifications/tools/list_changed`, or when `refresh: true` is asked. A
 *   listing whose cursor does not advance (see {@link ListingStopped}) ends
 *   with the tools found so far, and the connection's `onListingStopped`
 *   is told why.
 * - `callTool(name, args, options)`: one `tools/call`; see {@link CallOptions}.
 *
 * @category models
 * @since 0.1.0
 */
export interface Connection {
  readonly server: ServerInfo
  readonly isOpen: () => boolean
  readonly listTools: (options?: {
    readonly refresh?: boolean | undefined
  }) => Effect.Effect<ReadonlyArray<ToolDefinition>, McpClientError>
  readonly callTool: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options: CallOptions
  ) => Effect.Effect<CallToolResult, McpClientError>
}

/**
 * What a server tells the client unasked during a connection: the progress
 * of a tool call (`Progress`: `progress` so far, of `total` when known) or
 * a log message (`Log`: its `level`, `logger` and `data` as text).
 *
 * @category models
 * @since 0.2.0
 */
export type Notification =
  | {
      readonly _tag: "Progress"
      readonly tool: string
      readonly progress: number
      readonly total?: number | undefined
      readonly message?: string | undefined
    }
  | { readonly _tag: "Log"; readonly level: string; readonly logger?: string | undefined; readonly data: string }

/**
 * Options of `connect`.
 *
 * - `name`: who the connection is for (an action key), used in logs.
 * - `credential`: the server's credential, read by the agent from the
 *   variable `variable` (the action's `apiKeyEnv`) through Effect `Config`:
 *   sent as `Authorization: Bearer <value>` over HTTP and put in the child's
 *   environment under `variable` over stdio. Never logged.
 * - `onListingStopped`: told when a listing of the connection's tools ended
 *   early (see {@link ListingStopped}); the agent publishes it as an
 *   `McpToolListingStopped` event. Default: nothing (the implementation
 *   logs a warning either way).
 * - `onNotification`: told of a tool call's progress and of the server's log
 *   messages (see {@link Notification}); the agent publishes them as
 *   `McpToolCallProgressed` and `McpServerLogged` events. Default: nothing.
 *
 * @category models
 * @since 0.1.0
 */
export interface ConnectOptions {
  readonly name: string
  readonly credential?:
    | {
        readonly variable: string
        readonly value: Redacted.Redacted<string>
      }
    | undefined
  readonly onListingStopped?: ((stopped: ListingStopped) => Effect.Effect<void>) | undefined
  readonly onNotification?: ((notification: Notification) => Effect.Effect<void>) | undefined
}

/**
 * The service: `connect(server, options)` opens a connection (spawning a
 * stdio server, or initialising a streamable HTTP session) that stays open
 * until the given `Scope` closes. Fails with {@link McpClientError} (reason
 * `Connect` or `Closed`, usually). `secrets()`, when the implementation has
 * it, lists the secrets it obtained itself (OAuth tokens), which the agent
 * redacts.
 *
 * Implementations: `McpClientSdk.layer` in `@rolecraft/mcp`, and the
 * in-memory test layer in `@rolecraft/testing`.
 *
 * @category services
 * @since 0.1.0
 */
export class McpClient extends Context.Service<
  McpClient,
  {
    readonly connect: (
      server: Address,
      options: ConnectOptions
    ) => Effect.Effect<Connection, McpClientError, Scope.Scope>
    /**
     * The secrets the client obtained by itself (OAuth access and refresh
     * tokens, registered client secrets), read when the agent redacts: the
     * agent hides them at every exit as it hides its credentials. Optional.
     */
    readonly secrets?: (() => ReadonlyArray<Redacted.Redacted<string>>) | undefined
  }
>()("@rolecraft/core/McpClient") {}

/**
 * Where an MCP server is: a stdio command (`{ command, args, env, cwd }`) or
 * a streamable HTTP URL. `Action.McpServer` is the same type.
 *
 * @category models
 * @since 0.3.0
 */
export type Address =
  | string
  | {
      readonly command: string
      readonly args?: ReadonlyArray<string> | undefined
      readonly env?: Readonly<Record<string, string>> | undefined
      readonly cwd?: string | undefined
    }

/**
 * A server as a short text for messages and logs: its URL without user
 * information, query or fragment (they may hold a token), or its command line
 * (arguments included, environment left out: it may hold secrets).
 *
 * @category getters
 * @since 0.1.0
 */
export const describeServer = (server: Address): string => {
  if (typeof server !== "string") return [server.command, ...(server.args ?? [])].join(" ")
  if (!URL.canParse(server)) return server
  const url = new URL(server)
  return `${url.protocol}//${url.host}${url.pathname}`
}

/**
 * The canonical key of a server and its credential variable: two actions
 * with equal keys share one connection per agent. URLs are normalised by
 * `URL`; a stdio server is keyed by command, arguments, environment (sorted)
 * and working directory.
 *
 * @category getters
 * @since 0.1.0
 */
export const serverKey = (server: Address, apiKeyEnv?: string | undefined): string => {
  const credential = apiKeyEnv === undefined ? "" : ` key:${apiKeyEnv}`
  if (typeof server === "string") {
    const url = URL.canParse(server) ? new URL(server).href : server
    return `url:${url}${credential}`
  }
  const env = Object.entries(server.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `stdio:${JSON.stringify([server.command, server.args ?? [], env, server.cwd ?? null])}${credential}`
}
