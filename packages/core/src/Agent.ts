/**
 * The agent: roles, authority and services; it runs actions through
 * one fixed pipeline and holds per-agent state — role state,
 * circuit breakers, bulkheads, MCP connections — for the life of its scope.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as JsonSchema from "effect/JsonSchema"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Action from "./Action.ts"
import { type ActionError, actionNotFound, type RetrievalFailure, RoleDefinitionError } from "./ActionError.ts"
import type { ActionRequest } from "./ActionRequest.ts"
import type { ActionResponse } from "./ActionResponse.ts"
import type * as Approval from "./Approval.ts"
import * as ApprovalKernel from "./internal/pipeline/approval.ts"
import type * as ApprovalStore from "./ApprovalStore.ts"
import type * as Authority from "./Authority.ts"
import * as AuthorityKernel from "./internal/pipeline/authority.ts"
import type * as Chat from "./Chat.ts"
import type * as ChatKernel from "./internal/chat/turn.ts"
import * as ContractKernel from "./internal/pipeline/contract.ts"
import * as Conversion from "./internal/schema/decode.ts"
import type * as Events from "./Events.ts"
import * as EventHub from "./internal/events/hub.ts"
import * as Observe from "./internal/events/observe.ts"
import * as Telemetry from "./internal/events/telemetry.ts"
import * as Metering from "./internal/events/usage.ts"
import type * as Guardrail from "./Guardrail.ts"
import type * as McpClient from "./McpClient.ts"
import * as GuardrailKernel from "./internal/pipeline/guardrail.ts"
import * as Hooks from "./internal/pipeline/hooks.ts"
import type { AgentRuntime } from "./internal/executor/attempt.ts"
import * as Executor from "./internal/executor/execute.ts"
import * as Redact from "./internal/redact.ts"
import { chain } from "./internal/chain.ts"
import * as McpConnections from "./internal/executor/mcpTool/connection.ts"
import * as McpTool from "./internal/executor/mcpTool.ts"
import type * as Knowledge from "./Knowledge.ts"
import * as KnowledgeKernel from "./internal/pipeline/retrieval.ts"
import * as Lazy from "./internal/lazy.ts"
import type * as LanguageModel from "./LanguageModel.ts"
import * as Callback from "./internal/callback.ts"
import * as RunStep from "./internal/run/attempt.ts"
import * as ResiliencePolicy from "./internal/run/policy.ts"
import * as Tool from "./internal/schema/tool.ts"
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
 * One of the agent's actions as a tool (see `Agent.tools`).
 *
 * - `name`: the tool's name, valid for model APIs (`^[a-zA-Z0-9_-]{1,64}$`)
 *   and unique among the agent's tools; the action name itself when it is
 *   already valid.
 * - `action`: the action it runs (pass it to `agent.execute`).
 * - `description`: the action's description.
 * - `parameters`: the JSON Schema of its arguments as a model is shown it —
 *   an object schema with `properties`, no `$ref` left, `_approval_token`
 *   never listed.
 * - `approval`: the action's approval reason when it requires approval
 *   (`Action.requireApproval`); a call then needs an approved token.
 *
 * @category tools
 * @since 0.1.0
 */
export interface ActionTool {
  readonly name: string
  readonly action: string
  readonly description: string
  readonly parameters: JsonSchema.JsonSchema
  readonly approval: { readonly reason: string } | undefined
}

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
   * Runs one chat turn: the model is offered the agent's actions
   * and MCP tools, each tool call runs through the pipeline, until the model
   * answers (`Completed`), a call needs approval (`AwaitingApproval`) or
   * `maxSteps` is reached (`StepLimitReached`). Needs a `LanguageModel`. See
   * the `Chat` module for the results and `Chat.ChatOptions` for the options.
   */
  readonly chat: {
    <S extends Schema.Top>(
      input: string | ReadonlyArray<LanguageModel.Message>,
      options: Chat.ChatOptions & { readonly output: S }
    ): Effect.Effect<Chat.ChatResultWith<S["Type"]>, ActionError, R>
    (
      input: string | ReadonlyArray<LanguageModel.Message>,
      options?: Chat.ChatOptions
    ): Effect.Effect<Chat.ChatResult, ActionError, R>
  }
  /**
   * Continues a turn paused for approvals with one `Chat.approve` or
   * `Chat.reject` decision per pending tool call id.
   */
  readonly resume: {
    <S extends Schema.Top>(
      state: Chat.PausedState,
      decisions: Chat.Decisions,
      options: Chat.ChatOptions & { readonly output: S }
    ): Effect.Effect<Chat.ChatResultWith<S["Type"]>, ActionError, R>
    (
      state: Chat.PausedState,
      decisions: Chat.Decisions,
      options?: Chat.ChatOptions
    ): Effect.Effect<Chat.ChatResult, ActionError, R>
  }
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
  readonly tools: ReadonlyArray<ActionTool>
  /**
   * Whether the agent's authority allows `action` (or the MCP tool
   * `action/tool`): the pipeline's first step, as a predicate, for what
   * answers a call before it reaches the pipeline (a name that was never
   * offered is refused as AUTHORITY when this says no, else NOT_FOUND).
   */
  readonly allows: (action: string, tool?: string) => boolean
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
 * What the agent prepares once per action, so a call's steps only read it.
 */
interface Registered {
  readonly name: string
  readonly action: Action.Any
  readonly role: Role.Any
  readonly state: Ref.Ref<unknown>
  readonly guardrails: Guardrail.Policy | undefined
  readonly approval: { readonly agentId: string; readonly action: string; readonly policy: Approval.Policy | undefined }
  readonly retrieval: Omit<Parameters<typeof KnowledgeKernel.retrieve>[0], "args">
  /** Its calls' `rolecraft.*` span attributes (a call with a correlation id adds it to a copy). */
  readonly attributes: Readonly<Record<string, string>>
  /** The span and metrics of a direct call (no correlation id, no tool call, content not traced), made once. */
  readonly telemetry: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The secrets its calls read, read again only when a call fails (`undefined` when it names none): every
   * step's error is scrubbed of them, so a hook, result mapper or fallback quoting one leaks it nowhere.
   */
  readonly secrets: Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> | undefined
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

// The attempt timeout an executor applies itself, parsed once.
const ownAttemptTimeout = (
  name: string,
  input: Duration.Input | undefined,
  retryable: boolean
): RunStep.AttemptTimeout | undefined => {
  if (input === undefined) return undefined
  const after = Duration.fromInputUnsafe(input)
  return { after, error: () => RunStep.attemptTimedOut(name, after, retryable) }
}

const register = (options: {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly runtime: AgentRuntime
  readonly knowledgeBase: Effect.Success<typeof KnowledgeKernel.defaultBase>
  readonly traceSteps: boolean
  readonly metrics: (action: string) => Telemetry.ActionMetrics
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
          ResiliencePolicy.durationProblem("timeout", action._tag === "local" ? undefined : action.timeout, {
            zero: "refused"
          }) ?? ResiliencePolicy.durationProblem("requireApproval ttl", policies.approval?.ttl, { zero: "refused" })
        if (durations !== undefined) {
          return yield* new RoleDefinitionError({
            role: role.identity.name,
            key: name,
            message: `Action ${name}: ${durations}`
          })
        }
        yield* Effect.mapError(GuardrailKernel.validate(name, guardrails), inRole)
        const guards = yield* Effect.mapError(ResiliencePolicy.makeGuards(name, policies.resilience), inRole)
        const attemptTimeout = defaultAttemptTimeout(action)
        const timeoutRetryable = Executor.timeoutRetryable(action)
        // A webService executor bounds its own attempt (its request is aborted at the deadline): no timer races it.
        const executorTimesAttempt = Executor.timesItsAttempt(action)
        const timeout = executorTimesAttempt
          ? ownAttemptTimeout(name, policies.resilience?.attemptTimeout ?? attemptTimeout, timeoutRetryable)
          : undefined
        // Durations parsed and the retry schedule built once per action, not per call.
        const stepOptions = {
          action: name,
          policy: policies.resilience,
          attemptTimeout,
          timeoutRetryable,
          executorTimesAttempt,
          guards
        }
        const step = RunStep.prepare(stepOptions)
        // A local action that nothing repeats, delays or bounds runs as its step is made: no trip through the
        // runtime (not under traceSteps, whose run span must hold the call).
        const now = action._tag === "local" && !options.traceSteps && RunStep.runsAtOnce(stepOptions)
        const run: Registered["run"] = (args, knowledge) =>
          step(
            Executor.execute({
              name,
              action,
              args,
              context: { agentId: id, role: role.identity.name, action: name, state, knowledge },
              agent: runtime,
              spec: role.spec,
              timeout,
              now
            }),
            fallbackOf(name, policies.fallback, args)
          )
        const attributes = {
          "rolecraft.agent": id,
          "rolecraft.action": name,
          "rolecraft.role": role.identity.name,
          "rolecraft.type": action._tag
        }
        registry.set(name, {
          name,
          action,
          role,
          state,
          guardrails,
          approval: { agentId: id, action: name, policy: policies.approval },
          retrieval: { action: name, policy: policies.retrieval, role, base: knowledgeBase },
          secrets: Executor.secretsOf(action),
          attributes,
          telemetry: Telemetry.executeTool(
            { tool: name, toolCallId: undefined, attributes, arguments: undefined },
            options.metrics(name)
          ),
          run
        })
      }
    }
    return registry
  })

/** A call's arguments as the steps pass them on. */
type Args = Readonly<Record<string, unknown>>

const isSucceeded = (effect: Effect.Effect<unknown, unknown, unknown>): boolean =>
  Exit.isExit(effect) && Exit.isSuccess(effect)

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
    const runtime: AgentRuntime = { id, mcp: yield* McpConnections.make }
    const approvals = yield* ApprovalKernel.defaultStore
    const knowledgeBase = yield* KnowledgeKernel.defaultBase
    const roles = servers === undefined ? options.roles : [...options.roles, servers]
    const metricsOf = Telemetry.actionMetrics(id)
    const traceSteps = options.traceSteps === true
    const registry = yield* register({ id, roles, runtime, knowledgeBase, traceSteps, metrics: metricsOf })
    const authority = AuthorityKernel.compile(options.authority)
    const available = [...registry.keys()]
    const hub = yield* EventHub.makeHub
    const trace = Observe.stepTracer(options.traceSteps)
    // No hand-written shortcut for a step that is already settled: yielding a success Exit costs ~0.03 µs in Effect 4.
    const traced: Observe.StepTracer = trace

    const traceContent = options.traceContent === true
    // Names from outside (a model's, a client's) are unbounded: metrics of unknown ones share one series.
    const metricsFor = (name: string) => metricsOf(registry.has(name) ? name : "(unknown)")

    const notFound = (name: string) => actionNotFound(name, available)

    // The pipeline, one step per line.
    const pipeline = (
      name: string,
      rawParams: Readonly<Record<string, unknown>>,
      requestToken?: string,
      correlationId?: string,
      call?: Telemetry.ToolCallSpan
    ) => {
      const registered = registry.get(name)
      // Each step's error is redacted inside its step span, before the call's span, metrics and events see it.
      const secrets = registered?.secrets
      const step: Observe.StepTracer =
        secrets === undefined
          ? traced
          : (stepName, effect) => traced(stepName, isSucceeded(effect) ? effect : Redact.redacting(effect, secrets))
      // Each step gets the previous one's value; settled steps continue at once, without the runtime.
      return Effect.suspend(() => {
        const { params: raw, token } = ApprovalKernel.strip(rawParams, requestToken)
        const tool = toolOf(name, raw, registry)
        let entry: Registered
        let args: Args
        let output: unknown
        return chain(step("authority", AuthorityKernel.check(authority, name, tool))) // 1
          .next((): Effect.Effect<void, ActionError> => {
            const found = registry.get(name)
            if (found === undefined) return Effect.fail(notFound(name))
            entry = found
            return step(
              "approval",
              ApprovalKernel.verify({ ...entry.approval, tool, token, params: raw, store: approvals })
            ) // 2
          })
          .next(() => step("beforeHook", Hooks.before(entry.role.hooks, name, raw))) // 3
          .next((hooked) => step("inputGuardrail", GuardrailKernel.checkInput(name, entry.guardrails?.input, hooked)))
          .next((guarded) => step("conversion", Conversion.decode(entry.action.parameters, guarded, { action: name }))) // 4
          .next((decoded: Args) => {
            args = decoded
            return step(
              "precondition",
              ContractKernel.checkPre(name, entry.action.policies.contract, args, Ref.getUnsafe(entry.state))
            ) // 5
          })
          .next(() => step("retrieval", KnowledgeKernel.retrieve({ ...entry.retrieval, args }))) // 6
          .next((knowledge) => step("run", entry.run(args, knowledge))) // 7
          .next((result) =>
            step("outputGuardrail", GuardrailKernel.checkOutput(name, entry.guardrails?.output, result))
          ) // 8
          .next((checked) => {
            output = checked
            const { action, role, state } = entry
            return step(
              "postcondition",
              ContractKernel.checkPost(
                name,
                action.policies.contract,
                output,
                args,
                Ref.getUnsafe(state),
                role.state?.invariants
              )
            ) // 9
          })
          .next(() => step("afterHook", Hooks.after(entry.role.hooks, name, args, output))) // 10
          .next(() => Effect.succeed(output)).effect
      }).pipe(
        registered !== undefined && correlationId === undefined && call === undefined && !traceContent
          ? registered.telemetry
          : Telemetry.executeTool(
              {
                tool: call?.tool ?? name,
                toolCallId: call?.id,
                attributes:
                  registered !== undefined && correlationId === undefined
                    ? registered.attributes
                    : spanAttributes(id, name, registered, correlationId),
                arguments: traceContent ? () => ApprovalKernel.strip(rawParams).params : undefined
              },
              metricsFor(name)
            ),
        Observe.observe(hub, () => subjectOf(id, name, registered, correlationId))
      )
    }

    const executeAction = (name: string, params: Readonly<Record<string, unknown>> = {}) => pipeline(name, params)

    const execute = (request: ActionRequest): Effect.Effect<ActionResponse, RetrievalFailure, any> =>
      Effect.suspend(() => {
        const run = pipeline(request.action, request.params ?? {}, request.approvalToken, request.correlationId)
        // Model usage is metered only for llm actions, so other calls pay nothing for it.
        return registry.get(request.action)?.action._tag === "llm"
          ? Metering.metered(run, (metered, usage) => respond(request, metered, usage))
          : respond(request, run, Effect.succeed(undefined))
      })

    const respond = (
      request: ActionRequest,
      run: Effect.Effect<unknown, ActionError | RetrievalFailure, any>,
      usage: Effect.Effect<ActionResponse["usage"]>
    ): Effect.Effect<ActionResponse, RetrievalFailure, any> =>
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        const outcome = yield* Effect.result(run)
        const durationMs = (yield* Clock.currentTimeMillis) - start
        const used = yield* usage
        const common = {
          action: request.action,
          durationMs,
          ...(used === undefined ? {} : { usage: used }),
          ...(request.correlationId === undefined ? {} : { correlationId: request.correlationId })
        }
        if (outcome._tag === "Success") {
          return { ...common, success: true, value: outcome.success, error: undefined } as const
        }
        const error = outcome.failure
        if (error._tag === "RetrievalFailure") return yield* Effect.fail(error)
        return { ...common, success: false, value: undefined, error } as const
      })

    const chats = lazyChats({
      id,
      roles: options.roles,
      actions: registry,
      authority,
      approvals,
      hub,
      runtime,
      executeAction: (name, params, call) => pipeline(name, params, undefined, undefined, call)
    })
    const agent: Agent<Record<string, Action.Any>, any> = {
      [TypeId]: TypeId,
      id,
      roles: options.roles,
      executeAction: executeAction as Agent<Record<string, Action.Any>, any>["executeAction"],
      execute,
      // One boundary cast: with an `output` schema, a completed result carries the decoded output.
      chat: chats.chat as Agent<Record<string, Action.Any>, any>["chat"],
      resume: chats.resume as Agent<Record<string, Action.Any>, any>["resume"],
      chatStream: chats.chatStream,
      resumeStream: chats.resumeStream,
      events: hub.events,
      approvals,
      tools: toolsOf(registry, authority),
      allows: (action, tool) => AuthorityKernel.allows(authority, action, tool)
    }
    return agent as unknown as Agent<ActionsOf<Roles>, Role.Services<Roles[number]>>
  })

// The chat kernel (the turn loop, its messages and toolkit) is loaded by the agent's first chat, and the
// agent's chats are made then, once.
const ChatKernelModule = Lazy.make((): Promise<typeof ChatKernel> => import("./internal/chat/turn.ts"))

const lazyChats = <R>(host: ChatKernel.Host<R>): ChatKernel.Chats<R> => {
  let made: ChatKernel.Chats<R> | undefined
  const use = <A, E>(f: (chats: ChatKernel.Chats<R>) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    ChatKernelModule.use((kernel) => f((made ??= kernel.make(host))))
  return {
    chat: (input, options) => use((chats) => chats.chat(input, options)),
    resume: (state, decisions, options) => use((chats) => chats.resume(state, decisions, options)),
    chatStream: (input, options) => Stream.unwrap(use((chats) => Effect.succeed(chats.chatStream(input, options)))),
    resumeStream: (state, decisions, options) =>
      Stream.unwrap(use((chats) => Effect.succeed(chats.resumeStream(state, decisions, options))))
  }
}

// Registration has already refused parameters that cannot be projected, so only a
// name clash the toolkit cannot resolve (repeated hash collisions) could leave one out.
const toolsOf = (
  registry: ReadonlyMap<string, Registered>,
  authority: AuthorityKernel.Compiled
): ReadonlyArray<ActionTool> => {
  const offered = [...registry.values()].filter(
    ({ name, action }) => action.policies.excludeFromModel !== true && AuthorityKernel.allows(authority, name)
  )
  const kit = Tool.toolkit(
    offered.map(({ name, action }) => ({ key: name, description: action.description, parameters: action.parameters }))
  )
  return kit.tools.map((tool) => {
    const approval = registry.get(tool.key)?.action.policies.approval
    return {
      name: tool.name,
      action: tool.key,
      description: tool.description,
      parameters: tool.parameters,
      approval: approval === undefined ? undefined : { reason: approval.reason }
    }
  })
}

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
): Observe.Subject => ({
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
  fallback === undefined ? undefined : (error) => Callback.fromReturned(name, "fallback", () => fallback(args, error))
