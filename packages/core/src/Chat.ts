/**
 * Chat turns (SPEC §7 "Chat turns"): `agent.chat(input, options)` runs one
 * turn of a conversation — the model is called with the tools the agent
 * offers, each tool call it makes runs through the agent's full pipeline and
 * is answered with exactly one tool message, and the model is called again
 * until it answers with text, the step limit is reached, or a tool call needs
 * an approval (then `agent.resume(state, decisions)` continues the turn).
 *
 * Tools offered in each step: every action of the agent's roles that is not
 * `excludeFromModel` and not an mcpTool action, plus every tool of every
 * mcpTool action (the roles' and `Agent.make({ mcpServers })`'s, keyed
 * `<action>/<tool>`), each filtered by the agent's authority (`action`, and
 * `action/tool` for MCP tools), projected by `Tool` through one
 * `McpToolkit` so names are valid, unique across actions and MCP tools, and
 * mapped back (cases C07, C08, C11, C12). An MCP server that cannot list its
 * tools (not reachable, no `McpClient` provided) is left out of that step
 * with a logged warning; the turn goes on.
 *
 * The action part of the toolkit is built once per agent (actions do not
 * change); MCP lists are cached by the agent's connections, and the combined
 * toolkit is rebuilt only when a list changes.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Action from "./Action.ts"
import {
  type ActionError,
  ActionNotFound,
  ApprovalRequired,
  type Category,
  isActionError,
  type RetrievalFailure,
  Unauthorized,
  type ValidationError
} from "./ActionError.ts"
import * as Approval from "./Approval.ts"
import * as ApprovalStore from "./ApprovalStore.ts"
import * as Authority from "./Authority.ts"
import * as Conversion from "./Conversion.ts"
import * as Events from "./Events.ts"
import * as ChatMessages from "./internal/chatMessages.ts"
import * as ChatToolkit from "./internal/chatToolkit.ts"
import type { AgentRuntime } from "./internal/executor.ts"
import * as LanguageModel from "./LanguageModel.ts"
import type * as McpToolkit from "./McpToolkit.ts"
import * as Resilience from "./Resilience.ts"
import type * as Role from "./Role.ts"
import * as Tool from "./Tool.ts"

// =============================================================================
// Options, decisions, results
// =============================================================================

/**
 * Options of a chat turn (`agent.chat`, `agent.resume`).
 *
 * - `maxSteps`: the most model calls the turn makes, an integer >= 1
 *   (default 10). Steps are counted across an approval pause; at the limit
 *   the turn ends with {@link StepLimitReached} (a model that calls the same
 *   failing tool every step ends there: there is no separate
 *   "same failing call twice" guard). On `resume`, default: the paused turn's.
 * - `system`: the system message of a new conversation (default: one built
 *   from the roles by {@link systemPrompt}). A message list that already has a
 *   system message keeps its own.
 * - `concurrency`: how many tool calls of one step run at once, an integer
 *   >= 1 (default 4). Answers are appended in the order of the calls.
 * - `retry`: the retry policy of each model call (`Resilience.RetryPolicy`:
 *   backoff, `retryAfter` honoured, only TIMEOUT and TRANSIENT by default).
 *   Default: none — a failed model call fails the turn.
 * - `modelTimeout`: bounds each model call attempt (TIMEOUT, retryable);
 *   default none (the `LanguageModel` layer's own timeout applies).
 * - `model`, `temperature`: sent with every model call; default the first
 *   role's `spec.model.name` and `spec.model.temperature` (>= 0) that are set,
 *   else the layer's own; a negative `temperature` (-1, as for llm actions)
 *   keeps the client's own setting.
 * - `strict`: ask for the provider's strict mode on every tool (default
 *   `false`); see `Tool.jsonSchema`.
 *
 * @since 0.1.0
 */
export interface ChatOptions {
  readonly maxSteps?: number | undefined
  readonly system?: string | undefined
  readonly concurrency?: number | undefined
  readonly retry?: Resilience.RetryPolicy | undefined
  readonly modelTimeout?: Duration.Input | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly strict?: boolean | undefined
}

/**
 * Tokens a turn spent: every model call of the turn, including those made by
 * llm actions the model called as tools (they are the turn's tokens too), and
 * for a resumed turn those spent before the pause.
 *
 * @since 0.1.0
 */
export type Usage = LanguageModel.Usage

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const UsageSchema = Schema.Struct({
  inputTokens: NonNegativeInt,
  outputTokens: NonNegativeInt,
  totalTokens: NonNegativeInt
})

/**
 * A tool call that waits for an approval (SPEC §7):
 *
 * - `toolCallId`: the model's call id (answered when the turn resumes);
 * - `action`: the agent's action it runs (for an MCP tool, its mcpTool
 *   action), and `tool`: the server's own tool name for an MCP tool;
 * - `arguments`: the arguments as the model sent them, parsed (the tool's own
 *   arguments for an MCP tool);
 * - `pendingTokenId`: the approval token requested for exactly this call
 *   (agent, action, tool, arguments), in the agent's `ApprovalStore`;
 * - `reason`: the action's approval reason, for the approver.
 *
 * @since 0.1.0
 */
export const PendingCall = Schema.Struct({
  toolCallId: Schema.String,
  action: Schema.String,
  tool: Schema.optionalKey(Schema.String),
  arguments: Schema.Record(Schema.String, Schema.Unknown),
  pendingTokenId: Schema.String,
  reason: Schema.String
})

/**
 * @since 0.1.0
 */
export type PendingCall = typeof PendingCall.Type

/**
 * A turn paused for approvals: plain JSON data, so a caller may persist it
 * (`JSON.stringify`) and resume later, in another process, with an agent of
 * the same definition and id and the same `ApprovalStore` (e.g.
 * `ApprovalStore.layerSqlite`).
 *
 * - `messages`: the conversation so far; the last assistant message's calls
 *   are all answered except the pending ones.
 * - `pending`: the calls waiting for a decision.
 * - `steps`: model calls made so far in the turn; `maxSteps`: the turn's limit.
 * - `usage`: tokens spent so far in the turn.
 *
 * `agent.resume` decodes it with this schema (a malformed state is
 * VALIDATION).
 *
 * @since 0.1.0
 */
export const PausedState = Schema.Struct({
  messages: Schema.Array(LanguageModel.Message),
  pending: Schema.Array(PendingCall),
  steps: NonNegativeInt,
  maxSteps: NonNegativeInt,
  usage: UsageSchema
})

/**
 * @since 0.1.0
 */
export type PausedState = typeof PausedState.Type

/**
 * The decision on one pending call: approve it (the token is approved in the
 * store by `approver`, then the call runs with it) or reject it (the token is
 * rejected with `reason`, and the model is told so).
 *
 * @since 0.1.0
 */
export type Decision =
  | { readonly _tag: "Approve"; readonly approver: string }
  | { readonly _tag: "Reject"; readonly approver: string; readonly reason: string }

/**
 * Approves a pending call.
 *
 * @since 0.1.0
 */
export const approve = (approver: string): Decision => ({ _tag: "Approve", approver })

/**
 * Rejects a pending call; `reason` is recorded in the store and told to the
 * model.
 *
 * @since 0.1.0
 */
export const reject = (approver: string, reason: string): Decision => ({ _tag: "Reject", approver, reason })

/**
 * One decision per pending call, keyed by its `toolCallId`.
 *
 * @since 0.1.0
 */
export type Decisions = Readonly<Record<string, Decision>>

/**
 * The model answered with text and no tool call: `text` is that answer,
 * `messages` the whole conversation (system message first; pass it back,
 * with a new user message, as the next turn's input), `usage` the turn's
 * tokens, `steps` its model calls, `finishReason` the last call's (e.g.
 * `"length"` when the text was cut), and `refusal` the model's refusal
 * message when it refused (its `text` is then usually `""`).
 *
 * @since 0.1.0
 */
export interface Completed {
  readonly _tag: "Completed"
  readonly text: string
  readonly messages: ReadonlyArray<LanguageModel.Message>
  readonly usage: Usage
  readonly steps: number
  readonly finishReason: LanguageModel.FinishReason
  readonly refusal?: string | undefined
}

/**
 * Some tool calls of the last step need an approval: `pending` lists them,
 * `state` is what `agent.resume` continues from. The step's other calls have
 * run and been answered.
 *
 * @since 0.1.0
 */
export interface AwaitingApproval {
  readonly _tag: "AwaitingApproval"
  readonly pending: ReadonlyArray<PendingCall>
  readonly state: PausedState
}

/**
 * The turn made `maxSteps` model calls and the model still called tools:
 * `messages` ends with the answers of the last step's calls.
 *
 * @since 0.1.0
 */
export interface StepLimitReached {
  readonly _tag: "StepLimitReached"
  readonly messages: ReadonlyArray<LanguageModel.Message>
  readonly usage: Usage
  readonly steps: number
}

/**
 * How a chat turn ends.
 *
 * @since 0.1.0
 */
export type ChatResult = Completed | AwaitingApproval | StepLimitReached

/**
 * @since 0.1.0
 */
export const Completed = (fields: Omit<Completed, "_tag">): Completed => ({ _tag: "Completed", ...fields })

/**
 * @since 0.1.0
 */
export const AwaitingApproval = (fields: Omit<AwaitingApproval, "_tag">): AwaitingApproval => ({
  _tag: "AwaitingApproval",
  ...fields
})

/**
 * @since 0.1.0
 */
export const StepLimitReached = (fields: Omit<StepLimitReached, "_tag">): StepLimitReached => ({
  _tag: "StepLimitReached",
  ...fields
})

// =============================================================================
// Events of a streamed turn
// =============================================================================

/**
 * A model call begins (`step` counts the turn's model calls from 1, across
 * an approval pause). A call retried by `options.retry` after it failed
 * part-way starts again with the same `step`: what was shown of it is
 * superseded.
 *
 * @category models
 * @since 0.2.0
 */
export interface StepStarted {
  readonly _tag: "StepStarted"
  readonly step: number
}

/**
 * The next piece of the model's text in this step.
 *
 * @category models
 * @since 0.2.0
 */
export interface TextDelta {
  readonly _tag: "TextDelta"
  readonly step: number
  readonly delta: string
}

/**
 * The model began a tool call: its id (the one its answer will carry) and
 * the model-facing tool name.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallStarted {
  readonly _tag: "ToolCallStarted"
  readonly step: number
  readonly toolCallId: string
  readonly tool: string
}

/**
 * The next piece of a tool call's raw arguments, as the model sends them
 * (only with `argumentDeltas: true`).
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallArgumentsDelta {
  readonly _tag: "ToolCallArgumentsDelta"
  readonly step: number
  readonly toolCallId: string
  readonly delta: string
}

/**
 * A tool call's arguments are complete and parsed, and it is about to run
 * through the pipeline: the agent's `action` (for an MCP tool its mcpTool
 * action, and `tool` the server's tool name). A call whose tool is unknown
 * or whose arguments are not a JSON object goes straight to its
 * {@link ToolResult}.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallReady {
  readonly _tag: "ToolCallReady"
  readonly step: number
  readonly toolCallId: string
  readonly action: string
  readonly tool?: string | undefined
  readonly arguments: Readonly<Record<string, unknown>>
}

/**
 * A tool call's answer, as the model gets it: `content` is the tool message
 * (the result, or `{"error":{"category","message"}}` with `category`).
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolResult {
  readonly _tag: "ToolResult"
  readonly step: number
  readonly toolCallId: string
  readonly success: boolean
  readonly category?: Category | undefined
  readonly content: string
}

/**
 * Tool calls of the last step wait for an approval; `TurnFinished` with
 * `AwaitingApproval` follows.
 *
 * @category models
 * @since 0.2.0
 */
export interface ApprovalRequested {
  readonly _tag: "ApprovalRequested"
  readonly pending: ReadonlyArray<PendingCall>
}

/**
 * A step is over: its model call's finish reason and usage (tokens of that
 * call only), after the answers of its tool calls.
 *
 * @category models
 * @since 0.2.0
 */
export interface StepFinished {
  readonly _tag: "StepFinished"
  readonly step: number
  readonly finishReason: LanguageModel.FinishReason
  readonly usage: Usage
}

/**
 * The turn is over: always the last event, exactly once, carrying the same
 * result `agent.chat` (or `agent.resume`) returns.
 *
 * @category models
 * @since 0.2.0
 */
export interface TurnFinished {
  readonly _tag: "TurnFinished"
  readonly result: ChatResult
}

/**
 * What a streamed chat turn tells its caller as it happens. In each step:
 * `StepStarted`, the text's `TextDelta`s and each `ToolCallStarted` as the
 * model sends them (with `ToolCallArgumentsDelta`s when asked), then per tool
 * call `ToolCallReady` and `ToolResult`, then `StepFinished`; a pause adds
 * `ApprovalRequested`; `TurnFinished` ends the turn. Events carry arguments
 * and results, so they go to the caller only, never into `agent.events`.
 *
 * @category models
 * @since 0.2.0
 */
export type ChatEvent =
  | StepStarted
  | TextDelta
  | ToolCallStarted
  | ToolCallArgumentsDelta
  | ToolCallReady
  | ToolResult
  | ApprovalRequested
  | StepFinished
  | TurnFinished

/**
 * Options of a streamed turn: those of {@link ChatOptions}, and
 * `argumentDeltas`: also stream each tool call's raw arguments as they
 * arrive ({@link ToolCallArgumentsDelta}); default `false`.
 *
 * @category models
 * @since 0.2.0
 */
export interface ChatStreamOptions extends ChatOptions {
  readonly argumentDeltas?: boolean | undefined
}

// =============================================================================
// Prompts and messages
// =============================================================================

/**
 * The default system message of a new conversation: the agent's id, then one
 * line per role with its name, domain, goal and `spec.goals`, then one line
 * of instructions.
 *
 * ```
 * You are the agent "planner". Your roles:
 * - travel (domain: travel): Plan trips; goals: stay on budget; prefer trains
 * Use the tools offered when they help, then answer the user in plain text.
 * ```
 *
 * @since 0.1.0
 */
export const systemPrompt = (agentId: string, roles: ReadonlyArray<Role.Any>): string =>
  [
    `You are the agent "${agentId}". Your roles:`,
    ...roles.map((role) => {
      const goals = role.spec.goals ?? []
      const { name, domain, goal } = role.identity
      return `- ${name} (domain: ${domain}): ${goal}${goals.length === 0 ? "" : `; goals: ${goals.join("; ")}`}`
    }),
    "Use the tools offered when they help, then answer the user in plain text."
  ].join("\n")

/** The action name model calls of a turn are made for (it names their errors and span). */
const chatAction = "chat"

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

// =============================================================================
// The loop
// =============================================================================

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
  readonly authority: Authority.Compiled
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
  readonly hub: Events.Hub
  readonly runtime: AgentRuntime
  readonly executeAction: (
    name: string,
    params: Readonly<Record<string, unknown>>
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
 * - `chatStream`, `resumeStream`: the same turns as streams of
 *   {@link ChatEvent}s, `TurnFinished` last; `chat` and `resume` are these
 *   streams run to their end, but call the model without streaming (one
 *   `TextDelta` per step), while the streams stream each model call. Stopping
 *   the stream (interrupting it, or no longer pulling) stops the turn: the
 *   model's HTTP stream is aborted, running tool calls are interrupted, and no
 *   partial text is kept anywhere.
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
  readonly maxSteps: number
  readonly concurrency: number
  readonly strict: boolean
  readonly model: string | undefined
  readonly temperature: number | undefined
  readonly policy: Resilience.Policy | undefined
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
  return Result.succeed({
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
interface Answered {
  readonly message: LanguageModel.ToolMessage
  readonly category: Category | undefined
  readonly success: boolean
  readonly pending: PendingCall | undefined
}

const answered = (toolCallId: string, value: unknown): Answered => ({
  message: { role: "tool", toolCallId, content: ChatMessages.contentOf(value) },
  category: undefined,
  success: true,
  pending: undefined
})

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
    route: McpToolkit.Route,
    args: Readonly<Record<string, unknown>>,
    token?: string
  ): Effect.Effect<Answered, never, R> => {
    const params = route.tool === undefined ? args : { tool: route.tool, arguments: args }
    const call = host.executeAction(
      route.action,
      token === undefined ? params : { ...params, [Approval.reservedParameter]: token }
    )
    return Effect.map(Effect.result(call), (outcome) => {
      if (outcome._tag === "Success") return answered(toolCallId, outcome.success)
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

  const unknownTool = (call: LanguageModel.ToolCall, kit: McpToolkit.McpToolkit): Answered => {
    // Authority first: a name it denies is AUTHORITY whether or not it exists (C06).
    if (!Authority.allows(authority, call.name)) {
      return failed(
        call.id,
        new Unauthorized({ action: call.name, message: `The agent's authority does not allow ${call.name}` })
      )
    }
    const available = kit.tools.map((tool) => tool.name)
    return failed(
      call.id,
      new ActionNotFound({
        action: call.name,
        message: `No tool named ${call.name} was offered; the tools offered are: ${
          available.length === 0 ? "none" : available.join(", ")
        }`,
        available
      })
    )
  }

  const answerCall = (
    call: LanguageModel.ToolCall,
    kit: McpToolkit.McpToolkit,
    turn: Turn
  ): Effect.Effect<Answered, never, R> => {
    const route = kit.route(call.name)
    if (route === undefined) return Effect.succeed(unknownTool(call, kit))
    const label = route.tool === undefined ? route.action : `${route.action}/${route.tool}`
    const parsed = Tool.parseArguments(call.arguments, { tool: label })
    if (Result.isFailure(parsed)) return Effect.succeed(failed(call.id, parsed.failure))
    return Effect.andThen(ready(turn, call.id, route, parsed.success), runRouted(call.id, route, parsed.success))
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
        yield* Events.publish(hub, { _tag: "ToolCallStarted", ...about, timestamp: start })
        const result = yield* reported
        const now = yield* Clock.currentTimeMillis
        yield* Events.publish(hub, {
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

  const answerAll = (
    calls: ReadonlyArray<LanguageModel.ToolCall>,
    kit: McpToolkit.McpToolkit,
    turn: Turn
  ): Effect.Effect<ReadonlyArray<Answered>, never, R> => {
    const one = (call: LanguageModel.ToolCall) =>
      observed(turn, call, kit.route(call.name), answerCall(call, kit, turn))
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
      const parts = turn.streaming
        ? model.stream(request)
        : Stream.flatMap(Stream.fromEffect(model.generate(request)), (answer) =>
            Stream.fromIterable(LanguageModel.partsOf(answer))
          )
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
      return turn.emit({ _tag: "StepStarted", step }).pipe(
        Effect.andThen(
          Stream.runForEachArray(parts, (batch) => {
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
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature })
    }
    const once = attempt(model, request, turn)
    return settings.policy === undefined
      ? once
      : Resilience.run({
          action: chatAction,
          policy: settings.policy,
          attemptTimeout: undefined,
          guards: Resilience.noGuards,
          attempt: once
        })
  }

  const usageOf = (turn: Turn): Effect.Effect<Usage> =>
    Effect.map(turn.meter.total, ({ usage }) => LanguageModel.addUsage(turn.prior, usage))

  const loop = (model: LanguageModel.LanguageModel["Service"], turn: Turn): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.gen(function* () {
      while (turn.steps < turn.settings.maxSteps) {
        const kit = yield* toolkitOf(turn.settings.strict)
        const response = yield* generate(model, turn, kit)
        turn.steps += 1
        const calls = response.toolCalls
        turn.messages.push(
          calls.length === 0
            ? { role: "assistant", content: response.text }
            : { role: "assistant", content: response.text, toolCalls: calls }
        )
        if (hub.subscribers() > 0) {
          yield* Events.publish(hub, {
            _tag: "ChatStep",
            agentId: id,
            step: turn.steps,
            toolCalls: calls.length,
            usage: response.usage,
            timestamp: yield* Clock.currentTimeMillis
          })
        }
        const stepFinished: StepFinished = {
          _tag: "StepFinished",
          step: turn.steps,
          finishReason: response.finishReason,
          usage: response.usage
        }
        if (calls.length === 0) {
          yield* turn.emit(stepFinished)
          return Completed({
            text: response.text,
            messages: turn.messages,
            usage: yield* usageOf(turn),
            steps: turn.steps,
            finishReason: response.finishReason,
            ...(response.refusal === undefined ? {} : { refusal: response.refusal })
          })
        }
        const answers = yield* answerAll(calls, kit, turn)
        const pending: Array<PendingCall> = []
        for (const answer of answers) {
          if (answer.pending === undefined) turn.messages.push(answer.message)
          else pending.push(answer.pending)
        }
        yield* turn.emit(stepFinished)
        if (pending.length > 0) {
          yield* turn.emit({ _tag: "ApprovalRequested", pending })
          const usage = yield* usageOf(turn)
          return AwaitingApproval({
            pending,
            state: { messages: turn.messages, pending, steps: turn.steps, maxSteps: turn.settings.maxSteps, usage }
          })
        }
      }
      return StepLimitReached({ messages: turn.messages, usage: yield* usageOf(turn), steps: turn.steps })
    })

  /** Runs `body` with a fresh usage meter for the turn (nested in any meter already there). */
  const metered = <A>(
    body: (meter: LanguageModel.UsageMeter["Service"]) => Effect.Effect<A, ActionError, R>
  ): Effect.Effect<A, ActionError, R> =>
    Effect.flatMap(LanguageModel.makeUsageMeter, (meter) =>
      Effect.provideService(body(meter), LanguageModel.UsageMeter, meter)
    )

  const span = <A, E>(self: Effect.Effect<A, E, R>, name: string): Effect.Effect<A, E, R> =>
    self.pipe(Effect.withSpan(name, { attributes: { "rolecraft.agent": id } }, { captureStackTrace: false }))

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
    Effect.gen(function* () {
      const settings = settingsOf(options, host.roles, 10)
      if (Result.isFailure(settings)) return yield* settings.failure
      const model = yield* requireModel
      const first = options?.system ?? system
      const messages: Array<LanguageModel.Message> =
        typeof input === "string"
          ? [
              { role: "system", content: first },
              { role: "user", content: input }
            ]
          : yield* ChatMessages.historyOf(chatAction, input, first)
      return yield* metered((meter) =>
        loop(model, { messages, steps: 0, prior: zero, settings: settings.success, meter, ...mode })
      )
    }).pipe((self) => span(self, "Rolecraft.chat"))

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
    const answer = Effect.flatMap(Approval.storeOf(host.approvals), (store) =>
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
                runRouted(pending.toolCallId, route, pending.arguments, pending.pendingTokenId)
              )
          })
    )
    return observed(turn, { id: pending.toolCallId, name, arguments: "" }, route, answer)
  }

  const proceed = (
    raw: PausedState,
    decisions: Decisions,
    options: ChatOptions | undefined,
    mode: Mode
  ): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.gen(function* () {
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
    }).pipe((self) => span(self, "Rolecraft.chat.resume"))

  // ---------------------------------------------------------------------------
  // The turns as streams, and run to their end
  // ---------------------------------------------------------------------------

  /** A turn as a stream of its events, `TurnFinished` last. */
  const events = (
    run: (mode: Mode) => Effect.Effect<ChatResult, ActionError, R>,
    streaming: boolean,
    argumentDeltas: boolean
  ): Stream.Stream<ChatEvent, ActionError, R> =>
    Stream.callback<ChatEvent, ActionError, R>(
      (queue) => {
        const emit: Emit = (event) => Effect.asVoid(Queue.offer(queue, event))
        const emitAll = (events: ReadonlyArray<ChatEvent>) => Effect.asVoid(Queue.offerAll(queue, events))
        return run({ emit, emitAll, streaming, argumentDeltas }).pipe(
          Effect.flatMap((result) => emit({ _tag: "TurnFinished", result })),
          Effect.andThen(Queue.end(queue))
        )
      },
      { bufferSize: 16, strategy: "suspend" }
    )

  /** The result a turn's stream ends with. */
  const finish = (stream: Stream.Stream<ChatEvent, ActionError, R>): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.flatMap(
      Stream.runFold(
        stream,
        (): ChatResult | undefined => undefined,
        (last, event) => (event._tag === "TurnFinished" ? event.result : last)
      ),
      (result) =>
        result === undefined ? Effect.die(new Error("a chat turn ended without TurnFinished")) : Effect.succeed(result)
    )

  const chatStream: Chats<R>["chatStream"] = (input, options) =>
    events((mode) => start(input, options, mode), true, options?.argumentDeltas ?? false)

  const resumeStream: Chats<R>["resumeStream"] = (state, decisions, options) =>
    events((mode) => proceed(state, decisions, options, mode), true, options?.argumentDeltas ?? false)

  const chat: Chats<R>["chat"] = (input, options) => finish(events((mode) => start(input, options, mode), false, false))

  const resume: Chats<R>["resume"] = (state, decisions, options) =>
    finish(events((mode) => proceed(state, decisions, options, mode), false, false))

  return { chat, resume, chatStream, resumeStream }
}
