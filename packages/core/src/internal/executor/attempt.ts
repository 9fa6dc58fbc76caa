/**
 * What an executor receives for one attempt of an action, and what the agent
 * holds for its executors. Types only, shared by every executor.
 */
import type * as Action from "../../Action.ts"
import type * as Role from "../../Role.ts"
import type * as McpPool from "./mcpPool.ts"

/**
 * What the agent holds for the executors: its id and per-agent resources
 * (`mcp`: its MCP connections, closed with its scope).
 */
export interface AgentRuntime {
  readonly id: string
  readonly mcp: McpPool.Pool
}

/**
 * What an executor gets for one attempt. `spec` is the spec of the role the
 * action belongs to (its `model` selects the llm actions' model and
 * temperature); absent means `{}`.
 */
export interface Attempt<X extends Action.Any = Action.Any> {
  readonly name: string
  readonly action: X
  readonly args: Readonly<Record<string, unknown>>
  readonly context: Omit<Action.Context, "signal">
  readonly agent: AgentRuntime
  readonly spec?: Role.Spec | undefined
}
