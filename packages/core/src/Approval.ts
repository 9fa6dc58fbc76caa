/**
 * Approvals (SPEC §9 step 2): an action that requires approval runs only when
 * the call carries an approved, unexpired, unused token bound to this agent,
 * action (and tool) and arguments. Mirrors the seeds' `@ApprovalRequired`.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { Effect } from "effect"
import { ApprovalRequired } from "./ActionError.ts"

/**
 * The parameter under which a call carries its approval token. It is removed
 * from the arguments before any other step sees them, and never appears in a
 * tool's schema.
 *
 * @since 0.1.0
 */
export const reservedParameter = "_approval_token"

/**
 * What `Action.requireApproval` attaches to an action: the `reason` shown to
 * the approver, and the token's time to live (`ttl`, default 15 minutes).
 *
 * @since 0.1.0
 */
export interface Policy {
  readonly reason: string
  readonly ttl?: Duration.Input | undefined
}

/**
 * Splits the reserved approval parameter from raw call arguments. The
 * returned `params` never contain it; the caller's object is not mutated.
 *
 * @since 0.1.0
 */
export const strip = (
  params: Readonly<Record<string, unknown>>,
  requestToken?: string
): { readonly params: Readonly<Record<string, unknown>>; readonly token: string | undefined } => {
  if (!Object.hasOwn(params, reservedParameter)) return { params, token: requestToken }
  const { [reservedParameter]: raw, ...rest } = params
  return { params: rest, token: requestToken ?? (typeof raw === "string" ? raw : undefined) }
}

/**
 * Checks the approval step for one call. Without a policy it succeeds. With
 * one, it fails closed with `ApprovalRequired` until an approval store is
 * wired in by the agent.
 *
 * @since 0.1.0
 */
export const verify = (options: {
  readonly action: string
  readonly policy: Policy | undefined
  readonly token: string | undefined
}): Effect.Effect<void, ApprovalRequired> =>
  options.policy === undefined
    ? Effect.void
    : Effect.fail(
        new ApprovalRequired({
          action: options.action,
          message: `${options.action} requires approval: ${options.policy.reason}`,
          reason: options.policy.reason,
          check: options.token === undefined ? "missing" : "unknown"
        })
      )
