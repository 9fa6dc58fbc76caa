/**
 * Approvals: an action that requires approval runs only when
 * the call carries an approved, unexpired, unused token bound to this agent,
 * action (and tool) and arguments. A call without one fails with APPROVAL and
 * requests a pending token, which an approver then approves or rejects.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ApprovalCheck, ApprovalRequired, ValidationError } from "./ActionError.ts"
import * as ApprovalStore from "./ApprovalStore.ts"

/**
 * The parameter under which a call carries its approval token. It is removed
 * from the arguments before any other step sees them, and never appears in a
 * tool's schema.
 *
 * @category constants
 * @since 0.1.0
 */
export const reservedParameter = "_approval_token"

/**
 * What `Action.requireApproval` attaches to an action: the `reason` shown to
 * the approver, and the time to live of a token requested for a call (`ttl`,
 * default 15 minutes, counted on Effect's `Clock` from the request).
 *
 * @category models
 * @since 0.1.0
 */
export interface Policy {
  readonly reason: string
  readonly ttl?: Duration.Input | undefined
}

/**
 * Splits the reserved approval parameter from raw call arguments. The
 * returned `params` never contain it; the caller's object is not mutated.
 * `requestToken` (from `ActionRequest.approvalToken`) wins over the
 * parameter; a parameter that is not a string counts as a token no store
 * knows (`""`).
 *
 * @since 0.1.0
 */
export const strip = (
  params: Readonly<Record<string, unknown>>,
  requestToken?: string
): { readonly params: Readonly<Record<string, unknown>>; readonly token: string | undefined } => {
  if (!Object.hasOwn(params, reservedParameter)) return { params, token: requestToken }
  const { [reservedParameter]: raw, ...rest } = params
  return { params: rest, token: requestToken ?? (typeof raw === "string" ? raw : "") }
}

/**
 * The binding of a call: agent, action, tool (mcpTool actions) and the
 * digest of the raw arguments without the token (for an mcpTool action
 * these are `{ tool, arguments }`). Fails `ValidationError` when the
 * arguments cannot be serialised (a cycle).
 *
 * @since 0.1.0
 */
export const bindingOf = (
  agentId: string,
  action: string,
  tool: string | undefined,
  params: Readonly<Record<string, unknown>>
): Effect.Effect<ApprovalStore.Binding, ValidationError> => {
  const binding = bind(agentId, action, tool, params)
  return binding instanceof ValidationError ? Effect.fail(binding) : Effect.succeed(binding)
}

const bind = (
  agentId: string,
  action: string,
  tool: string | undefined,
  params: Readonly<Record<string, unknown>>
): ApprovalStore.Binding | ValidationError => {
  try {
    return { agentId, action, tool, argumentsDigest: ApprovalStore.digest(params) }
  } catch (cause) {
    return new ValidationError({
      action,
      message: `${action}: the arguments cannot be bound to an approval token: ${cause instanceof Error ? cause.message : String(cause)}`,
      issues: [{ path: "", message: "the arguments cannot be serialised as JSON" }],
      cause
    })
  }
}

/**
 * The store a call uses: the `ApprovalStore` provided to the call, else the
 * agent's own (`fallback`).
 *
 * @since 0.1.0
 */
export const storeOf = (
  fallback: ApprovalStore.ApprovalStore["Service"]
): Effect.Effect<ApprovalStore.ApprovalStore["Service"]> =>
  Effect.map(
    Effect.serviceOption(ApprovalStore.ApprovalStore),
    Option.getOrElse(() => fallback)
  )

/**
 * What an agent uses when no `ApprovalStore` is provided to a call: the one
 * provided where the agent is made, else a fresh in-memory store of its own.
 *
 * @since 0.1.0
 */
export const defaultStore: Effect.Effect<ApprovalStore.ApprovalStore["Service"]> = Effect.map(
  Effect.serviceOption(ApprovalStore.ApprovalStore),
  Option.getOrElse(ApprovalStore.makeMemory)
)

/**
 * Step 2 for one call. Without a policy it succeeds (a token given anyway is
 * ignored). With one:
 *
 * - no token: a pending token is requested for this call's binding, with the
 *   policy's `reason` and `ttl`, and the call fails `ApprovalRequired` with
 *   `check: "missing"` and that `pendingTokenId`;
 * - a token: it is consumed against this call's binding; a refusal fails
 *   `ApprovalRequired` with the store's `check` (`unknown`, `pending`,
 *   `rejected`, `expired`, `used`, `agent`, `action`, `arguments`).
 *
 * `params` are the raw arguments without the token. Uses the `ApprovalStore`
 * provided to the call, else `store`.
 *
 * @since 0.1.0
 */
export const verify = (options: {
  readonly agentId: string
  readonly action: string
  readonly tool: string | undefined
  readonly policy: Policy | undefined
  readonly token: string | undefined
  readonly params: Readonly<Record<string, unknown>>
  readonly store: ApprovalStore.ApprovalStore["Service"]
}): Effect.Effect<void, ApprovalRequired | ValidationError> => {
  const { policy, action, token } = options
  if (policy === undefined) return Effect.void
  const binding = bind(options.agentId, action, options.tool, options.params)
  if (binding instanceof ValidationError) return Effect.fail(binding)
  const refused = (check: ApprovalCheck, pendingTokenId?: string) =>
    new ApprovalRequired({
      action,
      message: `${action} requires approval (${policy.reason}): ${ApprovalStore.describeCheck(check)}`,
      reason: policy.reason,
      check,
      ...(pendingTokenId === undefined ? {} : { pendingTokenId })
    })
  return Effect.flatMap(storeOf(options.store), (store) =>
    token === undefined
      ? Effect.flatMap(store.request(binding, policy.reason, policy.ttl ?? ApprovalStore.defaultTtl), (pending) =>
          Effect.fail(refused("missing", pending))
        )
      : Effect.mapError(Effect.asVoid(store.consume(token, binding)), (refusal) => refused(refusal.check))
  )
}
