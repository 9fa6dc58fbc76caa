/**
 * An agent's actions as an `effect/ai` `Toolkit` with its handler layer:
 * effect/ai's `LanguageModel.generateText` and `Chat` can offer a role's
 * actions to any effect/ai model, and every call they resolve runs through
 * the agent's whole pipeline (authority, approval, hooks, guardrails,
 * conversion, contracts, retrieval, resilience, fallback).
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { EffectAiToolkit } from "@rolecraft/effect-ai"
 * import { Effect, Schema } from "effect"
 * import { LanguageModel } from "effect/ai"
 *
 * const Travel = Role.make({
 *   identity: { name: "travel", goal: "Plan trips", domain: "travel" },
 *   actions: {
 *     nights: Action.local({
 *       description: "Count the nights between two ISO dates",
 *       parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *       run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 *     })
 *   }
 * })
 *
 * // needs an effect/ai LanguageModel; each tool call it resolves runs through the agent's pipeline
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
 *   const { toolkit, layer } = EffectAiToolkit.make(agent)
 *   const response = yield* LanguageModel.generateText({ prompt: "Nights from 2026-05-12 to 2026-05-15?", toolkit }).pipe(
 *     Effect.provide(layer) // the handlers of the toolkit's tools
 *   )
 *   return response.text
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import {
  type ActionError,
  type ActionResponse,
  type ActionTool as AgentTool,
  type Agent,
  Approval,
  ApprovalStore
} from "@rolecraft/core"
import { Tool, Toolkit } from "effect/ai"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * What the model is told when a call fails: the same
 * `{"error":{"category","message"}}` a Rolecraft chat turn sends, with one of
 * the nine categories, or `"RETRIEVAL"` for a knowledge retrieval failure.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Struct({
  error: Schema.Struct({ category: Schema.String, message: Schema.String })
})

/**
 * @category models
 * @since 0.1.0
 */
export type Failure = typeof Failure.Type

const makeTool = (tool: AgentTool.ActionTool, needsApproval: Tool.NeedsApproval<typeof Schema.Unknown> | undefined) =>
  Tool.dynamic(tool.name, {
    description: tool.description,
    parameters: tool.parameters,
    success: Schema.Unknown,
    failure: Failure,
    failureMode: "return",
    ...(needsApproval === undefined ? {} : { needsApproval })
  })

/**
 * One action as an effect/ai tool: a dynamic tool whose parameters are the
 * action's projected JSON Schema (effect/ai does not decode them; the
 * pipeline converts them), whose success is the action's result and whose
 * failure is a {@link Failure} returned to the model (`failureMode:
 * "return"`).
 *
 * @category models
 * @since 0.1.0
 */
export type ActionTool = ReturnType<typeof makeTool>

/**
 * The tools of an agent, by tool name.
 *
 * @category models
 * @since 0.1.0
 */
export type Tools = Record<string, ActionTool>

/**
 * What {@link make} returns: the `toolkit` to give `generateText` or a
 * `Chat`, and the `layer` of its handlers (it needs what the agent's local
 * actions require).
 *
 * @category models
 * @since 0.1.0
 */
export interface AgentToolkit<R> {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly layer: Layer.Layer<Tool.HandlersFor<Tools>, never, R>
}

/**
 * Options of {@link make}.
 *
 * - `approver`: who approvals given through effect/ai are recorded as in the
 *   agent's approval store (default `"effect/ai"`).
 * - `maxPendingApprovals`: how many calls waiting for an effect/ai approval
 *   are remembered at once (default 1,000); past it the oldest is forgotten,
 *   and approving it later answers APPROVAL instead of running it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly approver?: string | undefined
  readonly maxPendingApprovals?: number | undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A model's arguments, where they enter: a model cannot present an approval token, so the reserved
 * parameter is dropped here (an approved call gets its token from the store, as `approvalToken`).
 */
const argumentsOf = (params: unknown): Record<string, unknown> | undefined => {
  if (params === undefined || params === null) return {}
  if (!isRecord(params)) return undefined
  const { [Approval.reservedParameter]: _, ...rest } = params
  return rest
}

const failure = (category: string, message: string): Failure => ({ error: { category, message } })

/** What the toolkit remembers of a call id effect/ai asked a decision for. */
type Asked =
  | { readonly _tag: "Asked"; readonly tokenId: string; readonly call: string }
  | { readonly _tag: "Ambiguous" }

const describe = (u: unknown): string => (Array.isArray(u) ? "an array" : u === null ? "null" : `a ${typeof u}`)

const outcome = <R>(
  run: Effect.Effect<ActionResponse.ActionResponse, ActionError.RetrievalFailure, R>
): Effect.Effect<unknown, Failure, R> =>
  Effect.flatMap(
    Effect.catch(run, (error) => Effect.fail(failure("RETRIEVAL", error.message))),
    (response) =>
      response.success
        ? Effect.succeed(response.value)
        : Effect.fail(failure(response.error.category, response.error.message))
  )

/**
 * An agent's actions as an effect/ai `Toolkit`, and the layer of its
 * handlers.
 *
 * - Tools: the agent's `tools` (its actions not kept from the model that its
 *   authority allows), each named as the agent names it, with its
 *   description and the JSON Schema of its parameters; effect/ai does not
 *   validate arguments, the pipeline does (its conversions and its
 *   VALIDATION messages naming each field).
 * - Calls: each handler runs `agent.execute` with the model's arguments
 *   (`_approval_token` dropped: a model cannot present one) and the tool
 *   call id as correlation id. A success is the action's result; a failure
 *   is returned to the model as a {@link Failure}, never an error of the
 *   `generateText` call. Arguments that are not an object are VALIDATION.
 * - Approval: an action that requires approval is marked `needsApproval`,
 *   so effect/ai asks for a decision (a `tool-approval-request` part)
 *   instead of running it. Asking runs the pipeline up to its approval step,
 *   which requests a pending token in the agent's approval store (the
 *   `ApprovalStore` provided to the call, else `agent.approvals`) bound to
 *   this call's exact arguments. When effect/ai then runs an approved call
 *   (the same call id, action and arguments), that token is approved as
 *   `options.approver` and the call runs with it;
 *   a denied call never runs (effect/ai answers it itself). A handler call
 *   effect/ai never asked about (a direct `handle`, a call id asked for other
 *   arguments, or after the process restarted) gets the pipeline's own
 *   answer: APPROVAL with a fresh pending token, and nothing runs. The
 *   handler cannot see effect/ai's decision itself: it trusts that effect/ai
 *   runs an asked call only once approved, so do not `handle` an asked call
 *   yourself.
 * - Call ids: effect/ai matches a decision to its call by the call's id
 *   alone, and the ids are the model's (this toolkit cannot give them fresh
 *   ones, as a Rolecraft chat turn does). An id asked for two different
 *   calls while the first still waits — a model that repeats an id in one
 *   response, or sends `""` on every call — can no longer be told apart, so
 *   neither of its calls runs, whatever is decided: each is answered APPROVAL
 *   saying so. A denied call never runs.
 *
 * The tool list is read once, when this is called.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chat } from "effect/ai"
 * import { Agent } from "@rolecraft/core"
 * import { EffectAiToolkit } from "@rolecraft/effect-ai"
 *
 * declare const agent: Agent.Agent
 *
 * const { toolkit, layer } = EffectAiToolkit.make(agent)
 * const answer = Effect.gen(function* () {
 *   const chat = yield* Chat.empty
 *   const response = yield* chat.generateText({ prompt: "How many nights?", toolkit })
 *   return response.text
 * }).pipe(Effect.provide(layer))
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <A extends Agent.Any>(agent: A, options?: Options): AgentToolkit<Agent.Services<A>> =>
  toolkitOf(agent as unknown as Agent.Agent<any, Agent.Services<A>>, options)

const toolkitOf = <R>(agent: Agent.Agent<any, R>, options: Options | undefined): AgentToolkit<R> => {
  const approver = options?.approver ?? "effect/ai"
  const capacity = Math.max(1, options?.maxPendingApprovals ?? 1000)
  // Calls effect/ai asked a decision for: tool call id → the pending token the pipeline requested, and the
  // action and arguments it was asked for (a call id reused by another conversation never takes its token).
  // An id asked for two different calls is ambiguous: effect/ai matches a decision to its call by id alone,
  // so no decision given under that id can be told to belong to one of them, and neither runs.
  const pending = new Map<string, Asked>()
  const callKey = (action: string, args: Record<string, unknown>) => JSON.stringify([action, args])
  const remember = (toolCallId: string, asked: Asked) => {
    pending.delete(toolCallId)
    pending.set(toolCallId, asked)
    if (pending.size > capacity) pending.delete(pending.keys().next().value as string)
  }

  // The pipeline stops at its approval step when no token is given, before anything that
  // needs the local actions' services runs, so asking needs none of `R`.
  const ask = (action: string, params: unknown, toolCallId: string): Effect.Effect<boolean> => {
    const args = argumentsOf(params)
    if (args === undefined) return Effect.succeed(false)
    const call = callKey(action, args)
    const before = pending.get(toolCallId)
    if (before !== undefined && (before._tag === "Ambiguous" || before.call !== call)) {
      remember(toolCallId, { _tag: "Ambiguous" })
      return Effect.succeed(true)
    }
    const request = agent.execute({ action, params: args, correlationId: toolCallId }) as Effect.Effect<
      ActionResponse.ActionResponse,
      ActionError.RetrievalFailure
    >
    return Effect.map(Effect.option(request), (response) => {
      if (Option.isNone(response) || response.value.success) return false
      const error = response.value.error
      if (error._tag !== "ApprovalRequired" || error.check !== "missing" || error.pendingTokenId === undefined) {
        return false
      }
      remember(toolCallId, { _tag: "Asked", tokenId: error.pendingTokenId, call })
      return true
    })
  }

  const tools = agent.tools.map((tool) =>
    makeTool(
      tool,
      tool.approval === undefined ? undefined : (params, context) => ask(tool.action, params, context.toolCallId)
    )
  )
  const toolkit = Toolkit.make(...tools) as unknown as Toolkit.Toolkit<Tools>

  const run = (tool: AgentTool.ActionTool, params: unknown, toolCallId: string | undefined) =>
    Effect.gen(function* () {
      const args = argumentsOf(params)
      if (args === undefined) {
        return yield* Effect.fail(
          failure("VALIDATION", `${tool.action}: arguments must be a JSON object, got ${describe(params)}`)
        )
      }
      const correlation = toolCallId === undefined ? {} : { correlationId: toolCallId }
      const asked = toolCallId === undefined ? undefined : pending.get(toolCallId)
      if (tool.approval !== undefined && asked?._tag === "Ambiguous") {
        return yield* Effect.fail(
          failure(
            "APPROVAL",
            `${tool.action} requires approval (${tool.approval.reason}): the tool call id ${JSON.stringify(toolCallId)} was given to two calls, so no decision can be told to belong to one of them; nothing ran`
          )
        )
      }
      if (toolCallId !== undefined) pending.delete(toolCallId)
      const tokenId = asked?._tag === "Asked" && asked.call === callKey(tool.action, args) ? asked.tokenId : undefined
      if (tool.approval === undefined || tokenId === undefined) {
        return yield* outcome(agent.execute({ action: tool.action, params: args, ...correlation }))
      }
      const store = Option.getOrElse(yield* Effect.serviceOption(ApprovalStore.ApprovalStore), () => agent.approvals)
      const approved = yield* Effect.result(store.approve(tokenId, approver))
      if (approved._tag === "Failure") {
        const refusal = approved.failure
        return yield* Effect.fail(
          refusal._tag === "ApprovalTokenError"
            ? failure(
                "APPROVAL",
                `${tool.action} requires approval (${tool.approval.reason}): ${
                  refusal.check === "decided" ? refusal.message : ApprovalStore.describeCheck(refusal.check)
                }`
              )
            : failure(refusal.category, `${tool.action}: ${refusal.message}`)
        )
      }
      return yield* outcome(
        agent.execute({ action: tool.action, params: args, approvalToken: tokenId, ...correlation })
      )
    })

  // effect/ai keeps the context the layer is built in (which holds `R`) under each handler
  // call's own, so a handler may need `R`; its types only know the tools' requirements.
  const layer = toolkit.toLayer(
    Effect.map(Effect.context<R>(), () => {
      const handlers: Record<string, (params: unknown, handler: Toolkit.HandlerContext<ActionTool>) => unknown> = {}
      for (const tool of agent.tools) {
        handlers[tool.name] = (params, handler) => run(tool, params, handler.toolCallId)
      }
      return handlers as unknown as Toolkit.HandlersFrom<Tools>
    })
  ) as Layer.Layer<Tool.HandlersFor<Tools>, never, R>

  return { toolkit, layer }
}
