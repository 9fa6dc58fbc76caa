/**
 * What the pipeline reads of each of an agent's actions: prepared once, when the agent is made
 * (`agent/register.ts`), so a call's steps only read it.
 */
import type * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"
import type * as Action from "../../Action.ts"
import type { ActionError } from "../../ActionError.ts"
import type * as Approval from "../../Approval.ts"
import type * as Guardrail from "../../Guardrail.ts"
import type * as Knowledge from "../../Knowledge.ts"
import type * as Role from "../../Role.ts"
import type * as KnowledgeKernel from "./retrieval.ts"
import type { Definition } from "../approvals/definition.ts"

/**
 * What the agent prepares once per action, so a call's steps only read it.
 */
export interface Registered {
  readonly name: string
  readonly action: Action.Any
  readonly role: Role.Any
  readonly state: Ref.Ref<unknown>
  readonly guardrails: Guardrail.Policy | undefined
  readonly approval: { readonly agentId: string; readonly action: string; readonly policy: Approval.Policy | undefined }
  readonly retrieval: Omit<Parameters<typeof KnowledgeKernel.retrieve>[0], "args">
  /** Its calls' `rolecraft.*` span attributes (a call with a correlation id adds it to a copy). */
  readonly attributes: Readonly<Record<string, string>>
  /** The span and metrics of a direct call (no correlation id, no tool call, content not traced), made once. */
  readonly telemetry: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Step 7 for one call: the executor inside the action's resilience policy, then its fallback. `args` are
   * the converted arguments (an MCP tool's own, with its `tool`); `view` is what the result mapper and the
   * fallback see of them (for an MCP tool, `{ tool, arguments }`).
   */
  readonly run: (
    args: Readonly<Record<string, unknown>>,
    knowledge: ReadonlyArray<Knowledge.Passage>,
    tool: string | undefined,
    view: Readonly<Record<string, unknown>>,
    approved?: string | undefined
  ) => Effect.Effect<unknown, ActionError, any>
  /** How the approval step reads the tool's definition, for an mcpTool action. */
  readonly definition?: Definition | undefined
}

/** An agent's actions by name, in declaration order (its MCP servers last). */
export type Registry = ReadonlyMap<string, Registered>
