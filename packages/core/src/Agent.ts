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
import * as Effect from "effect/Effect"
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
 * An action name: a known one (completed by editors) or any string.
 *
 * @category models
 * @since 0.1.0
 */
export type Name<Actions> = (keyof Actions & string) | (string & {})

/**
 * The result type of calling `K`: the action's, or `unknown` for a name the
 * types do not know.
 *
 * @category models
 * @since 0.1.0
 */
export type ResultOf<Actions, K extends string> = K extends keyof Actions
  ? Actions[K] extends Action.Any
    ? Action.Success<Actions[K]>
    : unknown
  : unknown

/**
 * An agent. `R` is what its local actions' own effects require. Its chat
 * turns (`chat`, `resume`, `chatStream`, `resumeStream`) are `Chat.Turns`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Agent<Actions = Record<string, Action.Any>, R = never> extends Chat.Turns<R> {
  readonly [TypeId]: typeof TypeId
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  /**
   * Runs one action by name through the pipeline. `params` are raw
   * arguments (converted in step 4); `_approval_token` carries an approval
   * token. Fails with one of the nine `ActionError`s or a
   * `RetrievalFailure`; interruption stays interruption.
   */
  readonly executeAction: <const K extends Name<Actions>>(
    name: K,
    params?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<ResultOf<Actions, K>, ActionError | RetrievalFailure, R>
  /**
   * Runs a request and reports success or the typed failure in an
   * `ActionResponse`. Only a `RetrievalFailure` (and interruption) escape.
   */
  readonly execute: (request: ActionRequest) => Effect.Effect<ActionResponse, RetrievalFailure, R>
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
export interface Options<Roles extends ReadonlyArray<Role.Any>> {
  readonly id: string
  readonly roles: Roles
  readonly authority?: Authority.Authority | undefined
  readonly mcpServers?: Readonly<Record<string, McpClient.Server>> | undefined
  readonly traceSteps?: boolean | undefined
  readonly traceContent?: boolean | undefined
}

/**
 * Makes an agent for the life of the current scope.
 *
 * Fails with `RoleDefinitionError` when two roles declare the same action
 * name, or an action's resilience or guardrail policy is out of range. Needs
 * a `Scope`; calls need the services the local actions require, and read
 * Rolecraft's own services (`HttpClient`, `LanguageModel`, `McpClient`,
 * `KnowledgeBase`, `ApprovalStore`, `ThreadStore`) optionally. With no
 * `ApprovalStore` (or `KnowledgeBase`, `ThreadStore`) provided to a call, the
 * agent uses the one provided to `Agent.make`, else an in-memory one of its
 * own (`agent.approvals`; a knowledge base over the roles' file sources, each
 * loaded once; the threads of turns with a `thread` option).
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
export const make = <const Roles extends ReadonlyArray<Role.Any>>(
  options: Options<Roles>
): Effect.Effect<Agent<ActionsOf<Roles>, Role.Services<Roles[number]>>, RoleDefinitionError, Scope.Scope> =>
  Effect.gen(function* () {
    const id = options.id
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
      executeAction: ((name, params) => Execute.executeAction(pipeline, name, params)) as Agent<
        Record<string, Action.Any>,
        any
      >["executeAction"],
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
    return agent as unknown as Agent<ActionsOf<Roles>, Role.Services<Roles[number]>>
  })

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
