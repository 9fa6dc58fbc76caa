/**
 * A request to run one action by name (`agent.execute(request)`), for
 * callers that want failures reported in an `ActionResponse` rather than in
 * the error channel.
 *
 * @example
 * ```ts
 * import { ActionRequest, type Agent } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const agent: Agent.Agent
 *
 * const program = Effect.gen(function* () {
 *   const response = yield* agent.execute(ActionRequest.make("nights", { checkIn: "2026-05-12", checkOut: "2026-05-15" }))
 *   return response.success ? response.value : response.error.message
 * })
 * ```
 *
 * @since 0.1.0
 */

/**
 * - `action`: the action's name.
 * - `params`: raw arguments (converted in the pipeline); default `{}`.
 * - `approvalToken`: an approval token, instead of the reserved
 *   `_approval_token` parameter.
 * - `correlationId`: echoed in events and spans.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionRequest {
  readonly action: string
  readonly params?: Readonly<Record<string, unknown>> | undefined
  readonly approvalToken?: string | undefined
  readonly correlationId?: string | undefined
}

/**
 * Makes a request from an action name and its arguments.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActionRequest, type Agent } from "@rolecraft/core"
 *
 * const ask = (agent: Agent.Agent) =>
 *   Effect.gen(function* () {
 *     const response = yield* agent.execute(ActionRequest.make("nights", { checkIn: "2026-05-12", checkOut: "2026-05-15" }))
 *     return response.success ? response.value : response.error?.category
 *   })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  action: string,
  params: Readonly<Record<string, unknown>> = {},
  options?: { readonly approvalToken?: string | undefined; readonly correlationId?: string | undefined }
): ActionRequest => ({ action, params, ...options })
