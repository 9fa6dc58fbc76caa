/**
 * The bodies of composed actions. An agent used as an action runs one chat turn of its agent (or resumes the
 * paused one) and gives back its answer — the decoded `output` when it asks for one, else the text; a pause
 * of the inner turn reaches the calling turn through its {@link Nesting.Call}, as an APPROVAL failure of the
 * call. A handoff action only tells the calling turn where the conversation goes. Refuses, as EXECUTION
 * naming the path of agents, a call nested deeper than the tree's bound or past its model calls, and an inner
 * turn that reached its step limit.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ActionError, ApprovalRequired, ExecutionFailure } from "../../ActionError.ts"
import type { ChatEvent, ChatOptions, ChatResult, Decisions, PausedState, ToolAnswer } from "../../Chat.ts"
import type * as Prompt from "../../Prompt.ts"
import type * as StepHooks from "../../StepHooks.ts"
import * as Nesting from "./nesting.ts"

/** How an agent action runs its agent's turn. */
export interface TurnOptions {
  readonly prompt: (args: Readonly<Record<string, unknown>>) => string
  readonly chat: ChatOptions
}

/**
 * Counts each model call of a nested turn against the tree's bound; past it the call fails EXECUTION naming
 * the turn that tried and the model calls of each agent that spent the bound.
 */
export const counting = (
  action: string,
  path: ReadonlyArray<string>,
  bound: Nesting.Bound
): StepHooks.StepHooks<ToolAnswer> => ({
  model: (_step, call) =>
    Effect.suspend(() => {
      if (bound.steps >= bound.maxSteps) {
        return Effect.fail(
          new ExecutionFailure({
            action,
            message: `${action}: ${Nesting.pathText(path)} could not make a model call: the turns of the tree made ${bound.steps} model calls, its bound (maxTotalSteps ${bound.maxSteps}); model calls by agent: ${Nesting.spentText(bound)}`
          })
        )
      }
      Nesting.spend(bound, path)
      return call
    })
})

/**
 * An inner event as the calling turn's caller sees it: tagged with the path of agents (from the outermost
 * turn), its `toolCallId` the calling turn's. An event of a turn nested deeper is tagged already: only its
 * call id gets the calling turn's in front.
 */
const tagged = (path: ReadonlyArray<string>, toolCallId: string, event: ChatEvent): ChatEvent =>
  event._tag === "NestedEvent"
    ? { ...event, toolCallId: `${toolCallId}/${event.toolCallId}` }
    : { _tag: "NestedEvent", agents: path, toolCallId, event }

/** How {@link turnOf} runs another agent's turn. */
export interface InnerTurn {
  readonly input: string | ReadonlyArray<Prompt.Message>
  readonly resumption: { readonly state: PausedState; readonly decisions: Decisions } | undefined
  readonly options: ChatOptions
  /** Where its events go, tagged with `path` and `toolCallId`; `undefined`: it runs unstreamed. */
  readonly emit: ((event: ChatEvent) => Effect.Effect<void>) | undefined
  readonly path: ReadonlyArray<string>
  readonly toolCallId: string
}

/** Another agent's turn (or its resumption), streamed to the caller's caller when it streams, to its result. */
export const turnOf = (inner: Nesting.Inner, turn: InnerTurn): Effect.Effect<ChatResult, ActionError, any> => {
  const { resumption, emit, options } = turn
  if (emit === undefined) {
    return resumption === undefined
      ? inner.chat(turn.input, options)
      : inner.resume(resumption.state, resumption.decisions, options)
  }
  const events =
    resumption === undefined
      ? inner.chatStream(turn.input, options)
      : inner.resumeStream(resumption.state, resumption.decisions, options)
  return Effect.suspend(() => {
    let result: ChatResult | undefined
    return Stream.runForEach(events, (event) => {
      if (event._tag === "TurnFinished") result = event.result
      return emit(tagged(turn.path, turn.toolCallId, event))
    }).pipe(
      Effect.flatMap(() =>
        result === undefined
          ? Effect.fail(
              new ExecutionFailure({ action: inner.id, message: `${inner.id}: the turn ended without a result` })
            )
          : Effect.succeed(result)
      )
    )
  })
}

/**
 * One call of an agent action `action` (the name it has in the calling agent) with its converted `args`:
 * the inner agent's turn, bounded, to its answer.
 */
export const runAgent = (
  composed: Extract<Nesting.Composed, { readonly _tag: "agent" }>,
  options: TurnOptions,
  action: string,
  callerId: string,
  args: Readonly<Record<string, unknown>>
): Effect.Effect<unknown, ActionError, any> =>
  Effect.flatMap(Effect.service(Nesting.CurrentCall), (call) => {
    const inner = composed.agent()
    const bound = call?.bound ?? Nesting.boundOf(composed)
    const { path, depth, over } = Nesting.deeper(call?.path ?? [callerId], bound, inner.id)
    if (over) {
      return Effect.fail(
        new ExecutionFailure({
          action,
          message: `${action}: the agents ${Nesting.pathText(path)} are nested ${depth} deep, over the bound (maxDepth ${bound.maxDepth})`
        })
      )
    }
    const chat: ChatOptions = { ...options.chat, steps: counting(action, path, bound) }
    const place: Nesting.Place = { path, bound }
    const turn = Effect.provideService(
      turnOf(inner, {
        input: options.prompt(args),
        resumption: call?.resumption,
        options: chat,
        emit: call?.emit,
        path,
        toolCallId: call?.toolCallId ?? ""
      }),
      Nesting.CurrentPlace,
      place
    )
    return Effect.flatMap(turn, (result): Effect.Effect<unknown, ActionError> => {
      if (call !== undefined) call.usage = Nesting.usageOf(inner.id, result)
      switch (result._tag) {
        case "Completed":
          return Effect.succeed(options.chat.output === undefined ? result.text : result.output)
        case "StepLimitReached":
          return Effect.fail(
            new ExecutionFailure({
              action,
              message: `${action}: the agent ${Nesting.pathText(path)} made ${result.steps} model calls without answering (its maxSteps)`
            })
          )
        case "AwaitingApproval": {
          const first = result.pending[0]
          if (call !== undefined) call.paused = { agent: inner.id, state: result.state, arguments: args }
          return Effect.fail(
            new ApprovalRequired({
              action,
              reason: first?.reason ?? "approval",
              check: "missing",
              message: `${action}: the agent ${Nesting.pathText(path)} waits for a decision on ${result.pending
                .map((pending) => `${pending.toolCallId} (${pending.action})`)
                .join(", ")}${call === undefined ? "; run it in a chat turn to resume it" : ""}`
            })
          )
        }
      }
    })
  })

/** One call of a handoff action: the calling turn is told to hand the conversation to the agent. */
export const runHandoff = (
  composed: Extract<Nesting.Composed, { readonly _tag: "handoff" }>,
  action: string
): Effect.Effect<unknown, ActionError> =>
  Effect.flatMap(Effect.service(Nesting.CurrentCall), (call) => {
    const target = composed.agent()
    if (call === undefined) {
      return Effect.fail(
        new ExecutionFailure({
          action,
          message: `${action}: a handoff to ${target.id} hands a chat turn's conversation over; it runs only as a tool call of a chat turn`
        })
      )
    }
    call.handoff = target.id
    return Effect.succeed(`Transferred to ${target.id}.`)
  })
