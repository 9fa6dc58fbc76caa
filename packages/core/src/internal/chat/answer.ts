/**
 * Answering the model's tool calls: each call routed to the action (and MCP server tool) offered under its
 * name, its arguments parsed, run through the agent's pipeline, and answered with exactly one tool message —
 * the result's text, or `{"error":{"category","message"}}`. A call never fails the turn: a name never
 * offered (AUTHORITY when the agent's authority denies it, else NOT_FOUND), arguments that are not a JSON
 * object (VALIDATION) and the pipeline's failures are all answers. A call that needs an approval is answered
 * as pending, with the call the turn pauses for, and gets no tool message until it is decided.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import {
  type ActionError,
  ActionNotFound,
  isActionError,
  type RetrievalFailure,
  Unauthorized,
  type ValidationError
} from "../../ActionError.ts"
import type { ActionTool } from "../../ActionTool.ts"
import type { PendingCall, ToolAnswer, ToolCallAnswered } from "../../Chat.ts"
import type { Step } from "../../StepHooks.ts"
import type * as Prompt from "../../Prompt.ts"
import * as Nesting from "../agent/nesting.ts"
import * as EventHub from "../events/hub.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as Pending from "../pending.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import type * as Call from "../pipeline/call.ts"
import * as Redact from "../redact.ts"
import * as Secrets from "../secrets.ts"
import { keepEnds } from "../text.ts"
import { parseArguments } from "../tool/arguments.ts"
import type * as Toolkit from "../tool/toolkit.ts"
import * as ToolContent from "../../ToolContent.ts"
import * as VisibleText from "../../VisibleText.ts"
import type { Turn } from "./context.ts"
import * as ChatMessages from "./messages.ts"
import { labelOf } from "../label.ts"
import * as ToolSearch from "./toolSearch.ts"
import type * as ToolHints from "../../ToolHints.ts"

/**
 * The most characters of one tool message sent to the model: 64,000. A longer result keeps its head and
 * tail around a marker saying how many characters were left out; the caller and the output guardrail still
 * see the whole result.
 */
export const maxToolResultCharacters = 64_000

/**
 * A call's answer from its result (`ToolContent.success`), whole: the tool-message writer ({@link hooked})
 * redacts it and cuts it to fit.
 */
export const answered = (toolCallId: string, action: string, value: unknown): ToolAnswer => {
  // The text Mcp.serve sends too, on the JSON writer of the output guardrail and ActionResult.asString.
  const text = ToolContent.success(value, { action })
  if (Result.isFailure(text)) return failed(toolCallId, text.failure)
  return { message: { role: "tool", toolCallId, content: text.success }, category: undefined, success: true }
}

/** A call's answer from its failure. */
export const failed = (toolCallId: string, error: ActionError | RetrievalFailure): ToolAnswer => ({
  message: { role: "tool", toolCallId, content: ChatMessages.errorContent(error) },
  category: isActionError(error) ? error.category : undefined,
  success: false
})

/** The answer of a call that waits for an approval: no message (none is sent until it is decided). */
export const waiting = (pending: PendingCall): ToolAnswer => ({ category: "APPROVAL", success: false, pending })

/** The call a turn pauses for: the call value and the pending value its approval step ended it with. */
const pendingOf = (made: Call.Call, toolCallId: string, pending: Pending.Pending): PendingCall => ({
  toolCallId,
  action: made.name,
  ...(made.tool === undefined ? {} : { tool: made.tool }),
  arguments: made.arguments,
  pendingTokenId: pending.tokenId,
  reason: pending.reason,
  ...(pending.definition === undefined ? {} : { definition: pending.definition })
})

/**
 * The tool message of an answer as the model is sent it: every secret the turn knows replaced (before a
 * cut, so no cut leaves the start of one behind), the characters a person cannot see written as escapes
 * (`VisibleText.reveal`), then a result cut to {@link maxToolResultCharacters}.
 */
export const written = (answer: ToolAnswer, secrets: ReadonlyArray<Redacted.Redacted<string>>): ToolAnswer => {
  if (answer.message === undefined) return answer
  const { content } = answer.message
  // Characters a person cannot see are written visibly: the model reads what a person reading the result reads.
  const redacted = VisibleText.reveal(secrets.length === 0 ? content : Redact.text(content, secrets))
  const fitted = answer.success ? keepEnds(redacted, maxToolResultCharacters) : redacted
  return fitted === content ? answer : { ...answer, message: { ...answer.message, content: fitted } }
}

/**
 * Runs a call through the pipeline: its answer, or — when it needs an approval it does not carry — the pending
 * call the turn pauses for.
 */
export const run = <R>(turn: Turn<R>, made: Call.Call, toolCallId: string): Effect.Effect<ToolAnswer, never, R> => {
  const composed = Nesting.composedOf(made.entry?.action)
  if (composed !== undefined) return runComposed(turn, made, toolCallId, composed, undefined)
  return Effect.map(Effect.result(turn.host.run(made)), (outcome) => {
    if (outcome._tag === "Failure") return failed(toolCallId, outcome.failure)
    const value = outcome.success
    return Pending.isPending(value)
      ? waiting(pendingOf(made, toolCallId, value))
      : answered(toolCallId, made.name, value)
  })
}

/**
 * A call of an agent used as an action, or of a handoff: run through the pipeline (or, given `resumption`,
 * continued at its run step with the inner turn resumed) with the {@link Nesting.Call} its body reads. The
 * answer carries the inner turn's pause (`nested`), the handoff, and the tokens of each agent it ran.
 */
export const runComposed = <R>(
  turn: Turn<R>,
  made: Call.Call,
  toolCallId: string,
  composed: Nesting.Composed,
  resumption: Nesting.Call["resumption"]
): Effect.Effect<ToolAnswer, never, R> =>
  Effect.flatMap(Effect.service(Nesting.CurrentPlace), (place) => {
    const nesting: Nesting.Call = {
      path: place?.path ?? [turn.host.id],
      bound:
        place?.bound ??
        (turn.composed.bound ??= Nesting.boundOf(composed, { path: turn.path, calls: turn.composed.calls })),
      toolCallId,
      emit: turn.streaming ? turn.emit : undefined,
      resumption,
      paused: undefined,
      handoff: undefined,
      usage: undefined
    }
    const ran = resumption === undefined ? turn.host.run(made) : turn.host.proceed(made)
    // What this agent denies is denied in the agent it uses too.
    const inherited = AuthorityKernel.inheriting(
      Effect.provideService(ran, Nesting.CurrentCall, nesting),
      turn.host.authority
    )
    return Effect.map(Effect.result(inherited), (outcome) => {
      const { paused, handoff, usage } = nesting
      let given: ToolAnswer
      if (outcome._tag === "Success") {
        const value = outcome.success
        given = Pending.isPending(value)
          ? waiting(pendingOf(made, toolCallId, value))
          : handoff === undefined
            ? answered(toolCallId, made.name, value)
            : { ...answered(toolCallId, made.name, value), handoff }
      } else if (paused !== undefined && outcome.failure._tag === "ApprovalRequired") {
        given = {
          category: "APPROVAL",
          success: false,
          nested: {
            toolCallId,
            action: made.name,
            agent: paused.agent,
            arguments: paused.arguments,
            state: paused.state
          }
        }
      } else {
        given = failed(toolCallId, outcome.failure)
      }
      return usage === undefined ? given : { ...given, agents: usage }
    })
  })

/** Tells the caller that a call's arguments are parsed and it is about to run. */
export const ready = <R>(turn: Turn<R>, step: number, toolCallId: string, made: Call.Call): Effect.Effect<void> =>
  turn.emit({
    _tag: "ToolCallReady",
    step,
    toolCallId,
    action: made.name,
    ...(made.tool === undefined ? {} : { tool: made.tool }),
    arguments: made.arguments
  })

const unknownTool = <R>(turn: Turn<R>, call: Prompt.ToolCall, kit: Toolkit.Toolkit): ActionError => {
  // Authority first: a name it denies is AUTHORITY whether or not it exists.
  if (!AuthorityKernel.allows(turn.host.authority, call.name)) {
    return new Unauthorized({ action: call.name, message: `The agent's authority does not allow ${call.name}` })
  }
  const available = kit.tools.map((tool) => tool.name)
  return new ActionNotFound({
    action: call.name,
    message: `No tool named ${call.name} was offered; the tools offered are: ${
      available.length === 0 ? "none" : available.join(", ")
    }`,
    available
  })
}

/**
 * A call answered before the pipeline (a tool never offered, arguments that are not a JSON object): it still
 * gets its execute_tool span, failed with the error the model is sent.
 */
const refusedEarly = <R>(turn: Turn<R>, call: Prompt.ToolCall, error: ActionError): Effect.Effect<ToolAnswer> =>
  // The error quotes the model's name or arguments: redacted before its span records it.
  Effect.fail(Redact.scrub(error, turn.secrets)).pipe(
    Telemetry.executeTool({
      tool: call.name,
      toolCallId: call.id,
      attributes: { "rolecraft.agent": turn.host.id },
      arguments: undefined,
      redact: turn.secrets.length === 0 ? undefined : Effect.succeed(Secrets.redactor(turn.secrets))
    }),
    Effect.catch((refused) => Effect.succeed(failed(call.id, refused)))
  )

/**
 * One of the model's calls as it enters the turn, once: the tool offered under its name (`undefined` for a name
 * never offered), its arguments parsed, and — when both are good — the call value the pipeline runs (its scope
 * the turn and the call's id, its path the turn's). The answer runs that value, and the history keeps the call
 * by its parsed arguments.
 */
export interface Prepared {
  readonly toolCall: Prompt.ToolCall
  readonly tool: ActionTool | undefined
  readonly parsed: Result.Result<Record<string, unknown>, ValidationError>
  readonly made: Call.Call | undefined
}

/** The call value of a model's call of `tool` in `turn` (or of a pending call resumed), made once. */
export const callOf = <R>(
  turn: Turn<R>,
  toolCall: { readonly id: string; readonly name: string },
  action: string,
  tool: string | undefined,
  args: Readonly<Record<string, unknown>>,
  token?: string,
  definition?: string,
  hints?: ToolHints.Hints
): Call.Call =>
  turn.host.call(action, tool, args, {
    token,
    definition,
    hints,
    toolCall: { id: toolCall.id, tool: toolCall.name },
    secrets: turn.secrets,
    scope: { turn: turn.id, call: toolCall.id },
    agents: turn.path,
    pauses: true
  })

/** A call of the model, routed by the step's toolkit and its arguments parsed (a model cannot present an approval token). */
export const prepare = <R>(turn: Turn<R>, toolCall: Prompt.ToolCall, kit: Toolkit.Toolkit): Prepared => {
  const tool = kit.find(toolCall.name)
  const label = tool === undefined ? toolCall.name : labelOf(tool.action, tool.tool)
  const parsed = parseArguments(toolCall.arguments, { tool: label })
  const made =
    tool === undefined || Result.isFailure(parsed)
      ? undefined
      : callOf(turn, toolCall, tool.action, tool.tool, parsed.success, undefined, undefined, tool.hints)
  return { toolCall, tool, parsed, made }
}

/**
 * The call as the conversation keeps it, and sends back to the model: its own arguments when they are a JSON
 * object, else `{}` — arguments that do not parse would make the provider refuse every later request of the
 * conversation. Its answer (VALIDATION, quoting what was received) says what was wrong.
 */
export const kept = (prepared: Prepared): Prompt.ToolCall =>
  Result.isSuccess(prepared.parsed) ? prepared.toolCall : { ...prepared.toolCall, arguments: "{}" }

/** One of the model's calls, prepared: run through the pipeline, or answered before it. */
const answer = <R>(
  turn: Turn<R>,
  step: number,
  prepared: Prepared,
  kit: Toolkit.Toolkit
): Effect.Effect<ToolAnswer, never, R> => {
  const { toolCall, tool, parsed, made } = prepared
  if (tool === undefined) return refusedEarly(turn, toolCall, unknownTool(turn, toolCall, kit))
  if (Result.isFailure(parsed)) return refusedEarly(turn, toolCall, parsed.failure)
  // The search tool is the turn's own: it loads tools of the catalog, and runs nothing.
  if (ToolSearch.isSearch(kit, tool)) {
    return Effect.map(ToolSearch.search(turn, kit, parsed.success), (content) => ({
      message: { role: "tool" as const, toolCallId: toolCall.id, content },
      category: undefined,
      success: true
    }))
  }
  if (made === undefined) return Effect.die(new Error("a prepared call with parsed arguments has its call value"))
  return Effect.andThen(ready(turn, step, toolCall.id, made), run(turn, made, toolCall.id))
}

/**
 * Publishes ToolExecutionStarted/Finished around an answer, only when someone listens to `agent.events`; streams
 * the answer's `ToolCallAnswered` to the caller unless it waits for an approval.
 */
export const observed = <R>(
  turn: Turn<R>,
  step: number,
  call: { readonly id: string; readonly name: string },
  made: Call.Call | undefined,
  answer: Effect.Effect<ToolAnswer, never, R>
): Effect.Effect<ToolAnswer, never, R> => {
  const { hub } = turn.host
  // A handoff's answer is told when the step settles which handoff is carried out (see `settle`).
  const reported = Effect.tap(answer, (result) =>
    result.message === undefined || result.handoff !== undefined
      ? Effect.void
      : turn.emit(toolResult(step, result.message, result))
  )
  return Effect.suspend(() => {
    if (hub.subscribers() === 0) return reported
    const about = {
      agentId: turn.host.id,
      step,
      toolCallId: call.id,
      tool: call.name,
      action: made?.name,
      mcpTool: made?.tool,
      ...(made?.hints === undefined ? {} : { hints: made.hints })
    }
    return Effect.gen(function* () {
      const start = yield* Clock.currentTimeMillis
      yield* EventHub.publish(hub, { _tag: "ToolExecutionStarted", ...about, timestamp: start }, turn.secrets)
      const result = yield* reported
      const now = yield* Clock.currentTimeMillis
      yield* EventHub.publish(
        hub,
        {
          _tag: "ToolExecutionFinished",
          ...about,
          success: result.success,
          category: result.category,
          durationMs: now - start,
          timestamp: now
        },
        turn.secrets
      )
      return result
    })
  })
}

export const toolResult = (
  step: number,
  message: Prompt.ToolMessage,
  answer: Pick<ToolAnswer, "success" | "category">
): ToolCallAnswered => ({
  _tag: "ToolCallAnswered",
  step,
  toolCallId: message.toolCallId,
  success: answer.success,
  ...(answer.category === undefined ? {} : { category: answer.category }),
  content: message.content
})

/**
 * A tool call's answer as the tool-message writer makes it ({@link written}), through the `tool` hook of
 * the turn, if any: every answer passes here once, so neither the hook (nor a durable run storing what it
 * returns), the caller's events nor the model sees a secret the agent knows.
 */
export const hooked = <R>(
  turn: Turn<R>,
  step: Extract<Step, { readonly _tag: "Tool" }>,
  answer: Effect.Effect<ToolAnswer, never, R>
): Effect.Effect<ToolAnswer, never, R> => {
  const hook = turn.settings.hooks?.tool
  const made = Effect.map(answer, (made) => written(made, turn.secrets))
  return hook === undefined ? made : hook(step, made)
}

/** The model's calls of model call `step`, answered `settings.concurrency` at a time, in the calls' order. */
export const answerAll = <R>(
  turn: Turn<R>,
  step: number,
  calls: ReadonlyArray<Prepared>,
  kit: Toolkit.Toolkit
): Effect.Effect<ReadonlyArray<ToolAnswer>, never, R> => {
  const one = (prepared: Prepared) =>
    observed(
      turn,
      step,
      prepared.toolCall,
      prepared.made,
      hooked(
        turn,
        { _tag: "Tool", step, toolCallId: prepared.toolCall.id, name: prepared.toolCall.name, decided: false },
        answer(turn, step, prepared, kit)
      )
    )
  const first = calls[0]
  if (calls.length === 1 && first !== undefined) return Effect.map(one(first), (answer) => [answer])
  const { concurrency } = turn.settings
  if (concurrency === 1 || !calls.some(isSerial)) return Effect.forEach(calls, one, { concurrency })
  // A serial call is a barrier: the calls before it finish, it runs alone, then the calls after it start.
  const groups: Array<Array<Prepared>> = []
  for (const call of calls) {
    const last = groups.at(-1)
    if (isSerial(call) || last === undefined || last.some(isSerial)) groups.push([call])
    else last.push(call)
  }
  return Effect.map(
    Effect.forEach(groups, (group) => Effect.forEach(group, one, { concurrency }), { concurrency: 1 }),
    (answers) => answers.flat()
  )
}

/** Whether a call runs alone: its action is marked `Action.serial` (for an MCP tool, all its tools or this one). */
const isSerial = (prepared: Prepared): boolean => {
  const serial = prepared.made?.entry?.action.policies.serial
  if (serial === undefined) return false
  return serial === true || (prepared.made?.tool !== undefined && serial.includes(prepared.made.tool))
}
