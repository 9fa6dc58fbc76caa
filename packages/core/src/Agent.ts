/**
 * The agent (SPEC §5): roles, authority and services; it runs actions through
 * the fixed pipeline of SPEC §9 and holds per-agent state — role state,
 * circuit breakers, bulkheads, MCP connections — for the life of its scope.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Action from "./Action.ts"
import {
  type ActionError,
  ActionNotFound,
  isActionError,
  type RetrievalFailure,
  RoleDefinitionError
} from "./ActionError.ts"
import type { ActionRequest } from "./ActionRequest.ts"
import type { ActionResponse } from "./ActionResponse.ts"
import * as Approval from "./Approval.ts"
import type * as ApprovalStore from "./ApprovalStore.ts"
import * as Authority from "./Authority.ts"
import * as Chat from "./Chat.ts"
import * as Contract from "./Contract.ts"
import * as Conversion from "./Conversion.ts"
import * as Events from "./Events.ts"
import * as Guardrail from "./Guardrail.ts"
import * as Hooks from "./Hooks.ts"
import * as Executor from "./internal/executor.ts"
import { settled } from "./internal/settled.ts"
import * as McpConnections from "./internal/mcpConnections.ts"
import * as McpTool from "./internal/mcpTool.ts"
import * as Knowledge from "./Knowledge.ts"
import * as LanguageModel from "./LanguageModel.ts"
import * as Resilience from "./Resilience.ts"
import * as Tool from "./Tool.ts"
import type * as Role from "./Role.ts"

/**
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/Agent"

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * The merged action record of several roles.
 *
 * @since 0.1.0
 */
export type ActionsOf<Roles extends ReadonlyArray<Role.Any>> = UnionToIntersection<Roles[number]["actions"]>

/**
 * An action name: a known one (completed by editors) or any string.
 *
 * @since 0.1.0
 */
export type Name<Actions> = (keyof Actions & string) | (string & {})

/**
 * The result type of calling `K`: the action's, or `unknown` for a name the
 * types do not know.
 *
 * @since 0.1.0
 */
export type ResultOf<Actions, K extends string> = K extends keyof Actions
  ? Actions[K] extends Action.Any
    ? Action.Success<Actions[K]>
    : unknown
  : unknown

/**
 * An agent. `R` is what its local actions' own effects require.
 *
 * @since 0.1.0
 */
export interface Agent<Actions = Record<string, Action.Any>, R = never> {
  readonly [TypeId]: typeof TypeId
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  /**
   * Runs one action by name through the pipeline (SPEC §9). `params` are raw
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
   * Runs one chat turn (SPEC §7): the model is offered the agent's actions
   * and MCP tools, each tool call runs through the pipeline, until the model
   * answers (`Completed`), a call needs approval (`AwaitingApproval`) or
   * `maxSteps` is reached (`StepLimitReached`). Needs a `LanguageModel`. See
   * `Chat.Chats` for the rules and `Chat.ChatOptions` for the options.
   */
  readonly chat: (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: Chat.ChatOptions
  ) => Effect.Effect<Chat.ChatResult, ActionError, R>
  /**
   * Continues a turn paused for approvals with one `Chat.approve` or
   * `Chat.reject` decision per pending tool call id.
   */
  readonly resume: (
    state: Chat.PausedState,
    decisions: Chat.Decisions,
    options?: Chat.ChatOptions
  ) => Effect.Effect<Chat.ChatResult, ActionError, R>
  /**
   * Runs one chat turn as a stream of `Chat.ChatEvent`s: the model's text as
   * it arrives, each tool call as it starts, is ready and answers, each step's
   * end, and `TurnFinished` last with the same result `chat` returns. The
   * model call streams (`LanguageModel`'s `stream`). Stopping the stream stops
   * the turn. Events go to the caller only, never into `events`.
   */
  readonly chatStream: (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: Chat.ChatStreamOptions
  ) => Stream.Stream<Chat.ChatEvent, ActionError, R>
  /**
   * Continues a paused turn (as `resume`) as a stream of `Chat.ChatEvent`s:
   * the decided calls' `ToolCallReady` and `ToolResult`, then the turn's
   * next steps, `TurnFinished` last.
   */
  readonly resumeStream: (
    state: Chat.PausedState,
    decisions: Chat.Decisions,
    options?: Chat.ChatStreamOptions
  ) => Stream.Stream<Chat.ChatEvent, ActionError, R>
  /**
   * The agent's events (SPEC §5): every event published after the stream
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
}

/**
 * What `Agent.make` takes.
 *
 * - `id`: the agent's id (approval tokens and events are bound to it).
 * - `roles`: its roles; bare action names must be unique across them.
 * - `authority`: allow and deny lists (default: allow all).
 * - `mcpServers`: MCP servers of the agent itself, `{ key: server }`; each
 *   acts as an mcpTool action named by its key (SPEC §8). A server is a stdio
 *   command `{ command, args, env, cwd }` or a streamable HTTP URL (then all
 *   its tools are allowed, with no credential), or a full `Action.mcpTool`
 *   (for `apiKeyEnv`, `tools`, `timeout`, policies). Keys share the namespace
 *   of the roles' action names.
 * - `traceSteps`: also run each pipeline step in a child span
 *   `Rolecraft.step.<step>` (default `false`: one span per call).
 *
 * @since 0.1.0
 */
export interface Options<Roles extends ReadonlyArray<Role.Any>> {
  readonly id: string
  readonly roles: Roles
  readonly authority?: Authority.Authority | undefined
  readonly mcpServers?: Readonly<Record<string, McpTool.ServerOption>> | undefined
  readonly traceSteps?: boolean | undefined
}

/**
 * What the agent prepares once per action, so a call's steps only read it.
 */
interface Registered {
  readonly name: string
  readonly action: Action.Any
  readonly role: Role.Any
  readonly state: Ref.Ref<unknown>
  readonly guardrails: Guardrail.Policy | undefined
  readonly approval: { readonly agentId: string; readonly action: string; readonly policy: Approval.Policy | undefined }
  readonly retrieval: Omit<Parameters<typeof Knowledge.retrieve>[0], "args">
  /** Step 7 for one call: the executor inside the action's resilience policy, then its fallback. */
  readonly run: (
    args: Readonly<Record<string, unknown>>,
    knowledge: ReadonlyArray<Knowledge.Passage>
  ) => Effect.Effect<unknown, ActionError, any>
}

// An mcpTool action's timeout bounds the MCP request itself (the executor
// passes it to the client, which cancels the request on the server), so no
// second timer races it here: that race costs ~20 µs a call.
const defaultAttemptTimeout = (action: Action.Any): Duration.Input | undefined =>
  action._tag === "local" || action._tag === "mcpTool"
    ? undefined
    : (action.timeout ?? (action._tag === "webService" ? "30 seconds" : undefined))

const register = (options: {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly runtime: Executor.AgentRuntime
  readonly knowledgeBase: Effect.Success<typeof Knowledge.defaultBase>
}) =>
  Effect.gen(function* () {
    const { id, runtime, knowledgeBase } = options
    const registry = new Map<string, Registered>()
    for (const role of options.roles) {
      const state = yield* Ref.make<unknown>(role.state?.initial)
      for (const { name, action } of role.entries) {
        const clash = registry.get(name)
        if (clash !== undefined) {
          return yield* new RoleDefinitionError({
            role: role.identity.name,
            key: name,
            message:
              `Agent ${id}: action ${name} is declared by both role ${clash.role.identity.name} and role ` +
              `${role.identity.name}. Bare action names must be unique across an agent's roles: rename one of them.`
          })
        }
        if (action._tag !== "mcpTool" && action.policies.excludeFromModel !== true) {
          const projected = Tool.jsonSchema(action.parameters)
          if (Result.isFailure(projected)) {
            return yield* new RoleDefinitionError({
              role: role.identity.name,
              key: name,
              message:
                `Role ${role.identity.name}: the parameters of action ${name} cannot be offered to a model: ` +
                `${projected.failure.message}${projected.failure.path === "" ? "" : ` (at ${projected.failure.path})`}. ` +
                `Make the schema non-recursive, or mark the action with Action.excludeFromModel.`
            })
          }
        }
        const { policies } = action
        const guardrails = policies.guardrails ?? role.guardrails
        const inRole = (error: RoleDefinitionError) =>
          new RoleDefinitionError({ role: role.identity.name, key: name, message: error.message })
        const durations =
          Resilience.durationProblem("timeout", action._tag === "local" ? undefined : action.timeout, {
            zero: "refused"
          }) ?? Resilience.durationProblem("requireApproval ttl", policies.approval?.ttl, { zero: "refused" })
        if (durations !== undefined) {
          return yield* new RoleDefinitionError({
            role: role.identity.name,
            key: name,
            message: `Action ${name}: ${durations}`
          })
        }
        yield* Effect.mapError(Guardrail.validate(name, guardrails), inRole)
        const guards = yield* Effect.mapError(Resilience.makeGuards(name, policies.resilience), inRole)
        const attemptTimeout = defaultAttemptTimeout(action)
        const timeoutRetryable = Executor.timeoutRetryable(action)
        const run: Registered["run"] = (args, knowledge) =>
          Resilience.run({
            action: name,
            policy: policies.resilience,
            attemptTimeout,
            timeoutRetryable,
            guards,
            attempt: Executor.execute({
              name,
              action,
              args,
              context: { agentId: id, role: role.identity.name, action: name, state, knowledge },
              agent: runtime,
              spec: role.spec
            }),
            fallback: fallbackOf(name, policies.fallback, args)
          })
        registry.set(name, {
          name,
          action,
          role,
          state,
          guardrails,
          approval: { agentId: id, action: name, policy: policies.approval },
          retrieval: { action: name, policy: policies.retrieval, role, base: knowledgeBase },
          run
        })
      }
    }
    return registry
  })

const toolOf = (
  action: string,
  params: Readonly<Record<string, unknown>>,
  registry: ReadonlyMap<string, Registered>
) => (registry.get(action)?.action._tag === "mcpTool" && typeof params.tool === "string" ? params.tool : undefined)

/**
 * Makes an agent for the life of the current scope.
 *
 * Fails with `RoleDefinitionError` when two roles declare the same action
 * name, or an action's resilience or guardrail policy is out of range. Needs
 * a `Scope`; calls need the services the local actions require, and read
 * Rolecraft's own services (`HttpClient`, `LanguageModel`, `McpClient`,
 * `KnowledgeBase`, `ApprovalStore`) optionally. With no `ApprovalStore` (or
 * `KnowledgeBase`) provided to a call, the agent uses the one provided to
 * `Agent.make`, else an in-memory one of its own (`agent.approvals`; a
 * knowledge base over the roles' file sources, each loaded once).
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
 * @since 0.1.0
 */
export const make = <const Roles extends ReadonlyArray<Role.Any>>(
  options: Options<Roles>
): Effect.Effect<Agent<ActionsOf<Roles>, Role.Services<Roles[number]>>, RoleDefinitionError, Scope.Scope> =>
  Effect.gen(function* () {
    const id = options.id
    const servers = McpTool.serversRole(options.mcpServers)
    const runtime: Executor.AgentRuntime = { id, mcp: McpConnections.make(yield* Effect.scope) }
    const approvals = yield* Approval.defaultStore
    const knowledgeBase = yield* Knowledge.defaultBase
    const roles = servers === undefined ? options.roles : [...options.roles, servers]
    const registry = yield* register({ id, roles, runtime, knowledgeBase })
    const authority = Authority.compile(options.authority)
    const available = [...registry.keys()]
    const hub = yield* Events.makeHub
    const trace = Events.stepTracer(options.traceSteps)
    // A step already settled (an action without that step's policy) gives its value without a trip through the runtime.
    const step: Events.StepTracer = (name, effect) => settled(trace(name, effect))

    const notFound = (name: string) =>
      new ActionNotFound({ action: name, message: `No action named ${name}`, available })

    // The pipeline of SPEC §9, one step per line.
    const pipeline = (
      name: string,
      rawParams: Readonly<Record<string, unknown>>,
      requestToken?: string,
      correlationId?: string
    ) =>
      Effect.gen(function* () {
        const { params: raw, token } = Approval.strip(rawParams, requestToken)
        const tool = toolOf(name, raw, registry)
        yield* step("authority", Authority.check(authority, name, tool)) // 1
        const entry = registry.get(name) ?? (yield* notFound(name))
        const { action, role, state, guardrails } = entry
        yield* step("approval", Approval.verify({ ...entry.approval, tool, token, params: raw, store: approvals })) // 2
        const hooked = yield* step("beforeHook", Hooks.before(role.hooks, name, raw)) // 3
        const guarded = yield* step("inputGuardrail", Guardrail.checkInput(name, guardrails?.input, hooked))
        const args = yield* step("conversion", Conversion.decode(action.parameters, guarded, { action: name })) // 4
        const contract = action.policies.contract
        yield* step("precondition", Contract.checkPre(name, contract, args, Ref.getUnsafe(state))) // 5
        const knowledge = yield* step("retrieval", Knowledge.retrieve({ ...entry.retrieval, args })) // 6
        const result = yield* step("run", entry.run(args, knowledge)) // 7
        const output = yield* step("outputGuardrail", Guardrail.checkOutput(name, guardrails?.output, result)) // 8
        const invariants = role.state?.invariants
        yield* step("postcondition", Contract.checkPost(name, contract, output, args, Ref.getUnsafe(state), invariants)) // 9
        yield* step("afterHook", Hooks.after(role.hooks, name, args, output)) // 10
        return output
      }).pipe(
        Effect.tapError((error) =>
          isActionError(error) ? Effect.annotateCurrentSpan("rolecraft.category", error.category) : Effect.void
        ),
        // The call site is always this pipeline: a stack trace would say nothing and costs a capture per call.
        Effect.withSpan(
          "Rolecraft.executeAction",
          { attributes: spanAttributes(id, name, registry.get(name), correlationId) },
          { captureStackTrace: false }
        ),
        Events.observe(hub, () => subjectOf(id, name, registry.get(name), correlationId))
      )

    const executeAction = (name: string, params: Readonly<Record<string, unknown>> = {}) => pipeline(name, params)

    const execute = (request: ActionRequest): Effect.Effect<ActionResponse, RetrievalFailure, any> =>
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        // Model usage is metered only for llm actions, so other calls pay nothing for it.
        const meter =
          registry.get(request.action)?.action._tag === "llm" ? yield* LanguageModel.makeUsageMeter : undefined
        const run = pipeline(request.action, request.params ?? {}, request.approvalToken, request.correlationId)
        const outcome = yield* Effect.result(
          meter === undefined ? run : Effect.provideService(run, LanguageModel.UsageMeter, meter)
        )
        const durationMs = (yield* Clock.currentTimeMillis) - start
        const metered = meter === undefined ? undefined : yield* meter.total
        const common = {
          action: request.action,
          durationMs,
          ...(metered === undefined || metered.calls === 0 ? {} : { usage: metered.usage }),
          ...(request.correlationId === undefined ? {} : { correlationId: request.correlationId })
        }
        if (outcome._tag === "Success") {
          return { ...common, success: true, value: outcome.success, error: undefined } as const
        }
        const error = outcome.failure
        if (error._tag === "RetrievalFailure") return yield* Effect.fail(error)
        return { ...common, success: false, value: undefined, error } as const
      })

    const chats = Chat.make({
      id,
      roles: options.roles,
      actions: registry,
      authority,
      approvals,
      hub,
      runtime,
      executeAction
    })
    const agent: Agent<Record<string, Action.Any>, any> = {
      [TypeId]: TypeId,
      id,
      roles: options.roles,
      executeAction: executeAction as Agent<Record<string, Action.Any>, any>["executeAction"],
      execute,
      chat: chats.chat,
      resume: chats.resume,
      chatStream: chats.chatStream,
      resumeStream: chats.resumeStream,
      events: hub.events,
      approvals
    }
    return agent as unknown as Agent<ActionsOf<Roles>, Role.Services<Roles[number]>>
  })

const spanAttributes = (
  agentId: string,
  action: string,
  registered: Registered | undefined,
  correlationId: string | undefined
): Record<string, string> => {
  const attributes: Record<string, string> = { "rolecraft.agent": agentId, "rolecraft.action": action }
  if (registered !== undefined) {
    attributes["rolecraft.role"] = registered.role.identity.name
    attributes["rolecraft.type"] = registered.action._tag
  }
  if (correlationId !== undefined) attributes["rolecraft.correlation_id"] = correlationId
  return attributes
}

const subjectOf = (
  agentId: string,
  action: string,
  registered: Registered | undefined,
  correlationId: string | undefined
): Events.Subject => ({
  agentId,
  action,
  role: registered?.role.identity.name,
  type: registered?.action._tag,
  correlationId
})

const fallbackOf = (
  name: string,
  fallback: Action.Fallback | undefined,
  args: Readonly<Record<string, unknown>>
): ((error: ActionError) => Effect.Effect<unknown, ActionError, any>) | undefined =>
  fallback === undefined ? undefined : (error) => Resilience.fromReturned(name, "fallback", () => fallback(args, error))
