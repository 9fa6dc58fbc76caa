/**
 * The agent: roles, authority and services; it runs actions through
 * one fixed pipeline and holds per-agent state — role state,
 * circuit breakers, bulkheads, MCP connections — for the life of its scope.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
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
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
 *   // a typed call: the arguments are checked, the result is a number
 *   const nights = yield* agent.executeAction("nights", { checkIn: "2026-05-12", checkOut: "2026-05-15" }) // 3
 *   // the same call as a request: a failure is reported in the response
 *   const response = yield* agent.execute({ action: "nights", params: { checkIn: "2026-05-12" } })
 *   return response.success ? nights : response.error.category // "VALIDATION"
 * }).pipe(Effect.scoped) // the agent's state lives as long as the scope
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Action from "./Action.ts"
import type * as ActionTool from "./ActionTool.ts"
import type { ActionError, RetrievalFailure, RoleDefinitionError } from "./ActionError.ts"
import type { ActionRequest } from "./ActionRequest.ts"
import type { ActionResponse } from "./ActionResponse.ts"
import type * as ApprovalStore from "./ApprovalStore.ts"
import type * as Authority from "./Authority.ts"
import type * as Chat from "./Chat.ts"
import type * as Events from "./Events.ts"
import * as LanguageModel from "./LanguageModel.ts"
import * as Execute from "./internal/agent/execute.ts"
import * as Register from "./internal/agent/register.ts"
import * as Tools from "./internal/agent/tools.ts"
import type * as ChatKernel from "./internal/chat/turn.ts"
import * as EventHub from "./internal/events/hub.ts"
import * as Observe from "./internal/events/observe.ts"
import * as Telemetry from "./internal/events/telemetry.ts"
import type { AgentRuntime } from "./internal/executor/runtime.ts"
import * as McpConnections from "./internal/executor/mcpTool/connection.ts"
import * as Lazy from "./internal/lazy.ts"
import * as ApprovalKernel from "./internal/pipeline/approval.ts"
import * as AuthorityKernel from "./internal/pipeline/authority.ts"
import * as KnowledgeKernel from "./internal/pipeline/retrieval.ts"
import * as Call from "./internal/pipeline/call.ts"
import * as Pipeline from "./internal/pipeline/run.ts"
import * as Secrets from "./internal/secrets.ts"
import type * as McpClient from "./McpClient.ts"
import type * as Role from "./Role.ts"
import * as ThreadStore from "./ThreadStore.ts"

/**
 * The type id carried by every Agent value.
 *
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/Agent"

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * The merged action record of several roles (`{}` for none: an agent of
 * `mcpServers` only).
 *
 * @category models
 * @since 0.1.0
 */
export type ActionsOf<Roles extends ReadonlyArray<Role.Any>> = [Roles[number]] extends [never]
  ? {}
  : UnionToIntersection<Roles[number]["actions"]>

/**
 * The actions of an agent's own `mcpServers`: one mcpTool action per key.
 *
 * @category models
 * @since 0.3.0
 */
export type ServerActions<Servers> = {
  readonly [K in keyof Servers & string]: Action.McpTool<unknown, McpClient.McpClient>
}

/**
 * What an agent's own `mcpServers` require: `McpClient` when there is one.
 *
 * @category models
 * @since 0.3.0
 */
export type ServerServices<Servers> = [keyof Servers & string] extends [never] ? never : McpClient.McpClient

/**
 * An action name of the agent: one of its roles' actions or `mcpServers`
 * keys. A name known only at run time goes through `agent.execute`.
 *
 * @category models
 * @since 0.1.0
 */
export type Name<Actions> = keyof Actions & string

/**
 * The arguments `executeAction` takes for the action named `K`: its
 * parameter schema's encoded side (the call converts them, as a model's
 * arguments are converted), with the optional `_approval_token`.
 *
 * @category models
 * @since 0.3.0
 */
export type ArgumentsOf<Actions, K extends keyof Actions> = (Actions[K] extends Action.Any
  ? Actions[K]["parameters"]["Encoded"]
  : Readonly<Record<string, unknown>>) & { readonly _approval_token?: string | undefined }

type ArgumentList<P> = {} extends P ? [params?: P] : [params: P]

/**
 * The result type of calling `K`.
 *
 * @category models
 * @since 0.1.0
 */
export type ResultOf<Actions, K extends keyof Actions> = Actions[K] extends Action.Any
  ? Action.Success<Actions[K]>
  : unknown

/**
 * What calling the action named `K` requires.
 *
 * @category models
 * @since 0.3.0
 */
export type ServicesOf<Actions, K extends keyof Actions> = {
  readonly [Key in keyof Actions]: Actions[Key] extends Action.Any ? Action.Services<Actions[Key]> : never
}[K]

/**
 * An agent.
 *
 * - `Actions`: its actions by name (its roles' and its `mcpServers`').
 * - `R`: what its actions require — their own effects' services, and
 *   `HttpClient` (webService), `LanguageModel` (llm), `McpClient` (mcpTool),
 *   `KnowledgeBase` (retrieval); an agent used as an action brings its own.
 * - `Own`: what the agent provides itself and so no call requires:
 *   `LanguageModel` for an agent made with its own `model`, else `never`.
 *
 * `executeAction` requires what its one action requires (all of `R` when
 * `Actions` is a wide record, as in `Agent<Record<string, Action.Any>, R>`); `execute` all of
 * `R`; the chat turns (`chat`, `resume`, `chatStream`, `resumeStream`, see
 * `Chat.Turns`) `R` and a `LanguageModel` ({@link TurnServices}), each
 * without `Own`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Agent<Actions = Record<string, Action.Any>, R = never, Own = never>
  extends Chat.Turns<Exclude<R | LanguageModel.LanguageModel, Own>> {
  readonly [TypeId]: typeof TypeId
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  /**
   * Runs one of the agent's actions by name through the pipeline.
   * `params` are the arguments as the parameter schema encodes them
   * (converted in step 4); `_approval_token` carries an approval token.
   * Fails with one of the nine `ActionError`s or a `RetrievalFailure`;
   * interruption stays interruption.
   */
  readonly executeAction: <const K extends Name<Actions>>(
    name: K,
    ...params: ArgumentList<ArgumentsOf<Actions, K>>
  ) => Effect.Effect<
    ResultOf<Actions, K>,
    ActionError | RetrievalFailure,
    Exclude<string extends keyof Actions ? R : ServicesOf<Actions, K>, Own>
  >
  /**
   * Runs a request and reports success or the typed failure in an
   * `ActionResponse`: the door for a name known only at run time (an unknown
   * one is NOT_FOUND in the response). Only a `RetrievalFailure` (and
   * interruption) escape.
   */
  readonly execute: (request: ActionRequest) => Effect.Effect<ActionResponse, RetrievalFailure, Exclude<R, Own>>
  /**
   * The agent's events: every event published after the stream
   * starts, until the agent's scope closes. Events carry names, categories,
   * messages and durations — never arguments or results.
   */
  readonly events: Stream.Stream<Events.Event>
  /**
   * The approval store the agent uses when none is provided to a call: the
   * `ApprovalStore` provided to `Agent.make`, else an in-memory store of its
   * own. Approve or reject the `pendingTokenId` of an `ApprovalRequired` here.
   */
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
  /**
   * The agent's actions as tools, for what offers them outside a chat turn
   * (an MCP server, an effect/ai toolkit): every action of its roles and
   * `mcpServers` not marked `Action.excludeFromModel` whose name its
   * authority allows, in declaration order. An mcpTool action is one tool
   * with its fixed `{ tool, arguments }` parameters (a chat turn offers its
   * server's tools one by one instead). Listing a tool grants nothing: every
   * call still runs through the whole pipeline.
   */
  readonly tools: ReadonlyArray<ActionTool.ActionTool>
  /**
   * Whether the agent's authority allows `action` (or the MCP tool
   * `action/tool`): the pipeline's first step, as a predicate, for what
   * answers a call before it reaches the pipeline (a name that was never
   * offered is refused as AUTHORITY when this says no, else NOT_FOUND).
   */
  readonly allows: (action: string, tool?: string) => boolean
  /**
   * `text` with every secret the agent knows replaced by `[REDACTED]` (its
   * text, and its URL-encoded, base64 and JSON-string forms): its actions'
   * credentials (`authTokenEnv`, `apiKeyEnv`, the credential variables of a
   * stdio server's environment), read through `Config` now, and the secrets
   * of the `LanguageModel` in context (its provider's key). The agent's own
   * exits — errors, events, spans, tool messages — already pass through it;
   * use it for what you send elsewhere a result of its actions (an MCP
   * client, a model of your own).
   *
   * @since 0.2.0
   */
  readonly redact: (text: string) => Effect.Effect<string>
}

/**
 * What `Agent.make` takes.
 *
 * - `id`: the agent's id (approval tokens and events are bound to it).
 * - `roles`: its roles; bare action names must be unique across them.
 * - `authority`: allow and deny lists (default: allow all).
 * - `mcpServers`: MCP servers of the agent itself, `{ key: server }`; each
 *   acts as an mcpTool action named by its key. A server is a stdio
 *   command `{ command, args, env, cwd }` or a streamable HTTP URL (then all
 *   its tools are allowed, with no credential), or a full `Action.mcpTool`
 *   (for `apiKeyEnv`, `tools`, `timeout`, policies). Keys share the namespace
 *   of the roles' action names.
 * - `model`: the agent's own model (since 0.3.0), a `LanguageModel` service
 *   value or a layer that builds one (built once, in the scope of
 *   `Agent.make`). Its chat turns, its llm actions, MCP sampling on its
 *   behalf and the agents it runs as actions (`Compose.agent`, handoffs)
 *   that have no model of their own use it, so nothing it does requires a
 *   `LanguageModel` of its caller; its type says so (`Own` is
 *   `LanguageModel`). Without one the agent uses the model in context.
 * - `traceSteps`: also run each pipeline step in a child span
 *   `Rolecraft.step.<step>` (default `false`: one span per call).
 * - `traceContent`: put each call's raw arguments and its result on its
 *   `execute_tool` span (`gen_ai.tool.call.arguments`,
 *   `gen_ai.tool.call.result`, as JSON text cut to 8,192 characters; default
 *   `false`: arguments and results are never span attributes). They may hold
 *   personal data: turn it on only where your traces may keep them.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<
  Roles extends ReadonlyArray<Role.Any>,
  Servers extends Readonly<Record<string, McpServer>> = {},
  M extends Model | undefined = undefined
> {
  readonly id: string
  readonly roles: Roles
  readonly authority?: Authority.Authority | undefined
  readonly mcpServers?: Servers | undefined
  readonly model?: M
  readonly traceSteps?: boolean | undefined
  readonly traceContent?: boolean | undefined
}

/**
 * An MCP server of an agent itself (`Agent.make({ mcpServers })`): a server
 * address (`Action.McpServer`: a stdio command or a streamable HTTP URL, all
 * its tools allowed, no credential) or a full `Action.mcpTool` (for
 * `apiKeyEnv`, `tools`, `timeout`, policies).
 *
 * @category models
 * @since 0.3.0
 */
export type McpServer = Action.McpServer | Action.McpTool<unknown, unknown>

/**
 * An agent's own model (`Agent.make({ model })`): a `LanguageModel` service
 * value (what `LanguageModel.make` or a provider's `make` gives), or a layer
 * that builds one — built once, in the scope of `Agent.make`, whose error
 * and requirements become `Agent.make`'s.
 *
 * @category models
 * @since 0.3.0
 */
export type Model = LanguageModel.LanguageModel["Service"] | Layer.Layer<LanguageModel.LanguageModel, unknown, unknown>

/**
 * What an agent made with `model` provides itself: `LanguageModel`, or
 * `never` without one.
 *
 * @category models
 * @since 0.3.0
 */
export type OwnOf<M> = undefined extends M ? never : LanguageModel.LanguageModel

/**
 * What an agent's chat turns require: its actions' services and a
 * `LanguageModel`, without what it provides itself. A composed action
 * (`Compose.agent`, `Compose.handoff`) requires this of its agent.
 *
 * @category models
 * @since 0.3.0
 */
export type TurnServices<A extends Any> = Stream.Services<ReturnType<A["chatStream"]>>

/**
 * What an agent's `execute` requires: its actions' services without what it
 * provides itself. What serves its actions to others (`Mcp.serve`, the
 * effect/ai toolkit) requires this.
 *
 * @category models
 * @since 0.3.0
 */
export type Services<A extends Any> = Effect.Services<ReturnType<A["execute"]>>

/**
 * Any agent, whatever its types.
 *
 * @category models
 * @since 0.3.0
 */
export interface Any extends Omit<Agent<any, any>, "executeAction"> {
  readonly executeAction: (name: never, ...params: ReadonlyArray<never>) => Effect.Effect<unknown, unknown, unknown>
}

type AllActions<Roles extends ReadonlyArray<Role.Any>, Servers> = [keyof Servers & string] extends [never]
  ? ActionsOf<Roles>
  : ActionsOf<Roles> & ServerActions<Servers>
type ModelError<M> = M extends Layer.Layer<any, infer E, any> ? E : never
type ModelServices<M> = M extends Layer.Layer<any, any, infer R> ? R : never

/**
 * Makes an agent for the life of the current scope.
 *
 * Fails with `RoleDefinitionError` when two roles declare the same action
 * name, or an action's resilience or guardrail policy is out of range (and
 * with the error of a `model` layer). Needs a `Scope` (and what a `model`
 * layer needs). What the agent's calls need is in their types (see
 * {@link Agent}): the services its local actions' effects require,
 * `HttpClient` for webService actions, `LanguageModel` for llm actions and
 * chat turns (unless the agent has its own `model`), `McpClient` for mcpTool
 * actions and `mcpServers`, `KnowledgeBase` for actions with a retrieval
 * policy. `ApprovalStore` and `ThreadStore` are optional: with none provided
 * to a call, the agent uses the one provided to `Agent.make`, else an
 * in-memory one of its own (`agent.approvals`; the threads of turns with a
 * `thread` option).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Action, Agent, Role } from "@rolecraft/core"
 *
 * const travel = Role.make({
 *   identity: { name: "travel", goal: "Plan trips", domain: "travel" },
 *   actions: {
 *     nights: Action.local({
 *       description: "Count the nights between two dates",
 *       parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *       run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 *     })
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "planner", roles: [travel] })
 *   return yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
 * }).pipe(Effect.scoped)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <
  const Roles extends ReadonlyArray<Role.Any>,
  const Servers extends Readonly<Record<string, McpServer>> = {},
  M extends Model | undefined = undefined
>(
  options: Options<Roles, Servers, M>
): Effect.Effect<
  Agent<AllActions<Roles, Servers>, Role.Services<Roles[number]> | ServerServices<Servers>, OwnOf<M>>,
  RoleDefinitionError | ModelError<M>,
  Scope.Scope | ModelServices<M>
> =>
  Effect.gen(function* () {
    const id = options.id
    const model = yield* ownModel(options.model)
    // Every secret the agent's actions read, for its exits (with the model's, read where they are used).
    const secrets = Register.credentials(options.roles, options.mcpServers)
    const hub = yield* EventHub.makeHub(secrets)
    const runtime: AgentRuntime = { id, mcp: yield* McpConnections.make(id, hub), secrets }
    const approvals = yield* ApprovalKernel.defaultStore
    const threads = Option.getOrUndefined(yield* Effect.serviceOption(ThreadStore.ThreadStore))
    const knowledgeBase = yield* KnowledgeKernel.defaultBase
    const traceSteps = options.traceSteps === true
    const metrics = Telemetry.actionMetrics(id)
    const registry = yield* Register.register({
      id,
      roles: options.roles,
      mcpServers: options.mcpServers,
      runtime,
      knowledgeBase,
      traceSteps,
      metrics
    })
    const authority = AuthorityKernel.compile(options.authority)
    const pipeline: Pipeline.Agent = {
      id,
      registry,
      authority,
      approvals,
      hub,
      trace: Observe.stepTracer(traceSteps),
      traceContent: options.traceContent === true,
      secrets,
      metrics
    }
    const chats = lazyChats({
      id,
      roles: options.roles,
      actions: registry,
      authority,
      approvals,
      threads,
      hub,
      runtime,
      secrets,
      call: (name, tool, args, call) => Call.ofTool(registry, name, tool, args, call),
      run: (call) => Pipeline.run(pipeline, call),
      proceed: (call) => Pipeline.proceed(pipeline, call)
    })
    const agent: Agent<Record<string, Action.Any>, any> = {
      [TypeId]: TypeId,
      id,
      roles: options.roles,
      executeAction: ((name: string, params?: Readonly<Record<string, unknown>>) =>
        Execute.executeAction(pipeline, name, params)) as Agent<Record<string, Action.Any>, any>["executeAction"],
      execute: (request) => Execute.execute(pipeline, request),
      chat: chats.chat,
      resume: chats.resume,
      chatStream: chats.chatStream,
      resumeStream: chats.resumeStream,
      events: hub.events,
      approvals,
      tools: yield* Tools.toolsOf({ actions: registry, authority, runtime }),
      allows: (action, tool) => AuthorityKernel.allows(authority, action, tool),
      redact: (text) => Effect.map(Secrets.known(secrets), (known) => Secrets.redactor(known)(text))
    }
    return (model === undefined ? agent : onModel(agent, model)) as unknown as Agent<
      AllActions<Roles, Servers>,
      Role.Services<Roles[number]> | ServerServices<Servers>,
      OwnOf<M>
    >
  })

// The agent's own model: a service value as it is, a layer built once in the agent's scope.
const ownModel = <M extends Model | undefined>(
  model: M
): Effect.Effect<LanguageModel.LanguageModel["Service"] | undefined, ModelError<M>, Scope.Scope | ModelServices<M>> => {
  if (model === undefined) return Effect.succeed(undefined)
  if (!Layer.isLayer(model)) return Effect.succeed(model as LanguageModel.LanguageModel["Service"])
  return Effect.map(
    Layer.build(model as Layer.Layer<LanguageModel.LanguageModel, ModelError<M>, ModelServices<M>>),
    Context.get(LanguageModel.LanguageModel)
  )
}

// An agent with its own model runs every door with that model provided, so its chat turns, its llm actions,
// MCP sampling on its behalf and the agents it runs as actions use it; an agent without one is left as it is
// (no per-call work is added).
const onModel = (
  agent: Agent<Record<string, Action.Any>, any>,
  model: LanguageModel.LanguageModel["Service"]
): Agent<Record<string, Action.Any>, any> => {
  const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provideService(effect, LanguageModel.LanguageModel, model)
  const provideStream = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
    Stream.provideService(stream, LanguageModel.LanguageModel, model)
  return {
    ...agent,
    executeAction: ((name: string, params?: Readonly<Record<string, unknown>>) =>
      provide(agent.executeAction(name, params))) as typeof agent.executeAction,
    execute: (request) => provide(agent.execute(request)),
    chat: ((input: Chat.Input, options?: Chat.ChatOptions) => provide(agent.chat(input, options))) as typeof agent.chat,
    resume: ((state: Chat.PausedState, decisions: Chat.Decisions, options?: Chat.ChatOptions) =>
      provide(agent.resume(state, decisions, options))) as typeof agent.resume,
    chatStream: (input, options) => provideStream(agent.chatStream(input, options)),
    resumeStream: (state, decisions, options) => provideStream(agent.resumeStream(state, decisions, options)),
    redact: (text) => provide(agent.redact(text))
  }
}

// The chat kernel (the turn loop, its messages and toolkit) is loaded by the agent's first chat, and the
// agent's chats are made then, once.
const ChatKernelModule = Lazy.make((): Promise<typeof ChatKernel> => import("./internal/chat/turn.ts"))

const lazyChats = <R>(host: ChatKernel.Host<R>): Chat.Turns<R> => {
  let made: Chat.Turns<R> | undefined
  const use = <A, E>(f: (chats: Chat.Turns<R>) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    ChatKernelModule.use((kernel) => f((made ??= kernel.make(host))))
  return {
    chat: ((input: Chat.Input, options?: Chat.ChatOptions) =>
      use((chats) => chats.chat(input, options))) as Chat.Turns<R>["chat"],
    resume: ((state: Chat.PausedState, decisions: Chat.Decisions, options?: Chat.ChatOptions) =>
      use((chats) => chats.resume(state, decisions, options))) as Chat.Turns<R>["resume"],
    chatStream: (input, options) => Stream.unwrap(use((chats) => Effect.succeed(chats.chatStream(input, options)))),
    resumeStream: (state, decisions, options) =>
      Stream.unwrap(use((chats) => Effect.succeed(chats.resumeStream(state, decisions, options))))
  }
}
