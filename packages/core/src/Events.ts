/**
 * Events and spans of an agent. Every call publishes `ActionStarted`, then
 * `ActionSucceeded`, `ActionFailed` or `ActionInterrupted`, to `agent.events`
 * (a `Stream`); every call runs in one span `execute_tool {action}` (the
 * OpenTelemetry GenAI conventions; a chat turn adds `invoke_agent {agent}`
 * and a `chat {model}` span per model call), and, when the agent is made
 * with `traceSteps: true`, each pipeline step in a child span
 * `Rolecraft.step.<step>`. A chat turn (`agent.chat`,
 * `agent.resume`) adds `StepFinished` after each model call and
 * `ToolExecutionStarted`/`ToolExecutionFinished` around each tool call it
 * runs. Listing an MCP server's tools that ends early (a cursor that does
 * not advance) adds `McpToolListingStopped`; an MCP server's progress during
 * a tool call adds `McpToolCallProgressed`, its log messages `McpServerLogged`.
 * An MCP tool whose definition changed after a person was asked to approve a
 * call of it adds `McpToolDefinitionChanged`; a server's text that held
 * characters a person cannot see, removed before a model read it, adds
 * `McpTextSanitised`.
 *
 * Events and spans never hold argument values or results, only names,
 * categories, messages (already free of secrets) and durations — spans hold
 * them only when the agent is made with `traceContent: true`.
 *
 * @example
 * ```ts
 * import type { Agent } from "@rolecraft/core"
 * import { Console, Effect, Stream } from "effect"
 *
 * declare const agent: Agent.Agent
 *
 * // log every failed call with its category; runs until the scope closes
 * const watch = agent.events.pipe(
 *   Stream.runForEach((event) =>
 *     event._tag === "ActionFailed" ? Console.log(`${event.action}: ${event.category}`) : Effect.void
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Action from "./Action.ts"
import type { Category } from "./ActionError.ts"
import type { Usage } from "./ActionResponse.ts"
import type * as ToolHints from "./ToolHints.ts"

/**
 * What every action event carries.
 *
 * - `agentId`, `action`: the agent and the name called.
 * - `role`, `type`: the role declaring the action and its type; `undefined`
 *   when no action has that name.
 * - `correlationId`: the request's, when given (`agent.execute`).
 * - `timestamp`: epoch milliseconds on Effect's `Clock` when the event was
 *   made.
 *
 * @category models
 * @since 0.1.0
 */
export interface Common {
  readonly agentId: string
  readonly action: string
  readonly role: string | undefined
  readonly type: Action.Type | undefined
  readonly correlationId: string | undefined
  readonly timestamp: number
}

/**
 * A call entered the pipeline.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionStarted extends Common {
  readonly _tag: "ActionStarted"
}

/**
 * A call succeeded after `durationMs` (Clock milliseconds); `usage` holds the
 * model tokens of an llm action's call (`undefined` for other types, and when
 * no model call was recorded).
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionSucceeded extends Common {
  readonly _tag: "ActionSucceeded"
  readonly durationMs: number
  readonly usage: Usage | undefined
}

/**
 * A call failed after `durationMs`: `error` is the error's tag, `category`
 * its category (`undefined` for `RetrievalFailure` and defects), `message`
 * its message.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionFailed extends Common {
  readonly _tag: "ActionFailed"
  readonly durationMs: number
  readonly error: string
  readonly category: Category | undefined
  readonly message: string
}

/**
 * A call was interrupted after `durationMs` (interruption is never a
 * category).
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionInterrupted extends Common {
  readonly _tag: "ActionInterrupted"
  readonly durationMs: number
}

/**
 * What both tool call events carry.
 *
 * - `step`: the turn's model step that made the call (1-based, counted across
 *   an approval pause).
 * - `toolCallId`: the call's id, as the model sent it.
 * - `tool`: the model-facing tool name the model called.
 * - `action`: the agent's action that runs it (for an MCP tool, its mcpTool
 *   action); `undefined` when the name was never offered.
 * - `mcpTool`: the server's own tool name, for an MCP tool.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolExecutionCommon {
  readonly agentId: string
  readonly step: number
  readonly toolCallId: string
  readonly tool: string
  readonly action: string | undefined
  readonly mcpTool: string | undefined
  readonly hints?: ToolHints.Hints | undefined
  readonly timestamp: number
}

/**
 * A chat turn started running one of the model's tool calls (the execution
 * phase: its `execute_tool` span opens), after the model finished writing it.
 * The action's own events (`ActionStarted`, …) come from the pipeline.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolExecutionStarted extends ToolExecutionCommon {
  readonly _tag: "ToolExecutionStarted"
}

/**
 * A chat turn answered one of the model's tool calls after `durationMs`
 * (Clock milliseconds) of running it. `success` is `false` when the answer
 * is an error message; `category` is then its category (`undefined` for a
 * `RetrievalFailure`). A call paused for approval finishes with category
 * `APPROVAL`.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolExecutionFinished extends ToolExecutionCommon {
  readonly _tag: "ToolExecutionFinished"
  readonly success: boolean
  readonly category: Category | undefined
  readonly durationMs: number
}

/**
 * A chat turn finished one model step: `step` is its number
 * (1-based, counted across an approval pause), `toolCalls` how many tool calls
 * the model made in it (answered after this event), `usage` the tokens of
 * that model call.
 *
 * @category models
 * @since 0.3.0
 */
export interface StepFinished {
  readonly _tag: "StepFinished"
  readonly agentId: string
  readonly step: number
  readonly toolCalls: number
  readonly usage: Usage
  readonly timestamp: number
}

/**
 * Listing an MCP server's tools (`tools/list`) ended before the server said
 * it was done, because its cursor did not advance: `reason` says how (see
 * `McpClient.ListingStopped`: a repeated cursor, a page with no new tool, a
 * cursor that is not a string, or the client's page limit). The agent goes
 * on with the `tools` distinct tools of the `pages` pages read. `action` is
 * the mcpTool action (or `mcpServers` key) whose connection listed them,
 * `server` the server (its URL without credentials, or its command line),
 * `message` the same in words.
 *
 * @category models
 * @since 0.2.0
 */
export interface McpToolListingStopped {
  readonly _tag: "McpToolListingStopped"
  readonly agentId: string
  readonly action: string
  readonly server: string
  readonly reason: "RepeatedCursor" | "NoNewTools" | "InvalidCursor" | "PageLimit"
  readonly pages: number
  readonly tools: number
  readonly message: string
  readonly timestamp: number
}

/**
 * While a tool call to an MCP server runs, the server reported its progress
 * (`notifications/progress`): `progress` so far, of `total` when the server
 * knows it, with an optional `message`. `action` is the mcpTool action (or
 * `mcpServers` key), `server` the server, `tool` the server's tool.
 *
 * @category models
 * @since 0.2.0
 */
export interface McpToolCallProgressed {
  readonly _tag: "McpToolCallProgressed"
  readonly agentId: string
  readonly action: string
  readonly server: string
  readonly tool: string
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
  readonly timestamp: number
}

/**
 * An MCP server sent a log message while connected
 * (`notifications/message`): `level` as the server gave it (`debug`,
 * `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`),
 * `logger` its name if any, `message` the data as text (JSON for a value
 * that is not a string; at most 2,000 characters, redacted).
 *
 * @category models
 * @since 0.2.0
 */
export interface McpServerLogged {
  readonly _tag: "McpServerLogged"
  readonly agentId: string
  readonly action: string
  readonly server: string
  readonly level: string
  readonly logger?: string | undefined
  readonly message: string
  readonly timestamp: number
}

/**
 * An MCP tool's definition changed between the request for an approval of
 * a call and the call: the approved call did not run. `action` is the
 * mcpTool action (or `mcpServers` key), `server` the server (its URL without
 * credentials, or its command line), `tool` the server's tool, `changed` the
 * parts that changed (`"description"`, `"input schema"`, `"output schema"`,
 * `"title"`, `"annotations"`), `message` the same in words.
 *
 * @category models
 * @since 0.3.0
 */
export interface McpToolDefinitionChanged {
  readonly _tag: "McpToolDefinitionChanged"
  readonly agentId: string
  readonly action: string
  readonly server: string
  readonly tool: string
  readonly changed: ReadonlyArray<string>
  readonly message: string
  readonly timestamp: number
}

/**
 * Text an MCP server supplied for a model to read held characters a person
 * reading it cannot see (Unicode tag characters, bidirectional overrides and
 * isolates, zero-width characters outside words); they were removed before
 * any model was offered it. `tool` is the server's tool (absent for the
 * server's instructions), `fields` where they were found (`"description"`,
 * `"inputSchema.properties.path.description"`, `"name"`, …), `removed` how
 * many characters were removed, `codePoints` which ones (`"U+E0049"`, each
 * once, at most 32). `leftOut` is `true` when the tool was not offered at
 * all: its name, a property name, an `enum` or `const` value held them
 * (what a call is routed by or the server checks cannot be changed).
 *
 * @category models
 * @since 0.3.0
 */
export interface McpTextSanitised {
  readonly _tag: "McpTextSanitised"
  readonly agentId: string
  readonly action: string
  readonly server: string
  readonly tool?: string | undefined
  readonly fields: ReadonlyArray<string>
  readonly removed: number
  readonly codePoints: ReadonlyArray<string>
  readonly leftOut: boolean
  readonly timestamp: number
}

/**
 * Any event of an agent.
 *
 * @category models
 * @since 0.1.0
 */
export type Event =
  | ActionStarted
  | ActionSucceeded
  | ActionFailed
  | ActionInterrupted
  | ToolExecutionStarted
  | ToolExecutionFinished
  | StepFinished
  | McpToolListingStopped
  | McpToolCallProgressed
  | McpServerLogged
  | McpToolDefinitionChanged
  | McpTextSanitised
