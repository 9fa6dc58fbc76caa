/**
 * One connection's session: what every part of a connection reads — the SDK
 * `Client`, the transport it was opened over, the connection's state (open,
 * the tool list cached for the current generation), the requests waiting
 * for an answer, the secrets to hide and how to log — passed as one value to
 * the functions that make up a connection.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type * as Core from "@rolecraft/core/McpClient"
import type * as McpTransport from "../McpTransport.ts"

/** What a connection is doing: connecting, listing tools, or calling one. */
export type Phase = "connect" | "list" | "call"

/**
 * The state of a connection: `open` until its transport closes;
 * `generation` counts the server's `tools/list_changed` notifications, and
 * `tools` is the list cached for the current one.
 */
export interface State {
  open: boolean
  generation: number
  tools: ReadonlyArray<Core.ToolDefinition> | undefined
}

/** One connection (see the module doc). */
export interface Session {
  readonly client: Client
  readonly opened: McpTransport.Opened
  readonly state: State
  /** The requests waiting for an answer: each fails with the failure given when the server breaks the protocol. */
  readonly pending: Set<(failure: Core.McpClientError) => void>
  readonly secrets: ReadonlyArray<string>
  /** How log lines name the server: `MCP server <name> (<command or URL>)`. */
  readonly who: string
  /** Logs a line (with the secrets hidden) without waiting for it. */
  readonly log: (level: "Warn" | "Debug", message: string) => void
  readonly listTimeoutMs: number
  /** The most `tools/list` pages one listing reads. */
  readonly maxListPages: number
  /** Tells the connection's caller what the server said unasked (progress, log messages), without waiting. */
  readonly notify: (notification: Core.Notification) => void
  /** Told why a listing ended before the server said it was done (the connection's caller's). */
  readonly onListingStopped: Core.ConnectOptions["onListingStopped"]
}
