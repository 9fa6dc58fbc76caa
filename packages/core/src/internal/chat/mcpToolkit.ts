/**
 * What a model is offered of MCP servers' tools: the tools of several mcpTool actions projected through
 * the {@link Tool} module under namespaced keys `<action>/<tool>`, each
 * model-facing name mapped back to its own action and server tool. A chat
 * turn passes the agent's other actions too, so one toolkit names them all.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { ToolDefinition } from "../../McpClient.ts"
import * as Tool from "../schema/tool.ts"

/**
 * The tools one mcpTool action (or agent MCP server) offers: `action` is its
 * key in the agent, `tools` what its server listed (already filtered by the
 * action's allow-list and the agent's authority).
 *
 * @since 0.1.0
 */
export interface ServerTools {
  readonly action: string
  readonly tools: ReadonlyArray<ToolDefinition>
}

/**
 * Where a model-facing name goes: the action to run, and the server's own
 * tool name to pass as its `tool` parameter (absent for an action offered as
 * itself through `options.actions`).
 *
 * @since 0.1.0
 */
export interface Route {
  readonly action: string
  readonly tool?: string
}

/**
 * A {@link Tool.Toolkit} of MCP tools with `route(name)`, which maps a
 * model-facing name back to its action and server tool (`undefined` for a
 * name that was never offered: NOT_FOUND).
 *
 * @since 0.1.0
 */
export interface McpToolkit extends Tool.Toolkit {
  readonly route: (name: string) => Route | undefined
}

/**
 * Projects the tools of several MCP servers for a model.
 *
 * - Each tool is keyed `<action>/<tool>`, so `srv-a` and `srv-b` both
 *   listing `send_email` give two distinct names (`srv-a_send_email`,
 *   `srv-b_send_email`), each routed to its own server.
 * - Names are made valid and unique by {@link Tool.toolkit}: `.` and `/`
 *   become `_`, names over 64 characters are cut and given a stable hash,
 *   clashes after mapping are resolved deterministically.
 * - Schemas are projected by {@link Tool.jsonSchema}: an `inputSchema` of
 *   `{"type":"object"}` becomes `{"type":"object","properties":{}}`;
 *   `$ref`s are inlined. A tool whose schema cannot be projected (a
 *   recursive schema, a dangling `$ref`) is left out with a warning logged,
 *   and the others are still offered.
 * - The description is the tool's `description`, else its `title`, else
 *   `"<tool> (MCP tool of <action>)"`.
 * - `options.actions`: entries offered alongside the MCP tools, keyed by
 *   action name (a chat turn's local, webService and llm actions), placed
 *   first and projected in the same {@link Tool.toolkit}, so names are unique
 *   across actions and MCP tools; each routes to `{ action: key }`.
 * - `options.strict`: strict mode for the MCP tools (default `false`); action
 *   entries carry their own `strict`.
 *
 * Never fails; logs one warning per excluded tool.
 *
 * @example
 * ```ts
 * const kit = yield* McpToolkit.make([
 *   { action: "srv-a", tools: [{ name: "send_email", inputSchema: { type: "object" } }] },
 *   { action: "srv-b", tools: [{ name: "send_email", inputSchema: { type: "object" } }] }
 * ])
 * kit.route("srv-b_send_email") // { action: "srv-b", tool: "send_email" }
 * ```
 *
 * @since 0.1.0
 */
export const make = (
  servers: ReadonlyArray<ServerTools>,
  options?: { readonly strict?: boolean | undefined; readonly actions?: ReadonlyArray<Tool.Entry> | undefined }
): Effect.Effect<McpToolkit> =>
  Effect.gen(function* () {
    const routes = new Map<string, Route>()
    const entries: Array<Tool.Entry> = []
    for (const entry of options?.actions ?? []) {
      if (!routes.has(entry.key)) routes.set(entry.key, { action: entry.key })
      entries.push(entry)
    }
    for (const server of servers) {
      for (const tool of server.tools) {
        const key = `${server.action}/${tool.name}`
        if (!routes.has(key)) routes.set(key, { action: server.action, tool: tool.name })
        entries.push({
          key,
          description: tool.description ?? tool.title ?? `${tool.name} (MCP tool of ${server.action})`,
          parameters: tool.inputSchema,
          strict: options?.strict
        })
      }
    }
    const kit = Tool.toolkit(entries)
    for (const excluded of kit.excluded) {
      const what = routes.get(excluded.key)?.tool === undefined ? "Action" : "MCP tool"
      yield* Effect.logWarning(`${what} ${excluded.key} is not offered to the model: ${excluded.reason}`)
    }
    return {
      ...kit,
      route: (name: string) => {
        const key = kit.keyOf(name)
        return key === undefined ? undefined : routes.get(key)
      }
    }
  })
