/**
 * Hooks around the steps of a chat turn: listing the tools a model call is
 * offered, each model call, and each tool call. A hook gets the step and the
 * effect that performs it and returns an effect with the same result, so it
 * may run the step as it is, inside something else, or give back a result
 * recorded earlier (how `@rolecraft/durable` makes each step of a turn an
 * activity of a workflow). Given to a turn as its `steps` chat option.
 *
 * @example
 * ```ts
 * import type { Chat, StepHooks } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * // log each model call and tool call of a turn, and run it as it is
 * const logged: StepHooks.StepHooks<Chat.ToolAnswer> = {
 *   model: (step, call) => Effect.andThen(Effect.log(`model call ${step.step}`), call),
 *   tool: (step, call) => Effect.andThen(Effect.log(`tool call ${step.toolCallId} (${step.name})`), call)
 * }
 * // agent.chat("Plan a trip", { steps: logged })
 * ```
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import type { ActionError } from "./ActionError.ts"
import type * as ModelResponse from "./ModelResponse.ts"

/**
 * One step of a chat turn, as {@link StepHooks} see it. `step` is the model
 * call's number in the turn (1-based, counted across an approval pause).
 *
 * - `Tools`: listing the tools offered to model call `step`;
 * - `Model`: model call `step`;
 * - `Tool`: running tool call `toolCallId` (tool `name`) of step `step`
 *   through the agent's pipeline; `decided` when it runs after an approval
 *   decision, on `resume` (and `resumed` when it resumes an inner agent's
 *   turn).
 *
 * @category models
 * @since 0.3.0
 */
export type Step =
  | { readonly _tag: "Tools"; readonly step: number }
  | { readonly _tag: "Model"; readonly step: number }
  | {
      readonly _tag: "Tool"
      readonly step: number
      readonly toolCallId: string
      readonly name: string
      readonly decided: boolean
      /**
       * When the call resumes the turn of an agent used as an action: the
       * ids of that agent's calls decided (`"call_7,call_9"`), which tell one
       * resumption of the call from the next (it may pause again).
       */
      readonly resumed?: string | undefined
    }

/**
 * Hooks around the steps of a chat turn (the `steps` chat option). Each gets
 * the step and the effect that performs it, and returns an effect with the
 * same result: it may run it as it is, run it inside something else, or give
 * back a result recorded earlier — what `@rolecraft/durable` does to make
 * each model call and tool call an activity of a workflow, stored and never
 * run again on a replay. A hook left out runs its steps as they are.
 *
 * - `tools`: the names of the tools offered to a model call; the turn offers
 *   (and routes) only the names the hook returns that the agent still has,
 *   so a replay sees the list recorded the first time.
 * - `model`: one model call and its response (or its `ActionError`). The
 *   call records its tokens in the turn's usage meter
 *   (`LanguageModel.UsageMeter`); a hook that gives back a recorded response
 *   records them itself.
 * - `tool`: one tool call and its answer (a failing call is an answer, not a
 *   failure); `Answer` is what a tool call gives the turn, `Chat.ToolAnswer`
 *   for the `steps` chat option.
 *
 * @category models
 * @since 0.3.0
 */
export interface StepHooks<Answer> {
  readonly tools?:
    | (<R>(
        step: Extract<Step, { readonly _tag: "Tools" }>,
        list: Effect.Effect<ReadonlyArray<string>, never, R>
      ) => Effect.Effect<ReadonlyArray<string>, never, R>)
    | undefined
  readonly model?:
    | (<R>(
        step: Extract<Step, { readonly _tag: "Model" }>,
        call: Effect.Effect<ModelResponse.Response, ActionError, R>
      ) => Effect.Effect<ModelResponse.Response, ActionError, R>)
    | undefined
  readonly tool?:
    | (<R>(
        step: Extract<Step, { readonly _tag: "Tool" }>,
        call: Effect.Effect<Answer, never, R>
      ) => Effect.Effect<Answer, never, R>)
    | undefined
}
