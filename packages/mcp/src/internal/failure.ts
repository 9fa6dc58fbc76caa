/**
 * How a failure of the MCP SDK becomes an `McpClientError` with its reason:
 * a JSON-RPC error the server sent (`Rpc`, `InvalidParams`,
 * `MethodNotFound`), a transport that closed (`Closed`, with a stdio server's
 * exit code, signal and stderr tail) or never opened (`Connect`), a timeout,
 * an HTTP status (`Http`, `SessionExpired` for a 404 under a session id), or
 * a reply that is not JSON-RPC (`Protocol`, with a snippet of it). Every
 * message has the connection's secrets hidden.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Core from "@rolecraft/core/McpClient"
import * as Effect from "effect/Effect"
import { AuthorizationFailed } from "./oauth/fetch.ts"
import { RefreshUnavailable } from "./oauth/attempt.ts"
import { hide } from "./redact.ts"
import type { Phase, Session } from "./session.ts"

/** Core's cut (internal, not exported) applied here: never half a surrogate pair at the end. */
export const truncate = (text: string, length: number): string =>
  text.length <= length ? text : `${text.slice(0, length - 1).replace(/[\uD800-\uDBFF]$/, "")}…`

interface SchemaIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A schema failure of the SDK's parsers (zod's errors, whatever zod build made them, carry `issues`). */
export const isSchemaError = (error: unknown): error is Error & { readonly issues: ReadonlyArray<SchemaIssue> } =>
  error instanceof Error && Array.isArray((error as { readonly issues?: unknown }).issues)

export const isParseError = (error: unknown): boolean => error instanceof SyntaxError || isSchemaError(error)

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
export const parseProblem = (error: Error): string =>
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
export const looksLikeFrame = (line: string): boolean => /^\s*[[{]/.test(line) && line.includes('"jsonrpc"')

/** Whether a transport error says a payload was not JSON-RPC (or not an answer to any request). */
export const isPayloadError = (error: unknown): boolean =>
  isParseError(error) || (error instanceof Error && /unknown message ID|Unexpected content type/.test(error.message))

const networkCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** Whether a fetch failure happened before the request could be sent. */
const notSent = (error: unknown): boolean => {
  const cause = error instanceof Error ? (error.cause as { readonly code?: unknown } | undefined) : undefined
  return typeof cause?.code === "string" && networkCodes.has(cause.code)
}

/**
 * A server that refused the request for want of authorization (HTTP 401) or
 * of permission (HTTP 403): the server never ran it (`sent: false`). The
 * message names the status and the server, and says what to do.
 */
export const refusedAccess = (
  session: Pick<Session, "who" | "secrets">,
  status: 401 | 403,
  detail: string,
  cause?: unknown
): Core.McpClientError =>
  new Core.McpClientError({
    reason: "Http",
    sent: false,
    status,
    message: hide(
      `${session.who} answered HTTP ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}: ` +
        `${status === 401 ? "it needs an authorization the client does not have (McpClientSdk.layerOAuth authorizes with OAuth)" : "the authorization does not allow this request"}` +
        `${detail === "" ? "" : `; ${truncate(detail, 300)}`}`,
      session.secrets
    ),
    ...(cause === undefined ? {} : { cause })
  })

/** The failure of `error`, met while `phase` (see the module doc). */
export const toError = (session: Session, error: unknown, phase: Phase): Effect.Effect<Core.McpClientError> =>
  Effect.suspend(() => {
    const { opened, secrets, state } = session
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
          return Effect.succeed(make({ reason: phase === "connect" ? "Connect" : "Timeout", sent, code: error.code }))
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
    if (error instanceof AuthorizationFailed)
      return Effect.succeed(refusedAccess(session, error.status, message, error))
    // The request was never sent: the token could not be refreshed for now (transient).
    if (error instanceof RefreshUnavailable)
      return Effect.succeed(
        new Core.McpClientError({ reason: "Connect", sent: false, message: `${session.who}: ${message}`, cause: error })
      )
    if (error instanceof StreamableHTTPError) {
      const status = error.code ?? -1
      if (status === 401 || status === 403) return Effect.succeed(refusedAccess(session, status, message, error))
      const sessionId =
        opened.transport instanceof StreamableHTTPClientTransport ? opened.transport.sessionId : undefined
      if (status === 404 && sessionId !== undefined && phase !== "connect") {
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

/** Whether an error is the spawn of a stdio server's command failing (not found, not executable). */
const isSpawnError = (error: unknown): boolean => {
  const fields = error as { readonly syscall?: unknown; readonly code?: unknown } | null
  return (
    error instanceof Error &&
    typeof fields?.syscall === "string" &&
    fields.syscall.startsWith("spawn") &&
    typeof fields.code === "string"
  )
}

const seconds = (ms: number): string => {
  const value = Number((ms / 1000).toFixed(3))
  return `${value} ${value === 1 ? "second" : "seconds"}`
}

/**
 * A failure met while connecting, told with what was being done (starting the command, or `initialize`), the
 * server's name and command (or URL), and the setting to change when it is the connect timeout that passed.
 * A stdio server's stderr tail is kept on a timeout too: a launcher that could not fetch its package says why
 * there.
 */
export const connectFailure = (
  session: Pick<Session, "who" | "secrets" | "opened">,
  failure: Core.McpClientError,
  cause: unknown,
  connectTimeoutMs: number
): Core.McpClientError => {
  if (failure.reason !== "Connect") return failure
  const stdio = session.opened.kind === "stdio"
  const rewrite = (text: string, extra?: { readonly stderr?: string | undefined }) =>
    new Core.McpClientError({
      ...failure,
      ...(extra?.stderr === undefined || extra.stderr === "" ? {} : { stderr: extra.stderr }),
      message: hide(`could not connect to ${session.who}: ${text}`, session.secrets)
    })
  if (failure.code === ErrorCode.RequestTimeout) {
    const launcher = stdio
      ? "; a command that first downloads its server (npx, uvx) may need longer, or may be failing to reach its registry (see its stderr)"
      : ""
    return rewrite(
      `it did not answer initialize within ${seconds(connectTimeoutMs)} (connectTimeout)${launcher}; ` +
        "raise it with McpClientSdk.layer({ connectTimeout })",
      stdio ? { stderr: session.opened.diagnostics().stderr } : undefined
    )
  }
  if (stdio && isSpawnError(cause)) {
    return rewrite(`its command could not be started (${failure.message}); is it installed, and on PATH?`)
  }
  if (stdio && failure.code === ErrorCode.ConnectionClosed) {
    return rewrite("the server exited before it answered initialize")
  }
  return rewrite(`while starting it and sending initialize: ${failure.message}`)
}
