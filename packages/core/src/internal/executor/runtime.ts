/**
 * What an executor receives for one attempt of an action, and what the agent
 * holds for its executors. Types only, shared by every executor.
 */
import type * as Action from "../../Action.ts"
import type * as Role from "../../Role.ts"
import type { AttemptTimeout } from "../resilience/runStep.ts"
import type * as Secrets from "../secrets.ts"
import type * as McpConnection from "./mcpTool/connection.ts"

/**
 * What the agent holds for the executors: its id, per-agent resources
 * (`mcp`: its MCP connections, closed with its scope), and the credentials
 * its actions read (`secrets`; a model call it makes scrubs its errors of
 * them).
 */
export interface AgentRuntime {
  readonly id: string
  readonly mcp: McpConnection.Pool
  readonly secrets: Secrets.Read | undefined
}

/**
 * What an executor gets for one attempt. `spec` is the spec of the role the
 * action belongs to (its `model` selects the llm actions' model and
 * temperature); absent means `{}`.
 */
export interface Attempt<X extends Action.Any = Action.Any> {
  readonly name: string
  readonly action: X
  /** The converted arguments (for an mcpTool action, the tool's own). */
  readonly args: Readonly<Record<string, unknown>>
  /** The MCP server's tool, for an mcpTool action. */
  readonly tool?: string | undefined
  /** What the result mapper sees of the arguments (for an mcpTool action, `{ tool, arguments }`); default `args`. */
  readonly view?: Readonly<Record<string, unknown>> | undefined
  readonly context: Omit<Action.Context, "signal">
  readonly agent: AgentRuntime
  readonly spec?: Role.Spec | undefined
  /**
   * The attempt timeout, when the executor bounds the attempt itself (a
   * webService call aborts its request): see {@link AttemptTimeout}. Absent:
   * a timer of the run step bounds the attempt, if anything does.
   */
  readonly timeout?: AttemptTimeout | undefined
  /**
   * The attempt is run exactly once, as soon as it is made (nothing repeats,
   * delays or bounds it), so a local action's function may be called when
   * the attempt is made and a plain value returned as a settled `Exit`.
   */
  readonly now?: boolean | undefined
  /** For an MCP tool whose call was approved: the digest of the tool's definition the approval is bound to. */
  readonly approved?: string | undefined
}
