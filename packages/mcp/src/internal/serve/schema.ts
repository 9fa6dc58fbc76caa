/**
 * The input schema a served tool declares: `ToolSchema.served` of its
 * action's parameters — JSON Schema 2020-12 (`$schema`), `$defs` kept,
 * every Effect struct closed — and, for an action that needs approval, the
 * optional `_approval_token` a client that can only send arguments uses to
 * present an approved token. None of this reaches a model: a chat turn
 * offers `agent.tools`, unchanged.
 */
import { Approval, type LanguageModel, ToolSchema } from "@rolecraft/core"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"

/**
 * The served form of a tool: from its action's own parameters (`source`)
 * when known, else from what the agent offers (`offered`, an mcpTool
 * action's fixed schema).
 */
export const served = (
  source: Schema.Top | undefined,
  offered: LanguageModel.JsonSchemaObject,
  approval: { readonly reason: string } | undefined
): Record<string, unknown> => {
  const fromSource = source === undefined ? undefined : ToolSchema.served(source)
  const projected = fromSource !== undefined && Result.isSuccess(fromSource) ? fromSource : ToolSchema.served(offered)
  const schema: Record<string, unknown> = Result.isSuccess(projected) ? { ...projected.success } : { ...offered }
  if (approval === undefined) return schema
  return {
    ...schema,
    properties: {
      ...((schema.properties ?? {}) as Record<string, unknown>),
      [Approval.reservedParameter]: {
        type: "string",
        description: `An approved approval token for this call (the action needs approval: ${approval.reason}). Leave it out to be asked, or to get the pending token id to approve.`
      }
    }
  }
}
