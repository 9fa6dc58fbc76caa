/**
 * An agent's toolkit: what a model (a chat turn) or an outside offer (`agent.tools`, which an MCP server and an
 * effect/ai toolkit offer in turn) is given of the agent, built by the one toolkit builder. Offering is a filter,
 * not a decision: an action whose name the agent's authority denies is left out, and every call still runs
 * through the pipeline, whose first step decides. Lists each mcpTool action's server tools when a chat turn
 * offers them one by one (the connection caches the list); a server that cannot list them is left out of that
 * step with a logged warning. Registration has already refused parameters that cannot be projected, so only a
 * name clash the builder cannot resolve (repeated hash collisions) could leave an action out.
 */
import * as Effect from "effect/Effect"
import type * as Action from "../../Action.ts"
import type { ActionTool } from "../../ActionTool.ts"
import type { ToolDefinition } from "../../McpClient.ts"
import type { AgentRuntime } from "../executor/runtime.ts"
import * as McpTool from "../executor/mcpTool.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import { actionEntry, approvalOf, type Entry, offer, type Toolkit } from "../tool/toolkit.ts"

/** What the builder needs of an agent: its actions by name, compiled authority and runtime (MCP connections). */
export interface Source {
  readonly actions: ReadonlyMap<string, { readonly action: Action.Any }>
  readonly authority: AuthorityKernel.Compiled
  readonly runtime: AgentRuntime
}

const none: ReadonlyArray<ToolDefinition> = []
const noLists: ReadonlyArray<ReadonlyArray<ToolDefinition>> = []

/**
 * The toolkit of one agent, as a function of `strict`: every action not `excludeFromModel` whose name its
 * authority allows, in declaration order.
 *
 * - `expandMcp: false`: an mcpTool action is one tool with its fixed `{ tool, arguments }` parameters.
 * - `expandMcp: true`: the other actions first, then every tool of each mcpTool action's server keyed
 *   `<action>/<tool>`, each filtered by authority (`action/tool`); an mcpTool action whose name authority
 *   denies is listed only when an allow list could let one of its tools through. A server that cannot list
 *   its tools (unreachable, no `McpClient`) is left out of that call with a logged warning.
 *
 * The action entries are computed once per agent; the toolkit is rebuilt only when `strict` or an MCP list
 * changes (lists are cached by the connections, so an unchanged list is the same array). Never fails.
 */
export const make = (
  source: Source,
  options: { readonly expandMcp: boolean }
): ((strict: boolean) => Effect.Effect<Toolkit>) => {
  const { authority } = source
  const offered = [...source.actions].filter(([, { action }]) => action.policies.excludeFromModel !== true)
  const expanded = (action: Action.Any) => options.expandMcp && action._tag === "mcpTool"
  const actionEntries = (strict: boolean): ReadonlyArray<Entry> =>
    offered
      .filter(([name, { action }]) => !expanded(action) && AuthorityKernel.allows(authority, name))
      .map(([name, { action }]) => actionEntry(name, action, strict))
  const servers = offered.flatMap(([name, { action }]) =>
    action._tag === "mcpTool" &&
    expanded(action) &&
    (AuthorityKernel.allows(authority, name) || authority.allow.length > 0)
      ? [{ name, action }]
      : []
  )

  const listed = (name: string, action: Action.McpTool<any, any>) =>
    McpTool.listTools({ name, action, agent: source.runtime }).pipe(
      Effect.catch((error) =>
        Effect.as(Effect.logWarning(`Chat: the tools of ${name} are not offered in this step: ${error.message}`), none)
      )
    )

  let cached:
    | {
        readonly strict: boolean
        readonly lists: ReadonlyArray<ReadonlyArray<ToolDefinition>>
        readonly kit: Toolkit
      }
    | undefined

  const build = (strict: boolean, lists: ReadonlyArray<ReadonlyArray<ToolDefinition>>) => {
    if (
      cached !== undefined &&
      cached.strict === strict &&
      cached.lists.length === lists.length &&
      cached.lists.every((list, i) => list === lists[i])
    ) {
      return Effect.succeed(cached.kit)
    }
    const tools = servers.map(({ name, action }, i) => ({
      action: name,
      tools: (lists[i] ?? none).filter((tool) => AuthorityKernel.allows(authority, name, tool.name)),
      approval: approvalOf(action),
      approves: approvesOf(name, action)
    }))
    return Effect.map(offer(tools, { strict, actions: actionEntries(strict) }), (kit) => {
      cached = { strict, lists, kit }
      return kit
    })
  }

  return (strict) =>
    servers.length === 0
      ? build(strict, noLists)
      : Effect.flatMap(
          Effect.forEach(servers, ({ name, action }) => listed(name, action), { concurrency: "unbounded" }),
          (lists) => build(strict, lists)
        )
}

/** Which of an mcpTool action's tools its approval policy covers (its `when`); `undefined`: all. */
const approvesOf = (name: string, action: Action.McpTool<any, any>) => {
  const policy = action.policies.approval
  return policy?.when === undefined ? undefined : (tool: ToolDefinition) => ApprovalKernel.appliesTo(policy, name, tool)
}

/** Every action not kept from the model whose name the agent's authority allows, in declaration order. */
export const toolsOf = (source: Source): Effect.Effect<ReadonlyArray<ActionTool>> =>
  Effect.map(make(source, { expandMcp: false })(false), (kit) => kit.tools)
