/**
 * One of an agent's actions as a tool: what a model (or an MCP client, or an
 * effect/ai toolkit) is offered of it, and the action a call of it runs.
 * `agent.tools` lists them; a chat turn offers the same, with each of an MCP
 * server's tools on its own.
 *
 * @example
 * ```ts
 * import type { ActionTool, Agent } from "@rolecraft/core"
 *
 * declare const agent: Agent.Agent
 * // what the agent offers, and which of its tools need a person's approval
 * const gated = agent.tools.filter((tool: ActionTool.ActionTool) => tool.approval !== undefined).map((tool) => tool.name)
 * ```
 *
 * @since 0.3.0
 */
import type * as LanguageModel from "./LanguageModel.ts"
import type * as ToolHints from "./ToolHints.ts"

/**
 * One of the agent's actions as a tool (see `agent.tools`): a
 * `LanguageModel.Tool` — what a provider is sent — and the action a call of
 * it runs.
 *
 * - `name`: the tool's name, valid for model APIs (`^[a-zA-Z0-9_-]{1,64}$`)
 *   and unique among the agent's tools; the action name itself when it is
 *   already valid.
 * - `description`: the action's description.
 * - `parameters`: the JSON Schema of its arguments as a model is shown it —
 *   an object schema with `properties`, no `$ref` left, `_approval_token`
 *   never listed.
 * - `strict`: whether the provider's strict mode is asked for (`false` in
 *   `agent.tools`).
 * - `action`: the action it runs (pass it to `agent.execute`).
 * - `tool`: the MCP server's own tool name when the tool is one of an
 *   mcpTool action's server tools (a chat turn offers them one by one);
 *   absent in `agent.tools`, which offers an mcpTool action as one tool.
 * - `approval`: the action's approval reason when it requires approval
 *   (`Action.requireApproval`); a call then needs an approved token.
 *
 * @category tools
 * @since 0.3.0
 */
export interface ActionTool extends LanguageModel.Tool {
  readonly action: string
  readonly tool?: string | undefined
  readonly approval: { readonly reason: string } | undefined
  readonly hints?: ToolHints.Hints | undefined
}
