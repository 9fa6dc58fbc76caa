/**
 * The tools a chat turn offers: the agent's actions that are not
 * `excludeFromModel` and not mcpTool actions, plus every tool of its mcpTool
 * actions keyed `<action>/<tool>`, each filtered by authority, in one
 * `McpToolkit` so names are unique across both. The action entries are
 * computed once per agent; the toolkit is rebuilt only when an MCP list
 * changes (lists are cached by the connections, so an unchanged list is the
 * same array).
 */
import * as Effect from "effect/Effect"
import type * as Action from "../../Action.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import type { ToolDefinition } from "../../McpClient.ts"
import * as McpToolkit from "./mcpToolkit.ts"
import type * as Tool from "../schema/tool.ts"
import type { AgentRuntime } from "../executor/attempt.ts"
import * as McpTool from "../executor/mcpTool.ts"

/** What the toolkit needs of an agent. */
export interface Source {
  readonly actions: ReadonlyMap<string, { readonly action: Action.Any }>
  readonly authority: AuthorityKernel.Compiled
  readonly runtime: AgentRuntime
}

const none: ReadonlyArray<ToolDefinition> = []
const noLists: ReadonlyArray<ReadonlyArray<ToolDefinition>> = []

/**
 * The toolkit of one agent, as a function of `strict`. A server that cannot
 * list its tools (unreachable, no `McpClient`) is left out of that call with
 * a logged warning; the others are still offered. Never fails.
 */
export const make = (source: Source): ((strict: boolean) => Effect.Effect<McpToolkit.McpToolkit>) => {
  const { authority } = source
  const offered = [...source.actions].filter(([, { action }]) => action.policies.excludeFromModel !== true)
  const actionEntries = (strict: boolean): ReadonlyArray<Tool.Entry> =>
    offered
      .filter(([name, { action }]) => action._tag !== "mcpTool" && AuthorityKernel.allows(authority, name))
      .map(([name, { action }]) => ({
        key: name,
        description: action.description,
        parameters: action.parameters,
        strict
      }))
  // An mcpTool action whose name authority denies, with no allow list that
  // could let one of its tools through, is not even listed.
  const servers = offered.flatMap(([name, { action }]) =>
    action._tag === "mcpTool" && (AuthorityKernel.allows(authority, name) || authority.allow.length > 0)
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
        readonly kit: McpToolkit.McpToolkit
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
    const tools = servers.map(({ name }, i) => ({
      action: name,
      tools: (lists[i] ?? none).filter((tool) => AuthorityKernel.allows(authority, name, tool.name))
    }))
    return Effect.map(McpToolkit.make(tools, { strict, actions: actionEntries(strict) }), (kit) => {
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
