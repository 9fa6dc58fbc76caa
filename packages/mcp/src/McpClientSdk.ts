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
 * @since 0.1.0
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  ErrorCode,
  McpError,
  PaginatedResultSchema,
  ResultSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { Action } from "@rolecraft/core"
import * as Core from "@rolecraft/core/McpClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as z from "zod/v4"
import { hide, secretsOf } from "./internal/redact.ts"
import * as McpTransport from "./McpTransport.ts"

/**
 * Options of {@link make} and {@link layer}.
 *
 * - `clientInfo`: the name and version sent at `initialize` (default
 *   `{ name: "rolecraft", version: "0.1.0" }`).
 * - `connectTimeout`: bounds spawning and `initialize` (default 30 seconds).
 * - `listTimeout`: bounds each `tools/list` page (default 30 seconds).
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
  readonly open?: McpTransport.Open | undefined
}

const maxPages = 1_000
// setTimeout's largest delay; a larger (or infinite) one fires at once.
const maxTimerMs = 2_147_483_647

// The clock a fiber reads when no layer provides one.
const defaultClock: Clock.Clock = Context.get(Context.empty(), Clock.Clock)

const toMillis = (input: Duration.Input | undefined, fallback: number): number => {
  const ms = input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))
  return Math.min(Math.max(0, ms), maxTimerMs)
}

// Core's cut (internal, not exported) applied here: never half a surrogate pair at the end.
const truncate = (text: string, length: number): string =>
  text.length <= length ? text : `${text.slice(0, length - 1).replace(/[\uD800-\uDBFF]$/, "")}…`

const CallResult = ResultSchema.extend({
  content: z.array(z.looseObject({ type: z.string() })).default([]),
  structuredContent: z.unknown().optional(),
  isError: z.unknown().optional()
})

const ListResult = PaginatedResultSchema.extend({ tools: z.array(z.unknown()) })

interface SchemaIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A schema failure of the SDK's parsers (zod's errors, whatever zod build made them, carry `issues`). */
const isSchemaError = (error: unknown): error is Error & { readonly issues: ReadonlyArray<SchemaIssue> } =>
  error instanceof Error && Array.isArray((error as { readonly issues?: unknown }).issues)

const isParseError = (error: unknown): boolean => error instanceof SyntaxError || isSchemaError(error)

/** The first issues of a schema failure as `path: message` (its own message is a JSON dump of every issue). */
const describeIssues = (issues: ReadonlyArray<SchemaIssue>): string =>
  truncate(
    issues
      .slice(0, 3)
      .map((issue) => `${issue.path.length === 0 ? "(result)" : issue.path.map(String).join(".")}: ${issue.message}`)
      .join("; "),
    300
  )

/** A short reason for a payload that failed to parse. */
const parseProblem = (error: Error): string =>
  isSchemaError(error) ? "it does not have the shape of a JSON-RPC message" : truncate(error.message, 200)

/**
 * The message a server sent with its JSON-RPC error. The SDK prefixes every
 * error's message with `MCP error <code>: `, and servers built on it send that
 * prefixed message again: one prefix is kept.
 */
const rpcMessage = (error: McpError): string => {
  const prefix = /^MCP error -?\d+: /
  let text = error.message
  while (prefix.test(text)) text = text.replace(prefix, "")
  return `MCP error ${error.code}: ${text}`
}

/** Whether a line on a stdio server's stdout claims to be a JSON-RPC frame (a broken reply, not a banner). */
const looksLikeFrame = (line: string): boolean => /^\s*[[{]/.test(line) && line.includes('"jsonrpc"')

const isPayloadError = (error: unknown): boolean =>
  isParseError(error) || (error instanceof Error && /unknown message ID|Unexpected content type/.test(error.message))

/** A listed tool as a definition, or why it cannot be one. */
const toDefinition = (entry: unknown): Core.ToolDefinition | string => {
  if (!Predicate.isObject(entry)) return "a tool entry that is not an object"
  const { name, title, description, inputSchema, outputSchema } = entry
  if (typeof name !== "string" || name === "") return "a tool entry without a name"
  if (inputSchema !== undefined && !Predicate.isObject(inputSchema))
    return `tool ${name}: its inputSchema is not an object`
  return {
    name,
    ...(typeof title === "string" ? { title } : {}),
    ...(typeof description === "string" ? { description } : {}),
    inputSchema: inputSchema ?? { type: "object" },
    ...(Predicate.isObject(outputSchema) ? { outputSchema } : {})
  }
}

type Phase = "connect" | "list" | "call"

const networkCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** Whether a fetch failure happened before the request could be sent. */
const notSent = (error: unknown): boolean => {
  const cause = error instanceof Error ? (error.cause as { readonly code?: unknown } | undefined) : undefined
  return typeof cause?.code === "string" && networkCodes.has(cause.code)
}

/**
 * Makes the service. Each `connect` creates one SDK `Client`, connects it
 * over the transport `open` gives (bounded by `connectTimeout`), and closes
 * it — stopping a stdio server — when the scope closes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options?: Options): Core.McpClient["Service"] => {
  const clientInfo = options?.clientInfo ?? { name: "rolecraft", version: "0.1.0" }
  const connectTimeoutMs = toMillis(options?.connectTimeout, 30_000)
  const listTimeoutMs = toMillis(options?.listTimeout, 30_000)
  const open = options?.open ?? McpTransport.openDefault

  const connect = (
    server: Action.McpServer,
    connectOptions: Core.ConnectOptions
  ): Effect.Effect<Core.Connection, Core.McpClientError, Scope.Scope> =>
    Effect.gen(function* () {
      const opened = yield* open(server, connectOptions)
      const secrets = secretsOf(connectOptions)
      const who = `MCP server ${connectOptions.name} (${Core.describeServer(server)})`
      const context = yield* Effect.context<never>()
      const log = (level: "Warn" | "Debug", message: string) => {
        const text = hide(message, secrets)
        Effect.runForkWith(context)(level === "Warn" ? Effect.logWarning(text) : Effect.logDebug(text))
      }

      const client = new Client(clientInfo, { capabilities: {} })
      const state = { open: true, generation: 0, tools: undefined as ReadonlyArray<Core.ToolDefinition> | undefined }
      const pending = new Set<(failure: Core.McpClientError) => void>()

      const toError = (error: unknown, phase: Phase): Effect.Effect<Core.McpClientError> =>
        Effect.suspend(() => {
          if (error instanceof Core.McpClientError) return Effect.succeed(error)
          const sent = phase !== "connect"
          const message = hide(error instanceof Error ? error.message : String(error), secrets)
          const make = (fields: Omit<ConstructorParameters<typeof Core.McpClientError>[0], "message">) =>
            new Core.McpClientError({ ...fields, message, cause: error })
          if (error instanceof McpError) {
            // The SDK makes up ConnectionClosed when its transport closed (it calls onclose first) and
            // RequestTimeout only for its own timer; `request` turns that one into a Timeout itself, so past
            // connect the same codes on a live connection were sent by the server.
            const serverSent =
              (error.code === ErrorCode.ConnectionClosed && state.open) ||
              (error.code === ErrorCode.RequestTimeout && phase !== "connect")
            if (serverSent) {
              return Effect.succeed(
                new Core.McpClientError({
                  reason: "Rpc",
                  sent,
                  code: error.code,
                  message: hide(rpcMessage(error), secrets),
                  cause: error
                })
              )
            }
            switch (error.code) {
              case ErrorCode.ConnectionClosed:
                // The child's last words may still be in its stderr pipe: let them arrive.
                return Effect.map(
                  Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))),
                  () => {
                    const { exitCode, signal, stderr } = opened.diagnostics()
                    return make({
                      reason: phase === "connect" ? "Connect" : "Closed",
                      sent,
                      code: error.code,
                      ...(exitCode === undefined ? {} : { exitCode }),
                      ...(signal === undefined ? {} : { signal }),
                      ...(stderr === undefined || stderr === "" ? {} : { stderr })
                    })
                  }
                )
              case ErrorCode.RequestTimeout:
                return Effect.succeed(
                  make({ reason: phase === "connect" ? "Connect" : "Timeout", sent, code: error.code })
                )
              default: {
                const reason =
                  error.code === ErrorCode.InvalidParams
                    ? "InvalidParams"
                    : error.code === ErrorCode.MethodNotFound
                      ? "MethodNotFound"
                      : "Rpc"
                return Effect.succeed(
                  new Core.McpClientError({
                    reason,
                    sent,
                    code: error.code,
                    message: hide(rpcMessage(error), secrets),
                    cause: error
                  })
                )
              }
            }
          }
          if (error instanceof StreamableHTTPError) {
            const status = error.code ?? -1
            const session =
              opened.transport instanceof StreamableHTTPClientTransport ? opened.transport.sessionId : undefined
            if (status === 404 && session !== undefined && phase !== "connect") {
              return Effect.succeed(make({ reason: "SessionExpired", sent: false, status }))
            }
            if (status < 100) {
              const snippet = opened.received()
              return Effect.succeed(make({ reason: "Protocol", sent, ...(snippet === undefined ? {} : { snippet }) }))
            }
            return Effect.succeed(make({ reason: "Http", sent, status }))
          }
          if (isSchemaError(error) && phase !== "connect") {
            // A well-formed JSON-RPC response whose result does not fit the method: the server answered.
            return Effect.succeed(
              new Core.McpClientError({
                reason: "Rpc",
                sent,
                message: hide(
                  `the server's ${phase === "list" ? "tools/list" : "tools/call"} result is malformed: ${describeIssues(error.issues)}`,
                  secrets
                )
              })
            )
          }
          if (isParseError(error)) {
            const snippet = opened.received()
            return Effect.succeed(
              new Core.McpClientError({
                reason: "Protocol",
                sent,
                message: hide(
                  `the server's reply is not a valid JSON-RPC response (${parseProblem(error as Error)})`,
                  secrets
                ),
                ...(snippet === undefined ? {} : { snippet }),
                cause: error
              })
            )
          }
          if (error instanceof Error && error.message === "Not connected") {
            return Effect.succeed(make({ reason: phase === "connect" ? "Connect" : "Closed", sent: false }))
          }
          if (phase === "connect") return Effect.succeed(make({ reason: "Connect", sent: false }))
          return Effect.succeed(make({ reason: "Closed", sent: !notSent(error) }))
        })

      /** Fails every pending request at once: the server sent something no request can wait past. */
      const failPending = (problem: string, cause?: unknown) => {
        const snippet = opened.received()
        const failure = new Core.McpClientError({
          reason: "Protocol",
          sent: true,
          message: hide(`the server's reply is not a valid JSON-RPC response (${problem})`, secrets),
          ...(snippet === undefined ? {} : { snippet }),
          ...(cause === undefined ? {} : { cause })
        })
        // Resuming a waiter runs its fiber on: it may register the next call before this loop ends.
        const failing = [...pending]
        pending.clear()
        for (const fail of failing) fail(failure)
      }

      // The ids of the requests sent so far (the SDK numbers them 0, 1, 2, …): a reply under a
      // smaller id is a late answer to a request given up on, not a broken server.
      let lastRequestId = -1
      const send = opened.transport.send.bind(opened.transport)
      opened.transport.send = (message, sendOptions) => {
        if ("method" in message && "id" in message && typeof message.id === "number") {
          lastRequestId = Math.max(lastRequestId, message.id)
        }
        return send(message, sendOptions)
      }
      const unknownId = (error: Error): number | string | undefined => {
        const match = /unknown message ID: (.*)$/s.exec(error.message)
        if (match === null) return undefined
        const id = Result.try(() => (JSON.parse(match[1] ?? "") as { readonly id?: unknown }).id)
        const value = Result.isSuccess(id) ? id.success : undefined
        return typeof value === "number" || typeof value === "string" ? value : "?"
      }

      opened.onNoise?.((line) => {
        if (looksLikeFrame(line) && pending.size > 0) {
          failPending(`a broken frame: ${truncate(line, 120)}`)
          return
        }
        log("Warn", `${who} wrote a line on stdout that is not JSON-RPC; skipped: ${truncate(line, 200)}`)
      })
      client.onclose = () => {
        state.open = false
      }
      client.onerror = (error) => {
        const id = unknownId(error)
        if (id !== undefined) {
          if (typeof id === "number" && id <= lastRequestId) {
            log("Debug", `${who} answered request ${id} after it was given up on; the answer is dropped`)
          } else if (pending.size > 0) {
            failPending(`a reply under the id ${JSON.stringify(id)}, which no request has`, error)
          } else {
            log("Warn", `${who} sent a reply under the id ${JSON.stringify(id)}, which no request has; skipped`)
          }
          return
        }
        if (opened.kind === "stdio" && isParseError(error)) {
          log("Warn", `${who} wrote a line on stdout that is not JSON-RPC; skipped: ${truncate(error.message, 200)}`)
          return
        }
        if (opened.kind === "http" && isPayloadError(error) && pending.size > 0) {
          failPending(parseProblem(error), error)
          return
        }
        log("Debug", `${who}: ${error.message}`)
      }
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        state.generation++
        state.tools = undefined
      })

      yield* Effect.addFinalizer(() =>
        Effect.tryPromise(() => client.close()).pipe(
          Effect.ignore,
          Effect.andThen(Effect.sync(() => (state.open = false)))
        )
      )
      yield* Effect.tryPromise({
        try: (signal) => client.connect(opened.transport, { signal, timeout: connectTimeoutMs }),
        catch: (error) => error
      }).pipe(Effect.catch((error) => Effect.flatMap(toError(error, "connect"), Effect.fail)))

      const version = client.getServerVersion()
      const instructions = client.getInstructions()
      const info: Core.ServerInfo = {
        name: version?.name ?? Core.describeServer(server),
        version: version?.version ?? "",
        ...(instructions === undefined ? {} : { instructions })
      }

      /**
       * One request, waited on in the caller's fiber (no fork, no race): the SDK's own timer is the timeout
       * (it sends the server `notifications/cancelled` when it fires, as an interruption does through the
       * signal), and a broken reply reported by the transport fails it at once (`failPending`).
       */
      const waited = <A>(phase: Phase, timeoutMs: number, send: (signal: AbortSignal, timeout: number) => Promise<A>) =>
        Effect.callback<A, Core.McpClientError>((resume) => {
          const controller = new AbortController()
          const timed = timeoutMs > 0 && timeoutMs < maxTimerMs
          const start = performance.now()
          let settled = false
          const settle = () => {
            if (settled) return false
            settled = true
            pending.delete(broken)
            return true
          }
          const broken = (failure: Core.McpClientError) => {
            if (!settle()) return
            controller.abort(failure)
            resume(Effect.fail(failure))
          }
          pending.add(broken)
          send(controller.signal, timed ? timeoutMs : maxTimerMs).then(
            (value) => {
              if (settle()) resume(Effect.succeed(value))
            },
            (error) => {
              if (!settle()) return
              // The SDK's own timer (it cannot fire before the time has passed): the request timed out here.
              const ownTimeout =
                timed &&
                error instanceof McpError &&
                error.code === ErrorCode.RequestTimeout &&
                performance.now() - start >= timeoutMs - 1
              resume(
                ownTimeout
                  ? Effect.fail(
                      new Core.McpClientError({
                        reason: "Timeout",
                        sent: true,
                        code: ErrorCode.RequestTimeout,
                        message: `the MCP request timed out after ${Duration.format(Duration.millis(timeoutMs))}`
                      })
                    )
                  : Effect.flatMap(toError(error, phase), Effect.fail)
              )
            }
          )
          return Effect.sync(() => {
            if (settle()) controller.abort()
          })
        })

      // On any clock but Effect's own (the TestClock) the timeout is Effect's, so tests drive it with TestClock.adjust.
      const request = <A>(
        phase: Phase,
        timeoutMs: number,
        send: (signal: AbortSignal, timeout: number) => Promise<A>
      ) =>
        Effect.withFiber<A, Core.McpClientError>((fiber) => {
          if (!(timeoutMs > 0 && timeoutMs < maxTimerMs) || fiber.getRef(Clock.Clock) === defaultClock) {
            return waited(phase, timeoutMs, send)
          }
          return Effect.timeoutOrElse(waited(phase, 0, send), {
            duration: Duration.millis(timeoutMs),
            orElse: () =>
              Effect.fail(
                new Core.McpClientError({
                  reason: "Timeout",
                  sent: true,
                  code: ErrorCode.RequestTimeout,
                  message: `the MCP request timed out after ${Duration.format(Duration.millis(timeoutMs))}`
                })
              )
          })
        })

      const page = (cursor: string | undefined) =>
        request("list", listTimeoutMs, (signal, timeout) =>
          client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ListResult, {
            signal,
            timeout
          })
        )

      const fetchTools = Effect.gen(function* () {
        const tools: Array<Core.ToolDefinition> = []
        const names = new Set<string>()
        const cursors = new Set<string>()
        let cursor: string | undefined
        for (let index = 0; index < maxPages; index++) {
          const result = yield* page(cursor)
          for (const entry of result.tools) {
            const tool = toDefinition(entry)
            if (typeof tool === "string") yield* Effect.logWarning(`${who} listed ${tool}; it is left out`)
            else if (!names.has(tool.name)) {
              names.add(tool.name)
              tools.push(tool)
            }
          }
          cursor = result.nextCursor
          if (cursor === undefined || cursors.has(cursor)) break
          cursors.add(cursor)
        }
        return tools as ReadonlyArray<Core.ToolDefinition>
      })

      const listTools: Core.Connection["listTools"] = (listOptions) =>
        Effect.suspend(() => {
          if (listOptions?.refresh !== true && state.tools !== undefined) return Effect.succeed(state.tools)
          const generation = state.generation
          return Effect.tap(fetchTools, (tools) =>
            Effect.sync(() => {
              if (generation === state.generation) state.tools = tools
            })
          )
        })

      const callTool: Core.Connection["callTool"] = (name, args, callOptions) =>
        Effect.map(
          request("call", toMillis(callOptions.timeout, 0), (signal, timeout) =>
            client.request(
              // The SDK's request type wants a mutable record; the arguments are not changed.
              { method: "tools/call", params: { name, arguments: args as Record<string, unknown> } },
              CallResult,
              { signal, timeout, resetTimeoutOnProgress: false }
            )
          ),
          (result): Core.CallToolResult => ({
            content: result.content,
            ...(Predicate.isObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
            ...(result.isError === true ? { isError: true } : {})
          })
        )

      return {
        server: info,
        isOpen: () => state.open,
        listTools,
        callTool
      } satisfies Core.Connection
    })

  return Core.McpClient.of({ connect })
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
