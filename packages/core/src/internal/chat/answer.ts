/**
 * Answering the model's tool calls: each call routed to the action (and MCP server tool) offered under its
 * name, its arguments parsed, run through the agent's pipeline, and answered with exactly one tool message —
 * the result's text, or `{"error":{"category","message"}}`. A call never fails the turn: a name never
 * offered (AUTHORITY when the agent's authority denies it, else NOT_FOUND), arguments that are not a JSON
 * object (VALIDATION) and the pipeline's failures are all answers. A call that needs an approval is answered
 * as pending, with the call the turn pauses for.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import {
  type ActionError,
  ActionNotFound,
  type ApprovalRequired,
  isActionError,
  type RetrievalFailure,
  Unauthorized,
  type ValidationError
} from "../../ActionError.ts"
import type { PendingCall, ToolAnswer, ToolCallAnswered } from "../../Chat.ts"
import type { Step } from "../../StepHooks.ts"
import type * as Prompt from "../../Prompt.ts"
import * as Nesting from "../agent/nesting.ts"
import * as EventHub from "../events/hub.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import * as Redact from "../redact.ts"
import * as Secrets from "../secrets.ts"
import { keepEnds } from "../text.ts"
import { parseArguments } from "../tool/arguments.ts"
import type * as Toolkit from "../tool/toolkit.ts"
import * as ToolContent from "../../ToolContent.ts"
import type { Turn } from "./context.ts"
import * as ChatMessages from "./messages.ts"

/** Where a call goes: the action to run, and the MCP server's own tool name for a server's tool. */
export interface Route {
  readonly action: string
  readonly tool?: string | undefined
}

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
  return {
    message: { role: "tool", toolCallId, content: text.success },
    category: undefined,
    success: true,
    pending: undefined
  }
}

/** A call's answer from its failure; `pending` when it waits for an approval (its message is then not sent yet). */
export const failed = (
  toolCallId: string,
  error: ActionError | RetrievalFailure,
  pending?: PendingCall
): ToolAnswer => ({
  message: { role: "tool", toolCallId, content: ChatMessages.errorContent(error) },
  category: isActionError(error) ? error.category : undefined,
  success: false,
  pending
})

/**
 * The tool message of an answer as the model is sent it: every secret the turn knows replaced (before a
 * cut, so no cut leaves the start of one behind), then a result cut to {@link maxToolResultCharacters}.
 */
export const written = (answer: ToolAnswer, secrets: ReadonlyArray<Redacted.Redacted<string>>): ToolAnswer => {
  const { content } = answer.message
  const redacted = secrets.length === 0 ? content : Redact.text(content, secrets)
  const fitted = answer.success ? keepEnds(redacted, maxToolResultCharacters) : redacted
  return fitted === content ? answer : { ...answer, message: { ...answer.message, content: fitted } }
}

const isPending = (error: ActionError | RetrievalFailure, action: string): error is ApprovalRequired =>
  error._tag === "ApprovalRequired" &&
  error.check === "missing" &&
  error.pendingTokenId !== undefined &&
  error.action === action

/**
 * Runs a routed call through the pipeline, with the approval token a decision gave it (none for a model's
 * call); a call that needs an approval, made without a token, is answered as pending.
 */
export const run = <R>(
  turn: Turn<R>,
  call: { readonly id: string; readonly name: string },
  route: Route,
  args: Readonly<Record<string, unknown>>,
  token?: string
): Effect.Effect<ToolAnswer, never, R> => {
  const composed = Nesting.composedOf(turn.host.actions.get(route.action)?.action)
  if (composed !== undefined) return runComposed(turn, call, route, args, composed, token, undefined)
  const params = route.tool === undefined ? args : { tool: route.tool, arguments: args }
  const ran = turn.host.run(route.action, params, {
    token,
    call: { id: call.id, tool: call.name },
    secrets: turn.secrets
  })
  return Effect.map(Effect.result(ran), (outcome) => {
    if (outcome._tag === "Success") return answered(call.id, route.action, outcome.success)
    const error = outcome.failure
    if (token === undefined && isPending(error, route.action)) {
      const pending: PendingCall = {
        toolCallId: call.id,
        action: route.action,
        ...(route.tool === undefined ? {} : { tool: route.tool }),
        arguments: args,
        pendingTokenId: error.pendingTokenId as string,
        reason: error.reason
      }
      return failed(call.id, error, pending)
    }
    return failed(call.id, error)
  })
}

/**
 * A call of an agent used as an action, or of a handoff: run through the pipeline (or, given `resumption`,
 * continued at its run step with the inner turn resumed) with the {@link Nesting.Call} its body reads. The
 * answer carries the inner turn's pause (`nested`), the handoff, and the tokens of each agent it ran.
 */
export const runComposed = <R>(
  turn: Turn<R>,
  call: { readonly id: string; readonly name: string },
  route: Route,
  args: Readonly<Record<string, unknown>>,
  composed: Nesting.Composed,
  token: string | undefined,
  resumption: Nesting.Call["resumption"]
): Effect.Effect<ToolAnswer, never, R> =>
  Effect.flatMap(Effect.service(Nesting.CurrentPlace), (place) => {
    const nesting: Nesting.Call = {
      path: place?.path ?? [turn.host.id],
      bound: place?.bound ?? (turn.composed.bound ??= Nesting.boundOf(composed)),
      toolCallId: call.id,
      emit: turn.streaming ? turn.emit : undefined,
      resumption,
      paused: undefined,
      handoff: undefined,
      usage: undefined
    }
    const options = { call: { id: call.id, tool: call.name }, secrets: turn.secrets }
    const ran =
      resumption === undefined
        ? turn.host.run(route.action, args, { ...options, token })
        : turn.host.proceed(route.action, args, options)
    return Effect.map(Effect.result(Effect.provideService(ran, Nesting.CurrentCall, nesting)), (outcome) => {
      const { paused, handoff, usage } = nesting
      let made: ToolAnswer
      if (outcome._tag === "Success") {
        made = answered(call.id, route.action, outcome.success)
        if (handoff !== undefined) made = { ...made, handoff }
      } else if (paused !== undefined && outcome.failure._tag === "ApprovalRequired") {
        made = {
          ...failed(call.id, outcome.failure),
          nested: {
            toolCallId: call.id,
            action: route.action,
            agent: paused.agent,
            arguments: paused.arguments,
            state: paused.state
          }
        }
      } else {
        const error = outcome.failure
        made =
          token === undefined && resumption === undefined && isPending(error, route.action)
            ? failed(call.id, error, {
                toolCallId: call.id,
                action: route.action,
                arguments: args,
                pendingTokenId: error.pendingTokenId as string,
                reason: error.reason
              })
            : failed(call.id, error)
      }
      return usage === undefined ? made : { ...made, agents: usage }
    })
  })

/** Tells the caller that a call's arguments are parsed and it is about to run. */
export const ready = <R>(
  turn: Turn<R>,
  step: number,
  toolCallId: string,
  route: Route,
  args: Readonly<Record<string, unknown>>
): Effect.Effect<void> =>
  turn.emit({
    _tag: "ToolCallReady",
    step,
    toolCallId,
    action: route.action,
    ...(route.tool === undefined ? {} : { tool: route.tool }),
    arguments: args
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
 * One of the model's calls, routed and its arguments parsed (once: the answer runs with them, and the history
 * keeps the call by them). `route` is `undefined` for a name never offered.
 */
export interface Prepared {
  readonly call: Prompt.ToolCall
  readonly route: Route | undefined
  readonly parsed: Result.Result<Record<string, unknown>, ValidationError>
}

/** A call of the model routed by the step's toolkit, its arguments parsed (a model cannot present an approval token). */
export const prepare = (call: Prompt.ToolCall, kit: Toolkit.Toolkit): Prepared => {
  const route = kit.find(call.name)
  const label =
    route === undefined ? call.name : route.tool === undefined ? route.action : `${route.action}/${route.tool}`
  return { call, route, parsed: parseArguments(call.arguments, { tool: label }) }
}

/**
 * The call as the conversation keeps it, and sends back to the model: its own arguments when they are a JSON
 * object, else `{}` — arguments that do not parse would make the provider refuse every later request of the
 * conversation. Its answer (VALIDATION, quoting what was received) says what was wrong.
 */
export const kept = (prepared: Prepared): Prompt.ToolCall =>
  Result.isSuccess(prepared.parsed) ? prepared.call : { ...prepared.call, arguments: "{}" }

/** One of the model's calls, prepared: run through the pipeline, or answered before it. */
const answer = <R>(
  turn: Turn<R>,
  step: number,
  prepared: Prepared,
  kit: Toolkit.Toolkit
): Effect.Effect<ToolAnswer, never, R> => {
  const { call, route, parsed } = prepared
  if (route === undefined) return refusedEarly(turn, call, unknownTool(turn, call, kit))
  if (Result.isFailure(parsed)) return refusedEarly(turn, call, parsed.failure)
  return Effect.andThen(ready(turn, step, call.id, route, parsed.success), run(turn, call, route, parsed.success))
}

/**
 * Publishes ToolExecutionStarted/Finished around an answer, only when someone listens to `agent.events`; streams
 * the answer's `ToolCallAnswered` to the caller unless it waits for an approval.
 */
export const observed = <R>(
  turn: Turn<R>,
  step: number,
  call: { readonly id: string; readonly name: string },
  route: Route | undefined,
  answer: Effect.Effect<ToolAnswer, never, R>
): Effect.Effect<ToolAnswer, never, R> => {
  const { hub } = turn.host
  const reported = Effect.tap(answer, (result) =>
    result.pending === undefined && result.nested === undefined ? turn.emit(toolResult(step, result)) : Effect.void
  )
  return Effect.suspend(() => {
    if (hub.subscribers() === 0) return reported
    const about = {
      agentId: turn.host.id,
      step,
      toolCallId: call.id,
      tool: call.name,
      action: route?.action,
      mcpTool: route?.tool
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

const toolResult = (step: number, answer: ToolAnswer): ToolCallAnswered => ({
  _tag: "ToolCallAnswered",
  step,
  toolCallId: answer.message.toolCallId,
  success: answer.success,
  ...(answer.category === undefined ? {} : { category: answer.category }),
  content: answer.message.content
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
      prepared.call,
      prepared.route,
      hooked(
        turn,
        { _tag: "Tool", step, toolCallId: prepared.call.id, name: prepared.call.name, decided: false },
        answer(turn, step, prepared, kit)
      )
    )
  const first = calls[0]
  return calls.length === 1 && first !== undefined
    ? Effect.map(one(first), (answer) => [answer])
    : Effect.forEach(calls, one, { concurrency: turn.settings.concurrency })
}
