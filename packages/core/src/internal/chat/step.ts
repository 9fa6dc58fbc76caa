/**
 * One step of a chat turn on the model's side: the tools offered to model call `step` (through the turn's
 * `tools` hook), the request, and the model call itself — streamed or generated, inside the turn's retry
 * policy and its `model` hook — with its parts sent to the caller as events as they arrive. Fails with the
 * model call's `ActionError`; the response's tool calls carry the ids the caller saw (`ToolCallId`: an empty
 * id, or one used before in the step or anywhere in the conversation, made unique).
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ActionError } from "../../ActionError.ts"
import type { ChatEvent } from "../../Chat.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as ModelResponse from "../../ModelResponse.ts"
import type * as Prompt from "../../Prompt.ts"
import * as ToolCallId from "../../ToolCallId.ts"
import * as RunStep from "../resilience/runStep.ts"
import { noGuards } from "../resilience/guard.ts"
import * as Toolkit from "../tool/toolkit.ts"
import type { Turn } from "./context.ts"
import { chatAction } from "./settings.ts"
import * as ToolSearch from "./toolSearch.ts"

/**
 * The toolkit of model call `step`: through the `tools` hook, if any, which may narrow it to the names it
 * returns (a replay's recorded list).
 */
export const offered = <R>(turn: Turn<R>, step: number): Effect.Effect<Toolkit.Toolkit> =>
  Effect.map(
    Effect.flatMap(turn.toolkit(turn.settings.strict), (kit) => {
      const hook = turn.settings.hooks?.tools
      if (hook === undefined) return Effect.succeed(kit)
      return Effect.map(
        hook(
          { _tag: "Tools", step },
          Effect.sync(() => kit.tools.map((tool) => tool.name))
        ),
        (names) => Toolkit.narrow(kit, names)
      )
    }),
    // A catalog past the provider's tool limit (or any, when asked) is offered through the search tool.
    (kit) => ToolSearch.offered(turn, kit)
  )

/** Model call `step` on the conversation so far, offered `kit`, through the turn's `model` hook, if any. */
export const call = <R>(
  turn: Turn<R>,
  messages: ReadonlyArray<Prompt.Message>,
  step: number,
  kit: Toolkit.Toolkit
): Effect.Effect<ModelResponse.Response, ActionError> => {
  const hook = turn.settings.hooks?.model
  const made = generate(turn, messages, step, kit)
  return hook === undefined ? made : hook({ _tag: "Model", step }, made)
}

/** The request, each attempt made within the turn's retry policy and model timeout, if any. */
const generate = <R>(
  turn: Turn<R>,
  messages: ReadonlyArray<Prompt.Message>,
  step: number,
  kit: Toolkit.Toolkit
): Effect.Effect<ModelResponse.Response, ActionError> => {
  const { settings } = turn
  const request: LanguageModel.Request = {
    messages: messages.slice(),
    tools: kit.forModel,
    action: chatAction,
    ...(settings.model === undefined ? {} : { model: settings.model }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
    ...(settings.parallelToolCalls === undefined ? {} : { parallelToolCalls: settings.parallelToolCalls }),
    ...(settings.output === undefined ? {} : { responseFormat: settings.output.format })
  }
  const once = attempt(turn, request, step)
  return settings.policy === undefined
    ? once
    : RunStep.run({
        action: chatAction,
        policy: settings.policy,
        attemptTimeout: undefined,
        guards: noGuards,
        attempt: once
      })
}

/**
 * One model call, its reasoning, text and tool-call starts sent to the caller as they arrive; the response
 * with its tool calls under the ids the caller saw.
 */
const attempt = <R>(
  turn: Turn<R>,
  request: LanguageModel.Request,
  step: number
): Effect.Effect<ModelResponse.Response, ActionError> =>
  Effect.suspend(() => {
    // Each attempt assigns against the conversation's ids; the loop records the ids of the answer it keeps.
    const parts = partsReader(step, turn.argumentDeltas, ToolCallId.make(turn.callIds))
    const started = turn.emit({ _tag: "StepStarted", step })
    // Not streaming: the whole answer, its parts read at once (no stream to run).
    if (!turn.streaming) {
      return Effect.andThen(
        started,
        Effect.flatMap(turn.model.generate(request), (answer) => {
          const events = parts.read(LanguageModel.partsOf(answer))
          return Effect.as(events.length === 0 ? Effect.void : turn.emitAll(events), parts.response())
        })
      )
    }
    return started.pipe(
      Effect.andThen(
        Stream.runForEachArray(turn.model.stream(request), (batch) => {
          const events = parts.read(batch)
          return events.length === 0 ? Effect.void : turn.emitAll(events)
        })
      ),
      Effect.map(parts.response)
    )
  })

/**
 * Reads the parts of one model call, batch after batch: `read` gives a batch's events (one batch, one offer
 * to the caller); `response` the answer once `Finished` was read, with its tool calls under the ids the
 * caller saw, assigned by `conversation` (the ids of the conversation so far). Local to one attempt.
 */
const partsReader = (step: number, argumentDeltas: boolean, conversation: ToolCallId.Ids) => {
  const ids: Array<readonly [index: number, id: string]> = []
  const idOf = new Map<number, string>()
  let finished: ModelResponse.Response | undefined
  const read = (batch: ReadonlyArray<ModelResponse.StreamPart>): ReadonlyArray<ChatEvent> => {
    const events: Array<ChatEvent> = []
    for (const part of batch) {
      switch (part._tag) {
        case "TextDelta":
          events.push({ _tag: "TextDelta", step, delta: part.delta })
          break
        case "ReasoningDelta":
          events.push({ _tag: "ReasoningDelta", step, delta: part.delta })
          break
        case "ToolCallArgumentsStarted": {
          const toolCallId = conversation.assign(part.id, step, part.index)
          ids.push([part.index, toolCallId])
          idOf.set(part.index, toolCallId)
          events.push({ _tag: "ToolCallArgumentsStarted", step, toolCallId, tool: part.name })
          break
        }
        case "ToolCallArgumentsDelta":
          if (argumentDeltas) {
            events.push({
              _tag: "ToolCallArgumentsDelta",
              step,
              toolCallId: idOf.get(part.index) ?? part.id,
              delta: part.delta
            })
          }
          break
        case "Finished":
          finished = part.response
          break
      }
    }
    return events
  }
  const response = (): ModelResponse.Response => {
    const answer = finished as ModelResponse.Response
    // The response's calls are in index order, as are the starts sorted by index.
    const order = ids.slice().sort((a, b) => a[0] - b[0])
    const toolCalls = answer.toolCalls.map((call, i) => {
      // A call whose start was never read (a provider's response with more calls than starts) gets its id now.
      const fresh = order[i]?.[1] ?? conversation.assign(call.id, step, i)
      return fresh === call.id ? call : { ...call, id: fresh }
    })
    return { ...answer, toolCalls }
  }
  return { read, response }
}
