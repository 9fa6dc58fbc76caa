/**
 * The loop of a chat turn: model call after model call, each step's tool calls answered, until the model
 * answers with text (`Completed`, its answer decoded when the turn asked for an `output`), a call needs an
 * approval (`AwaitingApproval`, with the state to resume from), or `maxSteps` model calls were made
 * (`StepLimitReached`). Publishes `StepFinished` after each model call, and tells the caller each step's end.
 * Fails with a model call's `ActionError`; EXECUTION when the model refused, or did not finish a reply the turn
 * would use (cut at its token limit or filtered, with tool calls or the `output` to decode) — none of its calls
 * run; VALIDATION when the answer does not match the `output` schema.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ActionError, ValidationError } from "../../ActionError.ts"
import {
  AwaitingApproval,
  type ChatResult,
  Completed,
  type NestedCall,
  type PendingCall,
  pausedStateVersion,
  type StepFinished,
  StepLimitReached,
  type ToolAnswer
} from "../../Chat.ts"
import type * as Call from "../pipeline/call.ts"
import type * as ModelResponse from "../../ModelResponse.ts"
import type * as Prompt from "../../Prompt.ts"
import * as EventHub from "../events/hub.ts"
import * as LlmExecutor from "../executor/llm.ts"
import * as Finish from "../model/finish.ts"
import type * as Toolkit from "../tool/toolkit.ts"
import { addAgents, agentsOf, usageOf } from "./tally.ts"
import * as Answer from "./answer.ts"
import * as Nesting from "../agent/nesting.ts"
import * as Handoff from "./handoff.ts"
import * as ChatMessages from "./messages.ts"
import type { Position, Turn } from "./context.ts"
import { chatAction } from "./settings.ts"
import * as Step from "./step.ts"

/** The pending calls a nested pause brings to this turn: the inner ones, their ids and paths from here. */
const leaves = (self: string, nested: NestedCall): ReadonlyArray<PendingCall> =>
  nested.state.pending.map((pending) => ({
    ...pending,
    toolCallId: `${nested.toolCallId}/${pending.toolCallId}`,
    agents: [self, ...(pending.agents ?? [nested.agent])]
  }))

/** A call's answer with the call value it answers (`undefined` for a call answered before the pipeline). */
export interface Answered {
  readonly answer: ToolAnswer
  readonly made: Call.Call | undefined
}

/**
 * What follows the answers of a step's calls (or of a resume's decided calls): the turn pauses when some
 * wait for an approval (theirs, or an inner agent's), hands off when a handoff was called — the handoff its
 * call ran, with its filter — else goes on. `merged` is the history with the answers that were given;
 * `finished` tells the caller the step's end.
 */
export const settle = <R>(
  turn: Turn<R>,
  steps: number,
  answers: ReadonlyArray<Answered>,
  merged: (answered: ReadonlyArray<Prompt.ToolMessage>) => ReadonlyArray<Prompt.Message>,
  finished: Effect.Effect<void>
): Effect.Effect<ChatResult, ActionError, R> => {
  const pending: Array<PendingCall> = []
  const nested: Array<NestedCall> = []
  const answered: Array<Prompt.ToolMessage> = []
  const handoffs: Array<Handoff.Called> = []
  for (const { answer, made } of answers) {
    if (answer.agents !== undefined) addAgents(turn.composed.agents, answer.agents)
    if (answer.nested !== undefined) {
      nested.push(answer.nested)
      pending.push(...leaves(turn.host.id, answer.nested))
    } else if (answer.pending !== undefined) {
      pending.push(answer.pending)
    } else if (answer.message !== undefined) {
      answered.push(answer.message)
      const called = Handoff.calledBy(made, answer, answer.message.toolCallId)
      if (called !== undefined) handoffs.push(called)
    }
  }
  // Each handoff call is answered with what happened to it (carried out or not, and why), and told so.
  return Effect.flatMap(Handoff.choose(turn, handoffs, pending.length > 0), ({ taken, answers: notes }) => {
    const told = answered.map((message) => {
      const note = notes.get(message.toolCallId)
      return note === undefined ? message : { ...message, content: note }
    })
    const telling = Effect.forEach(
      told.filter((message) => notes.has(message.toolCallId)),
      (message) => turn.emit(Answer.toolResult(steps, message, { success: message.toolCallId === taken?.toolCallId })),
      { discard: true }
    )
    const next = { messages: merged(told), steps }
    if (pending.length === 0) {
      return Effect.andThen(
        Effect.andThen(telling, finished),
        taken === undefined ? loop(turn, next) : Handoff.handOff(turn, next, taken)
      )
    }
    return telling.pipe(
      Effect.andThen(finished),
      Effect.andThen(turn.emit({ _tag: "ApprovalRequested", pending })),
      Effect.andThen(paused(turn, next, pending, nested))
    )
  })
}

/** The turn's model calls and tool calls from `at`, step after step, to its result. */
export const loop = <R>(turn: Turn<R>, at: Position): Effect.Effect<ChatResult, ActionError, R> => {
  // The outermost turn's own model calls count against its tree's bound; once the tree spent it, the turn ends.
  const { composed } = turn
  const spent = composed.outermost && composed.bound !== undefined && composed.bound.steps >= composed.bound.maxSteps
  if (at.steps >= turn.settings.maxSteps || spent) {
    return Effect.map(usageOf(turn), (usage) => {
      const agents = agentsOf(turn, usage)
      return StepLimitReached({
        messages: at.messages,
        usage,
        steps: at.steps,
        ...(agents === undefined ? {} : { agents })
      })
    })
  }
  const step = at.steps + 1
  if (composed.outermost) {
    composed.calls += 1
    if (composed.bound !== undefined) Nesting.spend(composed.bound, turn.path)
  }
  return Effect.flatMap(Step.offered(turn, step), (kit) =>
    Effect.flatMap(Step.call(turn, at.messages, step, kit), (response) =>
      stepped(turn, at.messages, step, kit, response)
    )
  )
}

/**
 * What follows model call `step`: the answer, or the tool calls' results and the next step. A refusal, and a
 * reply the model did not finish (cut at its token limit, or filtered) holding calls or the turn's `output`,
 * end the turn with EXECUTION once the step is reported: none of its calls runs.
 */
const stepped = <R>(
  turn: Turn<R>,
  before: ReadonlyArray<Prompt.Message>,
  step: number,
  kit: Toolkit.Toolkit,
  response: ModelResponse.Response
): Effect.Effect<ChatResult, ActionError, R> => {
  const calls = response.toolCalls
  for (const call of calls) turn.callIds.add(call.id)
  const finished: StepFinished = {
    _tag: "StepFinished",
    step,
    finishReason: response.finishReason,
    usage: response.usage
  }
  const reported = Effect.andThen(publishStep(turn, step, response), turn.emit(finished))
  const stopped =
    Finish.refused(chatAction, response) ??
    Finish.unfinished(
      chatAction,
      response,
      calls.length === 0 && turn.settings.output !== undefined ? "answer" : { toolCalls: calls.length }
    )
  if (stopped !== undefined) return Effect.andThen(reported, Effect.fail(stopped))
  if (calls.length === 0) {
    const messages: ReadonlyArray<Prompt.Message> = [...before, ChatMessages.assistantOf(response, [])]
    return Effect.andThen(reported, completed(turn, messages, step, response))
  }
  const prepared = calls.map((call) => Answer.prepare(turn, call, kit))
  const messages: ReadonlyArray<Prompt.Message> = [
    ...before,
    ChatMessages.assistantOf(response, prepared.map(Answer.kept))
  ]
  return publishStep(turn, step, response).pipe(
    Effect.andThen(Answer.answerAll(turn, step, prepared, kit)),
    Effect.flatMap((answers) =>
      settle(
        turn,
        step,
        answers.map((answer, i) => ({ answer, made: prepared[i]?.made })),
        (answered) => [...messages, ...answered],
        turn.emit(finished)
      )
    )
  )
}

/** `StepFinished` to the agent's events, only when someone listens. */
const publishStep = <R>(turn: Turn<R>, step: number, response: ModelResponse.Response): Effect.Effect<void> => {
  const { hub } = turn.host
  return hub.subscribers() === 0
    ? Effect.void
    : Effect.flatMap(Clock.currentTimeMillis, (timestamp) =>
        EventHub.publish(hub, {
          _tag: "StepFinished",
          agentId: turn.host.id,
          step,
          toolCalls: response.toolCalls.length,
          usage: response.usage,
          timestamp
        })
      )
}

/** The model answered with text: the turn is complete, its answer decoded when it asked for an `output`. */
const completed = <R>(
  turn: Turn<R>,
  messages: ReadonlyArray<Prompt.Message>,
  steps: number,
  response: ModelResponse.Response
): Effect.Effect<ChatResult, ValidationError> => {
  const output = turn.settings.output
  const decoded =
    output === undefined
      ? Effect.succeed(undefined)
      : Effect.map(
          LlmExecutor.decodeReply(chatAction, output.schema, response.text, "output schema") as Effect.Effect<
            unknown,
            ValidationError
          >,
          (value) => ({ value })
        )
  return Effect.map(Effect.zip(decoded, usageOf(turn)), ([decodedOutput, usage]) => {
    const agents = agentsOf(turn, usage)
    return Completed({
      text: response.text,
      messages,
      usage,
      steps,
      finishReason: response.finishReason,
      ...(response.reasoning === undefined ? {} : { reasoning: response.reasoning }),
      ...(response.citations === undefined ? {} : { citations: response.citations }),
      ...(decodedOutput === undefined ? {} : { output: decodedOutput.value }),
      ...(agents === undefined ? {} : { agents })
    })
  })
}

/** Calls of the last step wait for an approval: the turn pauses with the state to resume from. */
const paused = <R>(
  turn: Turn<R>,
  at: Position,
  pending: ReadonlyArray<PendingCall>,
  nested: ReadonlyArray<NestedCall>
): Effect.Effect<ChatResult> =>
  Effect.map(usageOf(turn), (usage) => {
    const agents = agentsOf(turn, usage)
    return AwaitingApproval({
      pending,
      state: {
        version: pausedStateVersion,
        messages: at.messages,
        pending,
        steps: at.steps,
        maxSteps: turn.settings.maxSteps,
        usage,
        ...(nested.length === 0 ? {} : { nested }),
        ...(agents === undefined ? {} : { agents }),
        turnId: turn.id
      }
    })
  })
