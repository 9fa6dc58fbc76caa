/**
 * Chat turns: `agent.chat(input, options)` runs one turn of a conversation.
 * The model is called with the tools the agent offers; each tool call it
 * makes runs through the agent's full pipeline and is answered with exactly
 * one tool message; the model is called again until it answers with text,
 * the step limit is reached, or a tool call needs an approval. A paused turn
 * is plain data ({@link PausedState}): store it, decide, and continue it with
 * `agent.resume(state, decisions)`.
 *
 * The tools offered in each step are every action of the agent's roles that
 * is not `Action.excludeFromModel` and not an mcpTool action, plus every tool
 * of every MCP server the agent uses (named `<action>/<tool>`), each filtered
 * by the agent's authority. Names are made valid and unique for the model and
 * mapped back. An MCP server that cannot list its tools is left out of that
 * step with a logged warning; the turn goes on.
 *
 * `agent.chatStream` and `agent.resumeStream` run the same turns as streams
 * of {@link ChatEvent}s: the model's text as it arrives, each tool call as it
 * starts, is ready and is answered, each step's end, and the result last.
 *
 * This module holds what a caller writes and reads: the options, the
 * decisions, the results, the paused state and the events.
 *
 * @example
 * ```ts
 * import { Action, Agent, Chat, Role } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * const Booking = Role.make({
 *   identity: { name: "booking", goal: "Book rooms", domain: "travel" },
 *   actions: {
 *     book: Action.local({
 *       description: "Book a hotel room",
 *       parameters: { hotelId: Schema.String },
 *       run: ({ hotelId }) => `booked ${hotelId}`
 *     }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" }))
 *   }
 * })
 *
 * // needs a LanguageModel layer (e.g. OpenAiLanguageModel.layerConfig())
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "planner", roles: [Booking] })
 *   const result = yield* agent.chat("Book hotel h-42 for me", { maxSteps: 5 })
 *   if (result._tag !== "AwaitingApproval") return result
 *   // the turn paused: decide each pending call and go on
 *   const decisions = Object.fromEntries(result.pending.map((call) => [call.toolCallId, Chat.approve("alice")]))
 *   return yield* agent.resume(result.state, decisions)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { type ActionError, Category } from "./ActionError.ts"
import * as ActionResponse from "./ActionResponse.ts"
import * as DecisionModule from "./Decision.ts"
import type * as History from "./History.ts"
import type * as LanguageModel from "./LanguageModel.ts"
import type * as ModelResponse from "./ModelResponse.ts"
import * as Prompt from "./Prompt.ts"
import type * as Resilience from "./Resilience.ts"
import type * as Role from "./Role.ts"
import type * as StepHooks from "./StepHooks.ts"

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
 *   >= 1 (default 4). Answers are appended in the order of the calls. A
 *   call of an action marked `Action.serial` runs alone, in the model's
 *   order, whatever the concurrency.
 * - `parallelToolCalls`: `false` asks the provider for no parallel tool
 *   calls, sent as its profile spells it (`parallel_tool_calls: false` for
 *   the openai layer; nothing for a provider that cannot be told), and runs
 *   the calls of a reply one at a time in the model's order. Default: not
 *   sent, and `concurrency: 1` alone does not send it.
 * - `toolSearch`: offer the tools through a search tool (`tool_search`): the
 *   model searches the catalog (names and descriptions), the best matches
 *   are loaded for the rest of the turn and called like any other tool
 *   (authority and approval as always); what one request carries never
 *   passes the provider's tool limit. `true`: always; `false`: never (a
 *   catalog past the limit is then sent whole, and the provider may refuse
 *   it); default: only when the catalog has more tools than the model
 *   layer's profile allows (`ProviderProfile.toolLimit`, 128 for openai).
 * - `retry`: the retry policy of each model call (`Resilience.RetryPolicy`:
 *   backoff, `retryAfter` honoured, only TIMEOUT and TRANSIENT by default).
 *   Default: none — a failed model call fails the turn.
 * - `modelTimeout`: bounds each model call attempt (TIMEOUT, retryable);
 *   default none (the `LanguageModel` layer's own timeout applies).
 * - `model`, `temperature`: sent with every model call; default the first
 *   role's `spec.model.name` and `spec.model.temperature` (>= 0) that are set,
 *   else the layer's own; a negative `temperature` (-1, as for llm actions)
 *   keeps the client's own setting.
 * - `maxTokens`: the most tokens each model call's reply may use, an
 *   integer >= 1 (sent by the openai layer as `max_completion_tokens`);
 *   default the first role's `spec.model.maxTokens` that is set, else the
 *   provider's own limit. A reply cut at the limit — its finish reason says
 *   so (`length`, or a provider's `max_tokens`, `MAX_TOKENS`, …), or it used
 *   exactly `maxTokens` output tokens whatever its reason says — runs none
 *   of its tool calls and fails the turn with EXECUTION naming `max_tokens`
 *   (not retried: the same request would be cut again); so does a cut
 *   answer when the turn asked for an `output`. A cut text answer completes
 *   the turn with `finishReason: "length"`.
 * - `strict`: ask for the provider's strict mode on every tool (default
 *   `false`): each tool's parameters are then sent in OpenAI's strict form
 *   (every property required, the optional ones nullable, no additional
 *   properties); an action whose parameters hold a record cannot be strict
 *   and is left out of the turn's tools with a logged warning.
 * - `steps`: hooks around each tool listing, model call and tool call of
 *   the turn (`StepHooks.StepHooks`); default none.
 * - `output`: an Effect Schema the final answer must match. Every model
 *   call of the turn asks for it (`response_format` `json_schema`, named
 *   `output`, strict when the schema's JSON Schema form allows, an object
 *   root offered as is and any other root as `{ value }`); the answer's JSON
 *   is decoded into `Completed.output`, with the argument conversions of
 *   tool calls (`"3"` for a number, a `null` strict mode allowed for an
 *   optional key taken as absent). An answer that does not match fails the
 *   turn with VALIDATION, its issues and a preview of the answer. On
 *   `resume`, give it again.
 * - `thread`: keep the conversation in a thread of the `ThreadStore` (a
 *   thread id, or {@link ThreadOptions}); default none — the caller owns the
 *   history. See {@link ThreadOptions}.
 * - `turnId`: the turn's id, 1 to 1,024 characters with no NUL or lone
 *   surrogate (VALIDATION naming `turnId` otherwise). Each approval a call
 *   of the turn asks for is scoped by it and the call's id
 *   (`ApprovalStore.Scope`), so two turns whose model numbers its calls
 *   alike (`call_1` in each) never share a pending call. Default: a fresh
 *   id per turn (a random prefix per process and a count: unique, not
 *   secret); `resume` keeps the paused state's (`turnId` there
 *   is used for a state paused without one). A durable run's turn is its
 *   run id.
 *
 * @category models
 * @since 0.1.0
 */
export interface ChatOptions {
  readonly maxSteps?: number | undefined
  readonly system?: string | undefined
  readonly concurrency?: number | undefined
  readonly parallelToolCalls?: boolean | undefined
  readonly toolSearch?: boolean | undefined
  readonly retry?: Resilience.RetryPolicy | undefined
  readonly modelTimeout?: Duration.Input | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly strict?: boolean | undefined
  readonly steps?: StepHooks.StepHooks<ToolAnswer> | undefined
  readonly output?: Schema.Top | undefined
  readonly thread?: string | ThreadOptions | undefined
  readonly turnId?: string | undefined
}

/**
 * A chat turn kept in a thread (the `thread` chat option). The turn loads
 * the thread's history from the `ThreadStore` — the one provided to the
 * call, else the one provided to `Agent.make`, else an in-memory store of
 * the agent's own — runs, and appends its exchange: the user message and
 * every message of the turn after it.
 *
 * - `id`: the thread's id (at most 1,024 characters, no NUL or lone
 *   surrogate: VALIDATION naming `thread` otherwise).
 * - `budget`: bounds the history sent to the model (`History.Budget`:
 *   `maxTokens`, and the strategy that brings a longer history within it —
 *   dropping the oldest whole exchanges by default, or summarising them);
 *   default none: the whole thread is sent.
 * - `wait`: how long the turn waits for another turn holding the same
 *   thread (two turns on one thread run one after the other), default 60
 *   seconds; past it the turn fails TRANSIENT naming the thread, before
 *   anything ran.
 *
 * With a thread, `input` is the new message: a string, or a list of user
 * messages (any other role is VALIDATION: the thread holds the history),
 * at most 1,000,000 characters in all. The system message is the turn's
 * (`system`, else the agent's default), never stored. A turn that completes
 * or reaches its step limit appends its exchange; a turn that pauses for
 * approvals appends its exchange so far and leaves the thread paused:
 * `agent.resume(state, decisions, { thread })` continues it (and refuses, as
 * VALIDATION, a state that is not the thread's paused turn), while a new
 * message on a paused thread is refused as APPROVAL (`check: "pending"`,
 * naming the calls that wait) before anything runs — resume it first, with
 * rejections to move on. A turn that fails or is interrupted appends
 * nothing. A thread holds at most `maxExchanges` exchanges (10,000 by
 * default, see `ThreadStore`): a turn on a full thread is VALIDATION.
 *
 * Tool call ids stay unique across the whole thread, also across exchanges
 * the budget leaves out.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, History } from "@rolecraft/core"
 *
 * declare const agent: Agent.Agent
 * const turn = agent.chat("And a restaurant nearby?", {
 *   thread: { id: "trip-42", budget: { maxTokens: 8_000, strategy: History.dropOldest } }
 * })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface ThreadOptions {
  readonly id: string
  readonly budget?: History.Budget | undefined
  readonly wait?: Duration.Input | undefined
}

/**
 * Tokens a turn spent: every model call of the turn, including those made by
 * llm actions the model called as tools (they are the turn's tokens too), and
 * for a resumed turn those spent before the pause.
 *
 * @category models
 * @since 0.1.0
 */
export type Usage = LanguageModel.Usage

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const UsageSchema = ActionResponse.UsageSchema

/**
 * A tool call that waits for an approval:
 *
 * - `toolCallId`: the model's call id (answered when the turn resumes);
 * - `action`: the agent's action it runs (for an MCP tool, its mcpTool
 *   action), and `tool`: the server's own tool name for an MCP tool;
 * - `arguments`: the arguments as the model sent them, parsed (the tool's own
 *   arguments for an MCP tool);
 * - `pendingTokenId`: the approval token requested for exactly this call
 *   (agent, action, tool, arguments), in the agent's `ApprovalStore`;
 * - `reason`: the action's approval reason, for the approver;
 * - `agents`: for a call made inside an agent used as an action
 *   (`Compose.agent`), the path of agents it came through, outermost first,
 *   ending with the agent whose action it is (`["lead", "researcher"]`); its
 *   `toolCallId` is then the outer call's id, `/`, and the inner one's
 *   (`"call_1/call_7"`), and `action`, `arguments` and `pendingTokenId` are
 *   the inner agent's. Absent for the turn's own calls;
 * - `definition`: for an MCP tool, what the approver is shown of the tool
 *   as it was listed when the approval was asked — the `digest` of its
 *   definition (name, title, description, schemas, annotations), which the
 *   approval is bound to, and its `description`. If the tool has changed
 *   when the turn resumes, the call does not run: it is answered with
 *   APPROVAL (`check: "definition"`) naming what changed.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PendingCall = Schema.Struct({
  toolCallId: Schema.String,
  action: Schema.String,
  tool: Schema.optionalKey(Schema.String),
  arguments: Schema.Record(Schema.String, Schema.Unknown),
  pendingTokenId: Schema.String,
  reason: Schema.String,
  agents: Schema.optionalKey(Schema.Array(Schema.String)),
  definition: Schema.optionalKey(
    Schema.Struct({ digest: Schema.String, description: Schema.optionalKey(Schema.String) })
  )
})

/**
 * @category models
 * @since 0.1.0
 */
export type PendingCall = typeof PendingCall.Type

/**
 * The version of the {@link PausedState} this Rolecraft writes and reads.
 *
 * @category constants
 * @since 0.1.0
 */
export const pausedStateVersion = 1 as const

/**
 * A turn paused for approvals: plain JSON data, so a caller may persist it
 * (`JSON.stringify`) and resume later, in another process, with an agent of
 * the same definition and id and the same `ApprovalStore` (e.g.
 * `ApprovalStore.layerSqlite`).
 *
 * - `messages`: the conversation so far; the last assistant message's calls
 *   are all answered except the pending ones and the nested ones.
 * - `pending`: the calls waiting for a decision, those of agents used as
 *   actions included (see {@link PendingCall}'s `agents`).
 * - `nested`: the calls that run an agent whose turn paused
 *   ({@link NestedCall}); absent when there are none.
 * - `steps`: model calls made so far in the turn; `maxSteps`: the turn's limit.
 * - `usage`: tokens spent so far in the turn (agents used as actions
 *   included); `agents`: the same per agent, when agents used as actions ran.
 * - `handoff`: when the turn handed its conversation to another agent whose
 *   turn paused, that turn ({@link HandedOffState}).
 * - `version`: the layout of this data ({@link pausedStateVersion}); a
 *   state of another version is VALIDATION on `agent.resume`.
 *
 * `agent.resume` decodes it with this schema (a malformed state is
 * VALIDATION).
 *
 * @category schemas
 * @since 0.1.0
 */
export interface PausedState {
  readonly version: 1
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly pending: ReadonlyArray<PendingCall>
  readonly steps: number
  readonly maxSteps: number
  readonly usage: Usage
  readonly nested?: ReadonlyArray<NestedCall>
  readonly agents?: Readonly<Record<string, Usage>>
  readonly handoff?: HandedOffState
  /** The paused turn's id (see `ChatOptions.turnId`); absent in a state paused by Rolecraft 0.2.0. @since 0.3.0 */
  readonly turnId?: string
}

/**
 * A turn that handed its conversation to agent `agent` (by tool call
 * `toolCallId` of its handoff action `action`), whose turn paused: `state`
 * is that turn's. The handing
 * turn's `messages` are its own conversation up to the handoff, its
 * `pending` the next agent's; resuming the handing turn resumes the next
 * agent's.
 *
 * @category models
 * @since 0.2.0
 */
export interface HandedOffState {
  readonly agent: string
  readonly toolCallId: string
  /**
   * The handoff action the call ran (the key it has in the handing agent), which the resumed turn runs again
   * under; absent in a state paused by Rolecraft 0.2.0 (the first handoff to `agent` is taken).
   *
   * @since 0.3.0
   */
  readonly action?: string
  /** How many of `state.messages` the next agent was given (its system message and the history it saw). */
  readonly from: number
  readonly state: PausedState
}

/**
 * A tool call of the paused turn that runs an agent (`Compose.agent`) whose
 * own turn paused: `toolCallId` is the turn's call, `action` the agent
 * action it ran with the converted `arguments`, `agent` the inner agent's
 * id and `state` the inner turn's paused state. Resuming the turn resumes
 * the inner turn from `state` with the decisions on its calls.
 *
 * @category models
 * @since 0.2.0
 */
export interface NestedCall {
  readonly toolCallId: string
  readonly action: string
  readonly agent: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly state: PausedState
}

/**
 * The JSON form of a {@link PausedState} (what `JSON.stringify` writes and
 * the schema reads).
 *
 * @category models
 * @since 0.2.0
 */
export interface PausedStateEncoded {
  readonly version: 1
  readonly messages: ReadonlyArray<typeof Prompt.Message.Encoded>
  readonly pending: ReadonlyArray<typeof PendingCall.Encoded>
  readonly steps: number
  readonly maxSteps: number
  readonly usage: typeof UsageSchema.Encoded
  readonly nested?: ReadonlyArray<NestedCallEncoded>
  readonly agents?: Readonly<Record<string, typeof UsageSchema.Encoded>>
  readonly handoff?: {
    readonly agent: string
    readonly toolCallId: string
    readonly action?: string
    readonly from: number
    readonly state: PausedStateEncoded
  }
  readonly turnId?: string
}

/**
 * The JSON form of a {@link NestedCall}.
 *
 * @category models
 * @since 0.2.0
 */
export interface NestedCallEncoded {
  readonly toolCallId: string
  readonly action: string
  readonly agent: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly state: PausedStateEncoded
}

/**
 * @category schemas
 * @since 0.2.0
 */
export const NestedCall: Schema.Codec<NestedCall, NestedCallEncoded> = Schema.Struct({
  toolCallId: Schema.String,
  action: Schema.String,
  agent: Schema.String,
  arguments: Schema.Record(Schema.String, Schema.Unknown),
  state: Schema.suspend((): Schema.Codec<PausedState, PausedStateEncoded> => PausedState)
})

/**
 * The schema of {@link PausedState} (`agent.resume` decodes a state with it).
 *
 * @category schemas
 * @since 0.1.0
 */
export const PausedState = Schema.Struct({
  version: Schema.Literal(1),
  messages: Schema.Array(Prompt.Message),
  pending: Schema.Array(PendingCall),
  steps: NonNegativeInt,
  maxSteps: NonNegativeInt,
  usage: UsageSchema,
  nested: Schema.optionalKey(Schema.Array(NestedCall)),
  agents: Schema.optionalKey(Schema.Record(Schema.String, UsageSchema)),
  handoff: Schema.optionalKey(
    Schema.Struct({
      agent: Schema.String,
      toolCallId: Schema.String,
      action: Schema.optionalKey(Schema.String),
      from: NonNegativeInt,
      state: Schema.suspend((): Schema.Codec<PausedState, PausedStateEncoded> => PausedState)
    })
  ),
  turnId: Schema.optionalKey(Schema.String)
})

/**
 * The decision on one pending call: approve it (the token is approved in the
 * store by `approver`, then the call runs with it) or reject it (the token is
 * rejected with `reason`, and the model is told so). A call is decided once:
 * see `Decision`.
 *
 * @category models
 * @since 0.1.0
 */
export type Decision = DecisionModule.Decision

/**
 * Approves a pending call (the same as `Decision.approve`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const approve: (approver: string) => Decision = DecisionModule.approve

/**
 * Rejects a pending call; `reason` is recorded in the store and told to the
 * model (the same as `Decision.reject`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const reject: (approver: string, reason: string) => Decision = DecisionModule.reject

/**
 * One decision per pending call, keyed by its `toolCallId`.
 *
 * @category models
 * @since 0.1.0
 */
export type Decisions = Readonly<Record<string, Decision>>

/**
 * The model answered with text and no tool call: `text` is that answer,
 * `messages` the whole conversation (system message first; pass it back,
 * with a new user message, as the next turn's input), `usage` the turn's
 * tokens, `steps` its model calls, `finishReason` the last call's (e.g.
 * `"length"` when the text was cut), `reasoning` the last call's reasoning
 * and `citations` the sources its answer cites, when the provider sent
 * them, and `output` the answer decoded with the `output` schema, when one
 * was given.
 *
 * A model that refuses does not complete the turn: the turn fails with
 * EXECUTION `"chat: the model refused: …"`, the refusal's text in the
 * error's `excerpt` (as an llm action's call does).
 *
 * @category models
 * @since 0.1.0
 */
export interface Completed {
  readonly _tag: "Completed"
  readonly text: string
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly usage: Usage
  readonly steps: number
  readonly finishReason: ModelResponse.FinishReason
  readonly reasoning?: string | undefined
  readonly citations?: ReadonlyArray<ModelResponse.Citation> | undefined
  readonly output?: unknown
  /**
   * The agent that answered: the agent's own id, or the id of the agent a
   * handoff transferred the conversation to (`Compose.handoff`). Set when the
   * turn handed off.
   *
   * @since 0.2.0
   */
  readonly agent?: string | undefined
  /**
   * Tokens per agent, when agents used as actions (`Compose.agent`) or a
   * handoff ran in the turn: each agent's own model calls, the turn's agent
   * included; they add up to `usage`.
   *
   * @since 0.2.0
   */
  readonly agents?: Readonly<Record<string, Usage>> | undefined
}

/**
 * A completed turn whose answer was decoded with an `output` schema of type
 * `A` (what `agent.chat(input, { output })` returns when it completes).
 *
 * @category models
 * @since 0.1.0
 */
export interface CompletedWith<A> extends Completed {
  readonly output: A
}

/**
 * How a chat turn asked for an `output` of type `A` ends.
 *
 * @category models
 * @since 0.1.0
 */
export type ChatResultWith<A> = CompletedWith<A> | AwaitingApproval | StepLimitReached

/**
 * Some tool calls of the last step need an approval: `pending` lists them,
 * `state` is what `agent.resume` continues from. The step's other calls have
 * run and been answered.
 *
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface StepLimitReached {
  readonly _tag: "StepLimitReached"
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly usage: Usage
  readonly steps: number
  /** The agent whose turn reached its limit, when the turn handed off (see `Completed.agent`). @since 0.2.0 */
  readonly agent?: string | undefined
  /** Tokens per agent (see `Completed.agents`). @since 0.2.0 */
  readonly agents?: Readonly<Record<string, Usage>> | undefined
}

/**
 * How a chat turn ends.
 *
 * @category models
 * @since 0.1.0
 */
export type ChatResult = Completed | AwaitingApproval | StepLimitReached

/**
 * A `Completed` result from its fields (for a fake agent or a test).
 *
 * @category constructors
 * @since 0.1.0
 */
export const Completed = (fields: Omit<Completed, "_tag">): Completed => ({ _tag: "Completed", ...fields })

/**
 * An `AwaitingApproval` result from its fields (for a fake agent or a test).
 *
 * @category constructors
 * @since 0.1.0
 */
export const AwaitingApproval = (fields: Omit<AwaitingApproval, "_tag">): AwaitingApproval => ({
  _tag: "AwaitingApproval",
  ...fields
})

/**
 * A `StepLimitReached` result from its fields (for a fake agent or a test).
 *
 * @category constructors
 * @since 0.1.0
 */
export const StepLimitReached = (fields: Omit<StepLimitReached, "_tag">): StepLimitReached => ({
  _tag: "StepLimitReached",
  ...fields
})

// =============================================================================
// An agent's chat turns
// =============================================================================

/**
 * What a chat turn starts from: the user's message, or a message list from
 * an earlier turn (its `messages`, with a new user message).
 *
 * @category models
 * @since 0.3.0
 */
export type Input = string | ReadonlyArray<Prompt.Message>

/**
 * An agent's chat turns: what `Agent.Agent` offers to run one, or to
 * continue one paused for approvals, to its result or as a stream of events.
 * `R` is what the turns require of their context.
 *
 * @category models
 * @since 0.3.0
 */
export interface Turns<R = never> {
  /**
   * Runs one chat turn: the model is offered the agent's actions
   * and MCP tools, each tool call runs through the pipeline, until the model
   * answers (`Completed`), a call needs approval (`AwaitingApproval`) or
   * `maxSteps` is reached (`StepLimitReached`). Needs a `LanguageModel`. See
   * {@link ChatResult} for the results and {@link ChatOptions} for the options.
   */
  readonly chat: {
    <S extends Schema.Top>(
      input: Input,
      options: ChatOptions & { readonly output: S }
    ): Effect.Effect<ChatResultWith<S["Type"]>, ActionError, R>
    (input: Input, options?: ChatOptions): Effect.Effect<ChatResult, ActionError, R>
  }
  /**
   * Continues a turn paused for approvals with one `approve` or
   * `reject` decision per pending tool call id. Each decision is
   * recorded in the approval store, bound to the call as the state shows it,
   * before any call runs. A call is decided once: a state resumed before with
   * other decisions fails with APPROVAL (`check: "decided"`, "call_2 (book)
   * is already decided: approved by ann") and nothing runs; resumed again with
   * the same decisions, an approved call finds its token used.
   */
  readonly resume: {
    <S extends Schema.Top>(
      state: PausedState,
      decisions: Decisions,
      options: ChatOptions & { readonly output: S }
    ): Effect.Effect<ChatResultWith<S["Type"]>, ActionError, R>
    (state: PausedState, decisions: Decisions, options?: ChatOptions): Effect.Effect<ChatResult, ActionError, R>
  }
  /**
   * Runs one chat turn as a stream of `ChatEvent`s: the model's text as
   * it arrives, each tool call as it starts, is ready and answers, each step's
   * end, and `TurnFinished` last with the same result `chat` returns. The
   * model call streams (`LanguageModel`'s `stream`). Stopping the stream stops
   * the turn. Events go to the caller only, never into `events`.
   */
  readonly chatStream: (input: Input, options?: ChatStreamOptions) => Stream.Stream<ChatEvent, ActionError, R>
  /**
   * Continues a paused turn (as `resume`) as a stream of `ChatEvent`s:
   * the decided calls' `ToolCallReady` and `ToolCallAnswered`, then the turn's
   * next steps, `TurnFinished` last.
   */
  readonly resumeStream: (
    state: PausedState,
    decisions: Decisions,
    options?: ChatStreamOptions
  ) => Stream.Stream<ChatEvent, ActionError, R>
}

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
 * @since 0.1.0
 */
export interface StepStarted {
  readonly _tag: "StepStarted"
  readonly step: number
}

/**
 * The next piece of the model's text in this step.
 *
 * @category models
 * @since 0.1.0
 */
export interface TextDelta {
  readonly _tag: "TextDelta"
  readonly step: number
  readonly delta: string
}

/**
 * The next piece of the model's reasoning in this step, when the provider
 * sends it (before the text, usually): shown apart, never part of the
 * answer's text.
 *
 * @category models
 * @since 0.2.0
 */
export interface ReasoningDelta {
  readonly _tag: "ReasoningDelta"
  readonly step: number
  readonly delta: string
}

/**
 * The model began writing a tool call (the phase in which it streams the
 * call's arguments): its id (the one its answer will carry) and the
 * model-facing tool name.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallArgumentsStarted {
  readonly _tag: "ToolCallArgumentsStarted"
  readonly step: number
  readonly toolCallId: string
  readonly tool: string
}

/**
 * The next piece of a tool call's raw arguments, as the model sends them
 * (only with `argumentDeltas: true`).
 *
 * @category models
 * @since 0.1.0
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
 * {@link ToolCallAnswered}.
 *
 * @category models
 * @since 0.1.0
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
 * @since 0.3.0
 */
export interface ToolCallAnswered {
  readonly _tag: "ToolCallAnswered"
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
 * @since 0.1.0
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
 * @since 0.1.0
 */
export interface StepFinished {
  readonly _tag: "StepFinished"
  readonly step: number
  readonly finishReason: ModelResponse.FinishReason
  readonly usage: Usage
}

/**
 * The turn is over: always the last event, exactly once, carrying the same
 * result `agent.chat` (or `agent.resume`) returns.
 *
 * @category models
 * @since 0.1.0
 */
export interface TurnFinished {
  readonly _tag: "TurnFinished"
  readonly result: ChatResult
}

/**
 * An event of the turn of an agent used as an action (`Compose.agent`) by
 * tool call `toolCallId` of this turn: `agents` is the path of agents it
 * came through, outermost first, ending with the agent whose event it is;
 * `event` is that agent's own event (never another `NestedEvent`: deeper
 * events carry the whole path). Its `TurnFinished` tells the inner result;
 * the call's answer follows as this turn's `ToolCallAnswered`.
 *
 * @category models
 * @since 0.3.0
 */
export interface NestedEvent {
  readonly _tag: "NestedEvent"
  readonly agents: ReadonlyArray<string>
  readonly toolCallId: string
  readonly event: Exclude<ChatEvent, NestedEvent>
}

/**
 * The model called a handoff action (`Compose.handoff`): the conversation
 * goes on with agent `to`, whose events follow as `NestedEvent`s with the
 * path `[from, to]`; `TurnFinished` carries its result.
 *
 * @category models
 * @since 0.2.0
 */
export interface HandedOff {
  readonly _tag: "HandedOff"
  readonly from: string
  readonly to: string
  readonly toolCallId: string
}

/**
 * What a streamed chat turn tells its caller as it happens. In each step:
 * `StepStarted`, the reasoning's `ReasoningDelta`s, the text's `TextDelta`s
 * and each `ToolCallArgumentsStarted` as the model sends them (with
 * `ToolCallArgumentsDelta`s when asked), then per tool
 * call `ToolCallReady` and `ToolCallAnswered`, then `StepFinished`; a pause adds
 * `ApprovalRequested`; `TurnFinished` ends the turn. Events carry arguments
 * and results, so they go to the caller only, never into `agent.events`.
 *
 * @category models
 * @since 0.1.0
 */
export type ChatEvent =
  | StepStarted
  | ReasoningDelta
  | TextDelta
  | ToolCallArgumentsStarted
  | ToolCallArgumentsDelta
  | ToolCallReady
  | ToolCallAnswered
  | ApprovalRequested
  | StepFinished
  | TurnFinished
  | NestedEvent
  | HandedOff

/**
 * Options of a streamed turn: those of {@link ChatOptions}, and
 * `argumentDeltas`: also stream each tool call's raw arguments as they
 * arrive ({@link ToolCallArgumentsDelta}); default `false`.
 *
 * @category models
 * @since 0.1.0
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
 * @category utils
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

// =============================================================================
// What one tool call gives the turn
// =============================================================================

/**
 * What one tool call gives the turn. A call that was answered has the tool
 * message the model gets (`message`), `success`, and the error's `category`
 * when it failed; `handoff` is the id of the agent a handoff action
 * transferred the conversation to. A call that waits has no message: its
 * `pending` call when it waits for an approval (`success` false, `category`
 * `APPROVAL`), or `nested` when it ran an agent whose turn paused (the calls
 * that agent waits for are then the pending ones). `agents` is the tokens of
 * each agent the call ran. Plain JSON data (an answer stored by Rolecraft
 * 0.2.0, which kept a message on a waiting call too, still decodes).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolAnswer = Schema.Struct({
  message: Schema.optional(Prompt.ToolMessage),
  category: Schema.optional(Category),
  success: Schema.Boolean,
  pending: Schema.optional(PendingCall),
  nested: Schema.optional(NestedCall),
  handoff: Schema.optional(Schema.String),
  agents: Schema.optional(Schema.Record(Schema.String, UsageSchema))
})

/**
 * @category models
 * @since 0.1.0
 */
export type ToolAnswer = typeof ToolAnswer.Type
