/**
 * One chat turn and its resume: calls the model with the turn's toolkit,
 * answers every tool call of a step through the agent's pipeline (each id
 * exactly once), publishes `ChatStep` and the tool call events, and pauses
 * with a `PausedState` when a call needs an approval.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Action from "../../Action.ts"
import {
  type ActionError,
  ActionNotFound,
  ApprovalRequired,
  isActionError,
  type RetrievalFailure,
  Unauthorized,
  type ValidationError
} from "../../ActionError.ts"
import * as Approval from "../../Approval.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import * as ApprovalStore from "../../ApprovalStore.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import * as Conversion from "../schema/decode.ts"
import * as Output from "../schema/output.ts"
import * as LlmExecutor from "../executor/llm.ts"
import * as EventHub from "../events/hub.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as ChatMessages from "./messages.ts"
import * as ChatToolkit from "./toolkit.ts"
import type { AgentRuntime } from "../executor/attempt.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as McpToolkit from "./mcpToolkit.ts"
import type * as Resilience from "../../Resilience.ts"
import * as RunStep from "../run/attempt.ts"
import { noGuards } from "../run/guard.ts"
import type * as Role from "../../Role.ts"
import * as ToolResultText from "../../ToolResult.ts"
import * as Tool from "../schema/tool.ts"
import { keepEnds } from "../text.ts"
import {
  AwaitingApproval,
  type ChatEvent,
  type ChatOptions,
  type ChatResult,
  type ChatStreamOptions,
  Completed,
  type Decision,
  type Decisions,
  PausedState,
  type PendingCall,
  pausedStateVersion,
  type Step,
  type StepHooks,
  type ToolAnswer,
  type StepFinished,
  StepLimitReached,
  type ToolResult,
  type Usage,
  systemPrompt
} from "../../Chat.ts"

/** The action name model calls of a turn are made for (it names their errors and span). */
const chatAction = "chat"

/** The name of the response format a turn's `output` schema is sent under. */
const outputName = "output"

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/**
 * What `Agent.make` hands the chat loop: the agent's id and roles, its
 * actions by name, compiled authority, default approval store, event hub,
 * per-agent runtime (MCP connections), and its pipeline (`executeAction`).
 *
 * @since 0.1.0
 */
export interface Host<R> {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly actions: ReadonlyMap<string, { readonly action: Action.Any }>
  readonly authority: AuthorityKernel.Compiled
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
  readonly hub: EventHub.Hub
  readonly runtime: AgentRuntime
  readonly executeAction: (
    name: string,
    params: Readonly<Record<string, unknown>>,
    call?: Telemetry.ToolCallSpan
  ) => Effect.Effect<unknown, ActionError | RetrievalFailure, R>
}

/**
 * An agent's chat turns (what `agent.chat`, `agent.resume`,
 * `agent.chatStream` and `agent.resumeStream` delegate to).
 *
 * - `chat(input, options)`: `input` is the user's message, or a message list
 *   from an earlier turn (decoded with `LanguageModel.Message`; every tool
 *   call in it must be answered once; without a system message one is put
 *   first).
 * - `resume(state, decisions, options)`: one decision per pending call
 *   (approved: the token is approved in the store — the `ApprovalStore`
 *   provided to the call, else the agent's — and the call runs with it;
 *   rejected: the token is rejected and the model gets an APPROVAL error
 *   with the reason; a token the store refuses to approve, e.g. expired or
 *   already used by an earlier resume, is answered with that APPROVAL error
 *   and the call does not run); then the turn continues.
 *
 * Both fail with an `ActionError` only when the turn itself cannot go on:
 * VALIDATION for bad options, history, state or decisions, or "LanguageModel
 * not provided"; a model call's failure (after `options.retry`). A tool
 * call's failure never fails the turn: it becomes that call's tool message,
 * `{"error":{"category","message"}}` (`"RETRIEVAL"` for a knowledge
 * retrieval failure). Interruption stops the turn and its tool calls.
 *
 * - `chatStream`, `resumeStream`: the same turns as streams of chat events,
 *   `TurnFinished` last; `chat` and `resume` run the same loop to the same
 *   result, but call the model without streaming and make no events, while
 *   the streams stream each model call. Stopping the stream
 *   (interrupting it, or no longer pulling) stops the turn: the model's HTTP
 *   stream is aborted, running tool calls are interrupted, and no partial
 *   text is kept anywhere.
 *
 * @since 0.1.0
 */
export interface Chats<R> {
  readonly chat: (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: ChatOptions
  ) => Effect.Effect<ChatResult, ActionError, R>
  readonly resume: (
    state: PausedState,
    decisions: Decisions,
    options?: ChatOptions
  ) => Effect.Effect<ChatResult, ActionError, R>
  readonly chatStream: (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: ChatStreamOptions
  ) => Stream.Stream<ChatEvent, ActionError, R>
  readonly resumeStream: (
    state: PausedState,
    decisions: Decisions,
    options?: ChatStreamOptions
  ) => Stream.Stream<ChatEvent, ActionError, R>
}

interface Settings {
  readonly hooks: StepHooks | undefined
  readonly maxSteps: number
  readonly concurrency: number
  readonly strict: boolean
  readonly model: string | undefined
  readonly temperature: number | undefined
  readonly policy: Resilience.Policy | undefined
  /** The `output` schema and the response format asked for with it. */
  readonly output: { readonly schema: Schema.Top; readonly format: LanguageModel.ResponseFormat } | undefined
}

const positiveInt = (
  name: string,
  value: number | undefined,
  fallback: number
): Result.Result<number, ValidationError> =>
  value === undefined
    ? Result.succeed(fallback)
    : Number.isInteger(value) && value >= 1
      ? Result.succeed(value)
      : Result.fail(ChatMessages.invalid(chatAction, name, `${name} must be an integer >= 1, got ${value}`))

const settingsOf = (
  options: ChatOptions | undefined,
  roles: ReadonlyArray<Role.Any>,
  maxStepsDefault: number
): Result.Result<Settings, ValidationError> => {
  const maxSteps = positiveInt("maxSteps", options?.maxSteps, maxStepsDefault)
  if (Result.isFailure(maxSteps)) return Result.fail(maxSteps.failure)
  const concurrency = positiveInt("concurrency", options?.concurrency, 4)
  if (Result.isFailure(concurrency)) return Result.fail(concurrency.failure)
  const model = options?.model ?? roles.find((role) => role.spec.model?.name !== undefined)?.spec.model?.name
  const roleTemperature = roles.find((role) => (role.spec.model?.temperature ?? -1) >= 0)?.spec.model?.temperature
  // As for llm actions, a negative temperature (-1) keeps the client's own setting.
  const given = options?.temperature
  const temperature = given !== undefined && given >= 0 ? given : given === undefined ? roleTemperature : undefined
  const retry = options?.retry
  const policy =
    retry === undefined && options?.modelTimeout === undefined
      ? undefined
      : { retry, attemptTimeout: options?.modelTimeout }
  const schema = options?.output
  if (schema !== undefined && !Schema.isSchema(schema)) {
    return Result.fail(ChatMessages.invalid(chatAction, "output", "output must be an Effect Schema"))
  }
  const projected = schema === undefined ? undefined : Output.make(schema, outputName)
  if (projected !== undefined && Result.isFailure(projected)) {
    return Result.fail(
      ChatMessages.invalid(
        chatAction,
        "output",
        `the output schema has no JSON Schema form: ${projected.failure.message}`
      )
    )
  }
  return Result.succeed({
    hooks: options?.steps,
    output:
      schema === undefined || projected === undefined || Result.isFailure(projected)
        ? undefined
        : { schema, format: projected.success.format },
    maxSteps: maxSteps.success,
    concurrency: concurrency.success,
    strict: options?.strict ?? false,
    model,
    temperature,
    policy
  })
}

const modelNotProvided = ChatMessages.invalid(
  chatAction,
  "",
  "LanguageModel not provided: provide a LanguageModel layer (e.g. @rolecraft/openai) to chat"
)

const requireModel: Effect.Effect<LanguageModel.LanguageModel["Service"], ValidationError> = Effect.flatMap(
  Effect.serviceOption(LanguageModel.LanguageModel),
  (model) => (Option.isSome(model) ? Effect.succeed(model.value) : Effect.fail(modelNotProvided))
)

/** One tool call's answer; `pending` when it waits for an approval (then it is not sent yet). */
type Answered = ToolAnswer

/**
 * The most characters of one tool message sent to the model: 64,000. A longer result keeps its head and
 * tail around a marker saying how many characters were left out; the caller and the output guardrail still
 * see the whole result.
 */
export const maxToolResultCharacters = 64_000

const answered = (toolCallId: string, action: string, value: unknown): Answered => {
  // The text Mcp.serve sends too, on the JSON writer of the output guardrail and ActionResult.asString.
  const text = ToolResultText.success(value, { action })
  if (Result.isFailure(text)) return failed(toolCallId, text.failure)
  return {
    message: { role: "tool", toolCallId, content: keepEnds(text.success, maxToolResultCharacters) },
    category: undefined,
    success: true,
    pending: undefined
  }
}

const failed = (toolCallId: string, error: ActionError | RetrievalFailure, pending?: PendingCall): Answered => ({
  message: { role: "tool", toolCallId, content: ChatMessages.errorContent(error) },
  category: isActionError(error) ? error.category : undefined,
  success: false,
  pending
})

/** Sends an event to the turn's caller. */
type Emit = (event: ChatEvent) => Effect.Effect<void>

/** The state of a turn while it runs (local to one turn). */
interface Turn {
  readonly messages: Array<LanguageModel.Message>
  steps: number
  readonly prior: Usage
  readonly settings: Settings
  readonly meter: LanguageModel.UsageMeter["Service"]
  readonly emit: Emit
  readonly emitAll: (events: ReadonlyArray<ChatEvent>) => Effect.Effect<void>
  /** Stream each model call (`chatStream`), or generate it (`chat`). */
  readonly streaming: boolean
  readonly argumentDeltas: boolean
}

const toolResult = (step: number, answer: Answered): ToolResult => ({
  _tag: "ToolResult",
  step,
  toolCallId: answer.message.toolCallId,
  success: answer.success,
  ...(answer.category === undefined ? {} : { category: answer.category }),
  content: answer.message.content
})

/**
 * Builds an agent's chat turns (`Agent.make` calls it once per agent).
 *
 * @since 0.1.0
 */
export const make = <R>(host: Host<R>): Chats<R> => {
  const { id, hub, authority } = host
  const system = systemPrompt(id, host.roles)
  const toolkitOf = ChatToolkit.make(host)

  // ---------------------------------------------------------------------------
  // One tool call
  // ---------------------------------------------------------------------------

  const isPending = (error: ActionError | RetrievalFailure, action: string): error is ApprovalRequired =>
    error._tag === "ApprovalRequired" &&
    error.check === "missing" &&
    error.pendingTokenId !== undefined &&
    error.action === action

  /** Runs a routed call through the pipeline; a pending approval is returned as such. */
  const runRouted = (
    toolCallId: string,
    tool: string,
    route: McpToolkit.Route,
    args: Readonly<Record<string, unknown>>,
    token?: string
  ): Effect.Effect<Answered, never, R> => {
    const params = route.tool === undefined ? args : { tool: route.tool, arguments: args }
    const call = host.executeAction(
      route.action,
      token === undefined ? params : { ...params, [Approval.reservedParameter]: token },
      { id: toolCallId, tool }
    )
    return Effect.map(Effect.result(call), (outcome) => {
      if (outcome._tag === "Success") return answered(toolCallId, route.action, outcome.success)
      const error = outcome.failure
      if (token === undefined && isPending(error, route.action)) {
        const pending: PendingCall = {
          toolCallId,
          action: route.action,
          ...(route.tool === undefined ? {} : { tool: route.tool }),
          arguments: args,
          pendingTokenId: error.pendingTokenId as string,
          reason: error.reason
        }
        return failed(toolCallId, error, pending)
      }
      return failed(toolCallId, error)
    })
  }

  const ready = (
    turn: Turn,
    toolCallId: string,
    route: McpToolkit.Route,
    args: Readonly<Record<string, unknown>>
  ): Effect.Effect<void> =>
    turn.emit({
      _tag: "ToolCallReady",
      step: turn.steps,
      toolCallId,
      action: route.action,
      ...(route.tool === undefined ? {} : { tool: route.tool }),
      arguments: args
    })

  const unknownTool = (call: LanguageModel.ToolCall, kit: McpToolkit.McpToolkit): ActionError => {
    // Authority first: a name it denies is AUTHORITY whether or not it exists.
    if (!AuthorityKernel.allows(authority, call.name)) {
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
  const refusedEarly = (call: LanguageModel.ToolCall, error: ActionError): Effect.Effect<Answered> =>
    Effect.fail(error).pipe(
      Telemetry.executeTool(
        { tool: call.name, toolCallId: call.id, attributes: { "rolecraft.agent": id }, arguments: undefined },
        undefined
      ),
      Effect.catch((refused) => Effect.succeed(failed(call.id, refused)))
    )

  const answerCall = (
    call: LanguageModel.ToolCall,
    kit: McpToolkit.McpToolkit,
    turn: Turn
  ): Effect.Effect<Answered, never, R> => {
    const route = kit.route(call.name)
    if (route === undefined) return refusedEarly(call, unknownTool(call, kit))
    const label = route.tool === undefined ? route.action : `${route.action}/${route.tool}`
    const parsed = Tool.parseArguments(call.arguments, { tool: label })
    if (Result.isFailure(parsed)) return refusedEarly(call, parsed.failure)
    return Effect.andThen(
      ready(turn, call.id, route, parsed.success),
      runRouted(call.id, call.name, route, parsed.success)
    )
  }

  /**
   * Publishes ToolCallStarted/Finished around an answer, only when someone
   * listens to `agent.events`; streams the answer's `ToolResult` to the
   * caller unless it waits for an approval.
   */
  const observed = (
    turn: Turn,
    call: LanguageModel.ToolCall,
    route: McpToolkit.Route | undefined,
    answer: Effect.Effect<Answered, never, R>
  ): Effect.Effect<Answered, never, R> => {
    const step = turn.steps
    const reported = Effect.tap(answer, (result) =>
      result.pending === undefined ? turn.emit(toolResult(step, result)) : Effect.void
    )
    return Effect.suspend(() => {
      if (hub.subscribers() === 0) return reported
      const about = {
        agentId: id,
        step,
        toolCallId: call.id,
        tool: call.name,
        action: route?.action,
        mcpTool: route?.tool
      }
      return Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        yield* EventHub.publish(hub, { _tag: "ToolCallStarted", ...about, timestamp: start })
        const result = yield* reported
        const now = yield* Clock.currentTimeMillis
        yield* EventHub.publish(hub, {
          _tag: "ToolCallFinished",
          ...about,
          success: result.success,
          category: result.category,
          durationMs: now - start,
          timestamp: now
        })
        return result
      })
    })
  }

  /** A tool call through the `tool` hook of the turn, if any. */
  const hooked = (
    hooks: StepHooks | undefined,
    step: Extract<Step, { readonly _tag: "Tool" }>,
    answer: Effect.Effect<Answered, never, R>
  ): Effect.Effect<Answered, never, R> => (hooks?.tool === undefined ? answer : hooks.tool(step, answer))

  const answerAll = (
    calls: ReadonlyArray<LanguageModel.ToolCall>,
    kit: McpToolkit.McpToolkit,
    turn: Turn
  ): Effect.Effect<ReadonlyArray<Answered>, never, R> => {
    const one = (call: LanguageModel.ToolCall) =>
      observed(
        turn,
        call,
        kit.route(call.name),
        hooked(
          turn.settings.hooks,
          { _tag: "Tool", step: turn.steps, toolCallId: call.id, name: call.name, decided: false },
          answerCall(call, kit, turn)
        )
      )
    const first = calls[0]
    return calls.length === 1 && first !== undefined
      ? Effect.map(one(first), (answer) => [answer])
      : Effect.forEach(calls, one, { concurrency: turn.settings.concurrency })
  }

  // ---------------------------------------------------------------------------
  // The steps
  // ---------------------------------------------------------------------------

  /**
   * One model call, its text and tool-call starts sent to the caller as they
   * arrive; the response with its tool calls under the ids the caller saw
   * (empty or repeated ids of a step made unique).
   */
  const attempt = (
    model: LanguageModel.LanguageModel["Service"],
    request: LanguageModel.Request,
    turn: Turn
  ): Effect.Effect<LanguageModel.Response, ActionError> =>
    Effect.suspend(() => {
      const step = turn.steps + 1
      const ids: Array<readonly [index: number, id: string]> = []
      const seen = new Set<string>()
      const idOf = new Map<number, string>()
      let response: LanguageModel.Response | undefined
      /** The events of a batch of parts (one batch, one offer to the caller). */
      const eventsOf = (batch: ReadonlyArray<LanguageModel.StreamPart>): ReadonlyArray<ChatEvent> => {
        const events: Array<ChatEvent> = []
        for (const part of batch) {
          switch (part._tag) {
            case "TextDelta":
              events.push({ _tag: "TextDelta", step, delta: part.delta })
              break
            case "ToolCallStarted": {
              const toolCallId = ChatMessages.uniqueId(part.id, seen, step, part.index)
              ids.push([part.index, toolCallId])
              idOf.set(part.index, toolCallId)
              events.push({ _tag: "ToolCallStarted", step, toolCallId, tool: part.name })
              break
            }
            case "ToolCallArgumentsDelta":
              if (turn.argumentDeltas) {
                events.push({
                  _tag: "ToolCallArgumentsDelta",
                  step,
                  toolCallId: idOf.get(part.index) ?? part.id,
                  delta: part.delta
                })
              }
              break
            case "Finished":
              response = part.response
              break
          }
        }
        return events
      }
      const withIds = (): LanguageModel.Response => {
        const finished = response as LanguageModel.Response
        // The response's calls are in index order, as are the starts sorted by index.
        const order = ids.slice().sort((a, b) => a[0] - b[0])
        const toolCalls = finished.toolCalls.map((call, i) => {
          const fresh = order[i]?.[1] ?? call.id
          return fresh === call.id ? call : { ...call, id: fresh }
        })
        return { ...finished, toolCalls }
      }
      const started = turn.emit({ _tag: "StepStarted", step })
      // Not streaming: the whole answer, its parts read at once (no stream to run).
      if (!turn.streaming) {
        return Effect.andThen(
          started,
          Effect.flatMap(model.generate(request), (answer) => {
            const events = eventsOf(LanguageModel.partsOf(answer))
            return Effect.as(events.length === 0 ? Effect.void : turn.emitAll(events), withIds())
          })
        )
      }
      return started.pipe(
        Effect.andThen(
          Stream.runForEachArray(model.stream(request), (batch) => {
            const events = eventsOf(batch)
            return events.length === 0 ? Effect.void : turn.emitAll(events)
          })
        ),
        Effect.map(withIds)
      )
    })

  const generate = (
    model: LanguageModel.LanguageModel["Service"],
    turn: Turn,
    kit: McpToolkit.McpToolkit
  ): Effect.Effect<LanguageModel.Response, ActionError> => {
    const { settings } = turn
    const request: LanguageModel.Request = {
      messages: turn.messages.slice(),
      tools: kit.tools,
      action: chatAction,
      ...(settings.model === undefined ? {} : { model: settings.model }),
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.output === undefined ? {} : { responseFormat: settings.output.format })
    }
    const once = attempt(model, request, turn)
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
   * The toolkit of model call `step`: through the `tools` hook, if any, which
   * may narrow it to the names it returns (a replay's recorded list).
   */
  const offered = (turn: Turn, step: number): Effect.Effect<McpToolkit.McpToolkit> =>
    Effect.flatMap(toolkitOf(turn.settings.strict), (kit) => {
      const hook = turn.settings.hooks?.tools
      if (hook === undefined) return Effect.succeed(kit)
      return Effect.map(
        hook(
          { _tag: "Tools", step },
          Effect.sync(() => kit.tools.map((tool) => tool.name))
        ),
        (names) => {
          const kept = new Set(names)
          return {
            ...kit,
            tools: kit.tools.filter((tool) => kept.has(tool.name)),
            route: (name: string) => (kept.has(name) ? kit.route(name) : undefined)
          }
        }
      )
    })

  const usageOf = (turn: Turn): Effect.Effect<Usage> =>
    Effect.map(turn.meter.total, ({ usage }) => LanguageModel.addUsage(turn.prior, usage))

  /** The turn's model calls and tool calls, step after step, to its result. */
  const loop = (
    model: LanguageModel.LanguageModel["Service"],
    turn: Turn
  ): Effect.Effect<ChatResult, ActionError, R> => {
    if (turn.steps >= turn.settings.maxSteps) {
      return Effect.map(usageOf(turn), (usage) =>
        StepLimitReached({ messages: turn.messages, usage, steps: turn.steps })
      )
    }
    return Effect.flatMap(offered(turn, turn.steps + 1), (kit) => {
      const hook = turn.settings.hooks?.model
      const called =
        hook === undefined
          ? generate(model, turn, kit)
          : hook({ _tag: "Model", step: turn.steps + 1 }, generate(model, turn, kit))
      return Effect.flatMap(called, (response) => stepped(model, turn, kit, response))
    })
  }

  /** What follows one model call: the answer, or the tool calls' results and the next step. */
  const stepped = (
    model: LanguageModel.LanguageModel["Service"],
    turn: Turn,
    kit: McpToolkit.McpToolkit,
    response: LanguageModel.Response
  ): Effect.Effect<ChatResult, ActionError, R> => {
    turn.steps += 1
    const calls = response.toolCalls
    turn.messages.push(
      calls.length === 0
        ? { role: "assistant", content: response.text }
        : { role: "assistant", content: response.text, toolCalls: calls }
    )
    const published =
      hub.subscribers() === 0
        ? Effect.void
        : Effect.flatMap(Clock.currentTimeMillis, (timestamp) =>
            EventHub.publish(hub, {
              _tag: "ChatStep",
              agentId: id,
              step: turn.steps,
              toolCalls: calls.length,
              usage: response.usage,
              timestamp
            })
          )
    const stepFinished: StepFinished = {
      _tag: "StepFinished",
      step: turn.steps,
      finishReason: response.finishReason,
      usage: response.usage
    }
    if (calls.length === 0) {
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
      return published.pipe(
        Effect.andThen(turn.emit(stepFinished)),
        Effect.andThen(Effect.zip(decoded, usageOf(turn))),
        Effect.map(([decodedOutput, usage]) =>
          Completed({
            text: response.text,
            messages: turn.messages,
            usage,
            steps: turn.steps,
            finishReason: response.finishReason,
            ...(response.refusal === undefined ? {} : { refusal: response.refusal }),
            ...(decodedOutput === undefined ? {} : { output: decodedOutput.value })
          })
        )
      )
    }
    return Effect.andThen(
      published,
      Effect.flatMap(answerAll(calls, kit, turn), (answers) => {
        const pending: Array<PendingCall> = []
        for (const answer of answers) {
          if (answer.pending === undefined) turn.messages.push(answer.message)
          else pending.push(answer.pending)
        }
        if (pending.length === 0) return Effect.andThen(turn.emit(stepFinished), loop(model, turn))
        return turn.emit(stepFinished).pipe(
          Effect.andThen(turn.emit({ _tag: "ApprovalRequested", pending })),
          Effect.andThen(usageOf(turn)),
          Effect.map((usage) =>
            AwaitingApproval({
              pending,
              state: {
                version: pausedStateVersion,
                messages: turn.messages,
                pending,
                steps: turn.steps,
                maxSteps: turn.settings.maxSteps,
                usage
              }
            })
          )
        )
      })
    )
  }

  /** Runs `body` with a fresh usage meter for the turn (nested in any meter already there). */
  const metered = <A>(
    body: (meter: LanguageModel.UsageMeter["Service"]) => Effect.Effect<A, ActionError, R>
  ): Effect.Effect<A, ActionError, R> =>
    Effect.flatMap(LanguageModel.makeUsageMeter, (meter) =>
      Effect.provideService(body(meter), LanguageModel.UsageMeter, meter)
    )

  const turnEnd = (result: ChatResult): Telemetry.TurnEnd => {
    const usage = result._tag === "AwaitingApproval" ? result.state.usage : result.usage
    return {
      result: result._tag,
      steps: result._tag === "AwaitingApproval" ? result.state.steps : result.steps,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      finishReason: result._tag === "Completed" ? result.finishReason : undefined
    }
  }

  /** A turn (or its resumption) in its `invoke_agent` span. */
  const span = (options: ChatOptions | undefined, resumed: boolean) =>
    Telemetry.invokeAgent(
      {
        agentId: id,
        model: options?.model ?? host.roles.find((role) => role.spec.model?.name !== undefined)?.spec.model?.name,
        resumed
      },
      turnEnd
    )

  /** How a turn is run: whether its model calls stream, and where its events go. */
  interface Mode {
    readonly emit: Emit
    readonly emitAll: (events: ReadonlyArray<ChatEvent>) => Effect.Effect<void>
    readonly streaming: boolean
    readonly argumentDeltas: boolean
  }

  const start = (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options: ChatOptions | undefined,
    mode: Mode
  ): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.suspend(() => {
      const settings = settingsOf(options, host.roles, 10)
      if (Result.isFailure(settings)) return Effect.fail(settings.failure)
      const first = options?.system ?? system
      const history: Effect.Effect<Array<LanguageModel.Message>, ActionError> = typeof input === "string"
        ? Effect.succeed([
            { role: "system", content: first },
            { role: "user", content: input }
          ])
        : ChatMessages.historyOf(chatAction, input, first)
      return Effect.flatMap(Effect.zip(requireModel, history), ([model, messages]) =>
        metered((meter) => loop(model, { messages, steps: 0, prior: zero, settings: settings.success, meter, ...mode }))
      )
    }).pipe(span(options, false))

  // ---------------------------------------------------------------------------
  // Resuming
  // ---------------------------------------------------------------------------

  const decide = (
    pending: PendingCall,
    decision: Decision,
    turn: Turn,
    name: string
  ): Effect.Effect<Answered, never, R> => {
    const route: McpToolkit.Route =
      pending.tool === undefined ? { action: pending.action } : { action: pending.action, tool: pending.tool }
    const label = pending.tool === undefined ? pending.action : `${pending.action}/${pending.tool}`
    const refused = (check: ApprovalStore.ApprovalTokenError["check"], detail: string) =>
      failed(
        pending.toolCallId,
        new ApprovalRequired({
          action: pending.action,
          reason: pending.reason,
          check,
          message: `${label} requires approval (${pending.reason}): ${detail}`
        })
      )
    const answer = Effect.flatMap(ApprovalKernel.storeOf(host.approvals), (store) =>
      decision._tag === "Reject"
        ? Effect.as(
            Effect.ignore(store.reject(pending.pendingTokenId, decision.approver, decision.reason)),
            refused("rejected", `rejected by ${decision.approver}: ${decision.reason}`)
          )
        : Effect.matchEffect(store.approve(pending.pendingTokenId, decision.approver), {
            onFailure: (refusal) => Effect.succeed(refused(refusal.check, ApprovalStore.describeCheck(refusal.check))),
            onSuccess: () =>
              Effect.andThen(
                ready(turn, pending.toolCallId, route, pending.arguments),
                runRouted(pending.toolCallId, name, route, pending.arguments, pending.pendingTokenId)
              )
          })
    )
    return observed(
      turn,
      { id: pending.toolCallId, name, arguments: "" },
      route,
      hooked(
        turn.settings.hooks,
        { _tag: "Tool", step: turn.steps, toolCallId: pending.toolCallId, name, decided: true },
        answer
      )
    )
  }

  const proceed = (
    raw: PausedState,
    decisions: Decisions,
    options: ChatOptions | undefined,
    mode: Mode
  ): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.gen(function* () {
      const version =
        typeof raw === "object" && raw !== null ? (raw as { readonly version?: unknown }).version : undefined
      if (version !== pausedStateVersion) {
        return yield* ChatMessages.invalid(
          "resume",
          "version",
          version === undefined
            ? `the paused state has no version; this Rolecraft resumes version ${pausedStateVersion} (a state saved before versions were added cannot be resumed)`
            : `the paused state is version ${JSON.stringify(version)}; this Rolecraft resumes version ${pausedStateVersion}`
        )
      }
      const state = yield* Conversion.decode(PausedState, raw, { action: "resume" })
      const checked = ChatMessages.checkPaused("resume", state.messages, state.pending, decisions)
      if (Result.isFailure(checked)) return yield* checked.failure
      const calls = checked.success
      const settings = settingsOf(options, host.roles, state.maxSteps)
      if (Result.isFailure(settings)) return yield* settings.failure
      const model = yield* requireModel
      return yield* metered((meter) =>
        Effect.gen(function* () {
          const turn: Turn = {
            messages: [],
            steps: state.steps,
            prior: state.usage,
            settings: settings.success,
            meter,
            ...mode
          }
          const answers = yield* Effect.forEach(
            state.pending,
            (call) =>
              decide(
                call,
                decisions[call.toolCallId] as Decision,
                turn,
                calls.find((c) => c.id === call.toolCallId)?.name ?? call.action
              ),
            { concurrency: settings.success.concurrency }
          )
          turn.messages.push(
            ...ChatMessages.withAnswers(
              state.messages,
              answers.map((answer) => answer.message)
            )
          )
          return yield* loop(model, turn)
        })
      )
    }).pipe(span(options, true))

  // ---------------------------------------------------------------------------
  // The turns as streams, and run without one
  // ---------------------------------------------------------------------------

  /** A turn as a stream of its events, `TurnFinished` last. */
  const events = (
    run: (mode: Mode) => Effect.Effect<ChatResult, ActionError, R>,
    streaming: boolean,
    argumentDeltas: boolean
  ): Stream.Stream<ChatEvent, ActionError, R> =>
    Stream.callback<ChatEvent, ActionError, R>(
      (queue) => {
        // Each offer hands its events to a waiting caller at once, not after the scheduler's next turn: the
        // turn would otherwise run on through every chunk already received before the caller saw the first.
        const flushed = Queue.flush(queue)
        const emit: Emit = (event) => Effect.andThen(Queue.offer(queue, event), flushed)
        const emitAll = (events: ReadonlyArray<ChatEvent>) => Effect.andThen(Queue.offerAll(queue, events), flushed)
        return run({ emit, emitAll, streaming, argumentDeltas }).pipe(
          Effect.flatMap((result) => emit({ _tag: "TurnFinished", result })),
          Effect.andThen(Queue.end(queue))
        )
      },
      { bufferSize: 16, strategy: "suspend" }
    )

  /** How `chat` and `resume` run a turn: the same loop, its events dropped as they happen, no stream. */
  const unstreamed: Mode = {
    emit: () => Effect.void,
    emitAll: () => Effect.void,
    streaming: false,
    argumentDeltas: false
  }

  const chatStream: Chats<R>["chatStream"] = (input, options) =>
    events((mode) => start(input, options, mode), true, options?.argumentDeltas ?? false)

  const resumeStream: Chats<R>["resumeStream"] = (state, decisions, options) =>
    events((mode) => proceed(state, decisions, options, mode), true, options?.argumentDeltas ?? false)

  const chat: Chats<R>["chat"] = (input, options) => start(input, options, unstreamed)

  const resume: Chats<R>["resume"] = (state, decisions, options) => proceed(state, decisions, options, unstreamed)

  return { chat, resume, chatStream, resumeStream }
}
