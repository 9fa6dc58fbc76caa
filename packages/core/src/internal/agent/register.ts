/**
 * An agent's registration: its roles' actions (and its own MCP servers, as one role of mcpTool actions)
 * checked and prepared once, when the agent is made, so that a call's steps only read what is prepared.
 * Refuses, as a `RoleDefinitionError`: a bare action name declared by two roles, parameters a model cannot be
 * offered (unless the action is kept from the model), a timeout or approval ttl out of range, and a guardrail
 * or resilience policy out of range.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Action from "../../Action.ts"
import { type ActionError, RoleDefinitionError } from "../../ActionError.ts"
import type * as Role from "../../Role.ts"
import * as Nesting from "./nesting.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as Callback from "../callback.ts"
import type { AgentRuntime } from "../executor/runtime.ts"
import * as Executor from "../executor/execute.ts"
import * as McpTool from "../executor/mcpTool.ts"
import * as GuardrailKernel from "../pipeline/guardrail.ts"
import type { Registered, Registry } from "../pipeline/registered.ts"
import type * as KnowledgeKernel from "../pipeline/retrieval.ts"
import * as RunStep from "../resilience/runStep.ts"
import type { Guards } from "../resilience/guard.ts"
import * as ResiliencePolicy from "../resilience/policy.ts"
import * as Secrets from "../secrets.ts"
import * as JsonSchema from "../tool/jsonSchema.ts"

/** What registration needs of the agent being made. */
export interface Options {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly mcpServers: Readonly<Record<string, Action.McpServer | Action.McpTool<unknown, unknown>>> | undefined
  readonly runtime: AgentRuntime
  readonly knowledgeBase: Effect.Success<typeof KnowledgeKernel.defaultBase>
  readonly traceSteps: boolean
  readonly metrics: (action: string) => Telemetry.ActionMetrics
}

/**
 * Registers the roles' actions, then the agent's MCP servers (one mcpTool action per key), in declaration
 * order. Each role's state is made here, once per agent.
 */
export const register = (options: Options): Effect.Effect<Registry, RoleDefinitionError> =>
  Effect.gen(function* () {
    const roles = rolesOf(options.roles, options.mcpServers)
    const registry = new Map<string, Registered>()
    for (const role of roles) {
      const state = yield* Ref.make<unknown>(role.state?.initial)
      for (const { name, action } of role.entries) {
        const clash = registry.get(name)
        if (clash !== undefined) {
          return yield* new RoleDefinitionError({
            role: role.identity.name,
            key: name,
            message:
              `Agent ${options.id}: action ${name} is declared by both role ${clash.role.identity.name} and role ` +
              `${role.identity.name}. Bare action names must be unique across an agent's roles: rename one of them.`
          })
        }
        registry.set(name, yield* prepare(options, role, state, name, action))
      }
    }
    return registry
  })

/** The roles an agent registers: its own, then its MCP servers as one role of mcpTool actions. */
const rolesOf = (
  roles: ReadonlyArray<Role.Any>,
  mcpServers: Readonly<Record<string, Action.McpServer | Action.McpTool<unknown, unknown>>> | undefined
): ReadonlyArray<Role.Any> => {
  const servers = McpTool.serversRole(mcpServers)
  return servers === undefined ? roles : [...roles, servers]
}

/**
 * The credentials every action of an agent reads (its roles' and its MCP servers'), as one read;
 * `undefined` when none names one. The agent redacts them, with its model's key, at every exit.
 */
export const credentials = (
  roles: ReadonlyArray<Role.Any>,
  mcpServers: Readonly<Record<string, Action.McpServer | Action.McpTool<unknown, unknown>>> | undefined
): Secrets.Read | undefined =>
  Secrets.ofActions(
    rolesOf(roles, mcpServers).flatMap((role) => role.entries.map(({ action }) => secretsOf(action, new Set())))
  )

/** The credentials a call of `action` reads; for an agent used as an action or handed off to, its agents'. */
const secretsOf = (action: Action.Any, seen: ReadonlySet<string>): Secrets.Read | undefined => {
  const composed = Nesting.composedOf(action)
  return composed === undefined ? Executor.secretsOf(action) : nestedSecrets(composed.agent, seen)
}

/**
 * The credentials of an agent used as an action or handed off to, and of the agents it uses in turn, at any
 * depth (each agent once, so agents that hand off to each other end): what its model may quote reaches the
 * calling turn, so they are secrets of that turn too.
 */
const nestedSecrets = (agent: () => Nesting.Inner, seen: ReadonlySet<string>): Secrets.Read =>
  Effect.suspend(() => {
    const inner = agent()
    if (seen.has(inner.id)) return Effect.succeed([])
    const next = new Set([...seen, inner.id])
    const reads = inner.roles.flatMap((role) => role.entries.map(({ action }) => secretsOf(action, next)))
    return Secrets.ofActions(reads) ?? Effect.succeed([])
  })

/** Checks one action and prepares what its calls read. */
const prepare = (
  options: Options,
  role: Role.Any,
  state: Ref.Ref<unknown>,
  name: string,
  action: Action.Any
): Effect.Effect<Registered, RoleDefinitionError> =>
  Effect.gen(function* () {
    const { id } = options
    const refused = (message: string) => new RoleDefinitionError({ role: role.identity.name, key: name, message })
    const offerable = offerableProblem(role, name, action)
    if (offerable !== undefined) return yield* refused(offerable)
    const { policies } = action
    const guardrails = policies.guardrails ?? role.guardrails
    const durations =
      ResiliencePolicy.durationProblem("timeout", action._tag === "local" ? undefined : action.timeout, {
        zero: "refused"
      }) ?? ResiliencePolicy.durationProblem("requireApproval ttl", policies.approval?.ttl, { zero: "refused" })
    if (durations !== undefined) return yield* refused(`Action ${name}: ${durations}`)
    if (policies.approval?.when !== undefined && action._tag !== "mcpTool") {
      return yield* refused(
        `Action ${name}: requireApproval's when chooses among an MCP server's tools; this is a ${action._tag} action (leave when out)`
      )
    }
    const inRole = (error: RoleDefinitionError) => refused(error.message)
    yield* Effect.mapError(GuardrailKernel.validate(name, guardrails), inRole)
    const guards = yield* Effect.mapError(ResiliencePolicy.makeGuards(name, policies.resilience), inRole)
    const attributes = {
      "rolecraft.agent": id,
      "rolecraft.action": name,
      "rolecraft.role": role.identity.name,
      "rolecraft.type": action._tag
    }
    return {
      name,
      action,
      role,
      state,
      guardrails,
      approval: { agentId: id, action: name, policy: policies.approval },
      retrieval: { action: name, policy: policies.retrieval, role, base: options.knowledgeBase },
      attributes,
      telemetry: Telemetry.executeTool(
        { tool: name, toolCallId: undefined, attributes, arguments: undefined },
        options.metrics(name)
      ),
      run: runStep(options, role, state, name, action, guards),
      ...(action._tag === "mcpTool" ? { definition: McpTool.definitions(name, action, options.runtime) } : {})
    }
  })

// An mcpTool action's parameters are fixed (`{ tool, arguments }`); any other action offered to a model must
// have parameters a model can be shown.
const offerableProblem = (role: Role.Any, name: string, action: Action.Any): string | undefined => {
  if (action._tag === "mcpTool" || action.policies.excludeFromModel === true) return undefined
  const projected = JsonSchema.jsonSchema(action.parameters)
  if (Result.isSuccess(projected)) return undefined
  const { message, path } = projected.failure
  return (
    `Role ${role.identity.name}: the parameters of action ${name} cannot be offered to a model: ` +
    `${message}${path === "" ? "" : ` (at ${path})`}. ` +
    `Make the schema non-recursive, or mark the action with Action.excludeFromModel.`
  )
}

/** Step 7 of one action, prepared: durations parsed and the retry schedule built once per action, not per call. */
const runStep = (
  options: Options,
  role: Role.Any,
  state: Ref.Ref<unknown>,
  name: string,
  action: Action.Any,
  guards: Guards
): Registered["run"] => {
  const { policies } = action
  const attemptTimeout = defaultAttemptTimeout(action)
  const timeoutRetryable = Executor.timeoutRetryable(action)
  // A webService executor bounds its own attempt (its request is aborted at the deadline): no timer races it.
  const executorTimesAttempt = Executor.timesItsAttempt(action)
  const timeout = executorTimesAttempt
    ? ownAttemptTimeout(name, policies.resilience?.attemptTimeout ?? attemptTimeout, timeoutRetryable)
    : undefined
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
  const agentId = options.id
  const roleName = role.identity.name
  // Only an MCP tool's call has a tool and a view of its arguments apart from them: the others' attempts stay small.
  return action._tag === "mcpTool"
    ? (args, knowledge, tool, view, approved) =>
        step(
          Executor.execute({
            name,
            action,
            args,
            tool,
            view,
            approved,
            context: { agentId, role: roleName, action: name, state, knowledge },
            agent: options.runtime,
            spec: role.spec,
            timeout,
            now
          }),
          fallbackOf(name, policies.fallback, view)
        )
    : (args, knowledge) =>
        step(
          Executor.execute({
            name,
            action,
            args,
            context: { agentId, role: roleName, action: name, state, knowledge },
            agent: options.runtime,
            spec: role.spec,
            timeout,
            now
          }),
          fallbackOf(name, policies.fallback, args)
        )
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

const fallbackOf = (
  name: string,
  fallback: Action.Fallback | undefined,
  args: Readonly<Record<string, unknown>>
): ((error: ActionError) => Effect.Effect<unknown, ActionError, any>) | undefined =>
  fallback === undefined ? undefined : (error) => Callback.fromReturned(name, "fallback", () => fallback(args, error))
