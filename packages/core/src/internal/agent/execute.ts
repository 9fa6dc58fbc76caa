/**
 * The agent's front doors for calls from its user: `executeAction(name, params)` and `execute(request)`.
 * Here a call enters: its approval token comes from outside — the reserved `_approval_token` parameter, or
 * the request's `approvalToken` — and is taken out of the parameters, once, and the call value is made
 * (`pipeline/call.ts`) for the pipeline to run. A call that needs an approval fails with APPROVAL here.
 * `execute` reports the outcome in an `ActionResponse`; only a `RetrievalFailure` (and interruption) escape.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ActionError, RetrievalFailure } from "../../ActionError.ts"
import type { ActionRequest } from "../../ActionRequest.ts"
import type { ActionResponse } from "../../ActionResponse.ts"
import * as Metering from "../events/usage.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import * as Call from "../pipeline/call.ts"
import * as Pipeline from "../pipeline/run.ts"

/** Runs one action by name; `params` may carry the approval token as `_approval_token`. */
export const executeAction = (
  agent: Pipeline.Agent,
  name: string,
  params: Readonly<Record<string, unknown>> = {}
): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const taken = ApprovalKernel.strip(params)
  return Pipeline.run(agent, Call.ofParams(agent.registry, name, taken.params, { token: taken.token }))
}

/**
 * Runs a request and reports it: the request's `approvalToken` wins over a `_approval_token` parameter.
 * Model usage is metered only for llm actions, so other calls pay nothing for it.
 */
export const execute = (
  agent: Pipeline.Agent,
  request: ActionRequest
): Effect.Effect<ActionResponse, RetrievalFailure, any> =>
  Effect.suspend(() => {
    const { params, token } = ApprovalKernel.strip(request.params ?? {}, request.approvalToken)
    const call = Call.ofParams(agent.registry, request.action, params, { token, correlationId: request.correlationId })
    const run = Pipeline.run(agent, call)
    return call.entry?.action._tag === "llm"
      ? Metering.metered(run, (metered, usage) => respond(request, metered, usage))
      : respond(request, run, Effect.succeed(undefined))
  })

const respond = (
  request: ActionRequest,
  run: Effect.Effect<unknown, ActionError | RetrievalFailure, any>,
  usage: Effect.Effect<ActionResponse["usage"]>
): Effect.Effect<ActionResponse, RetrievalFailure, any> =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.result(run)
    const durationMs = (yield* Clock.currentTimeMillis) - start
    const used = yield* usage
    const common = {
      action: request.action,
      durationMs,
      ...(used === undefined ? {} : { usage: used }),
      ...(request.correlationId === undefined ? {} : { correlationId: request.correlationId })
    }
    if (outcome._tag === "Success") {
      return { ...common, success: true, value: outcome.success, error: undefined } as const
    }
    const error = outcome.failure
    if (error._tag === "RetrievalFailure") return yield* Effect.fail(error)
    return { ...common, success: false, value: undefined, error } as const
  })
