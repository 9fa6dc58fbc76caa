/**
 * The binding of a call to an approval token: the agent, the action (and MCP tool) and the SHA-256 of the
 * canonical JSON of the call's raw arguments without the token. Made once per call by the pipeline's call
 * value, and by `Approval.bindingOf` for whoever binds a call themselves.
 */
import * as Result from "effect/Result"
import { ValidationError } from "../../ActionError.ts"
import * as ApprovalStore from "../../ApprovalStore.ts"

/** The binding of a call, or VALIDATION when its arguments cannot be serialised (a cycle). */
export const bind = (
  agentId: string,
  action: string,
  tool: string | undefined,
  params: Readonly<Record<string, unknown>>
): Result.Result<ApprovalStore.Binding, ValidationError> => {
  try {
    return Result.succeed({ agentId, action, tool, argumentsDigest: ApprovalStore.digest(params) })
  } catch (cause) {
    return Result.fail(
      new ValidationError({
        action,
        message: `${action}: the arguments cannot be bound to an approval token: ${cause instanceof Error ? cause.message : String(cause)}`,
        issues: [{ path: "", message: "the arguments cannot be serialised as JSON" }],
        cause
      })
    )
  }
}
