/**
 * The pipeline: one call of an agent's action, run through its ten steps in order — authority, approval,
 * the before hook and input guardrail, argument conversion, preconditions, retrieval, run, output guardrail,
 * postconditions, after hook — each a call into the module that owns it. A call's span, metrics and events
 * wrap the steps; the call's error is scrubbed of every secret the agent knows before they see it (and each
 * step's, inside its step span, when steps are traced). Refuses what its
 * steps refuse, and a name the agent has not registered (NOT_FOUND, after authority allowed it, so a denied
 * name cannot be probed).
 *
 * The approval token is an argument of the call, never a property of its parameters: the agent's front
 * doors take it out of what a user, a model or an MCP client sends, once.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { type ActionError, actionNotFound, type RetrievalFailure } from "../../ActionError.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import type { Registered, Registry } from "./registered.ts"
import type * as EventHub from "../events/hub.ts"
import * as Observe from "../events/observe.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as Secrets from "../secrets.ts"
import * as Conversion from "../schema/decode.ts"
import * as ApprovalKernel from "./approval.ts"
import * as AuthorityKernel from "./authority.ts"
import { chain } from "./chain.ts"
import * as ContractKernel from "./contract.ts"
import * as GuardrailKernel from "./guardrail.ts"
import * as Hooks from "./hooks.ts"
import * as KnowledgeKernel from "./retrieval.ts"

/** A call's arguments as the steps pass them on. */
type Args = Readonly<Record<string, unknown>>

/** What the pipeline reads of its agent, made once by `Agent.make`. */
export interface Agent {
  readonly id: string
  readonly registry: Registry
  readonly authority: AuthorityKernel.Compiled
  /** The approval store a call uses when none is provided to it. */
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
  readonly hub: EventHub.Hub
  readonly trace: Observe.StepTracer
  /** Whether a call's raw arguments and result go on its `execute_tool` span. */
  readonly traceContent: boolean
  /** The credentials its actions read (`undefined` when none names one); see `Secrets.known`. */
  readonly secrets: Secrets.Read | undefined
  readonly metrics: (action: string) => Telemetry.ActionMetrics
}

/**
 * What a call carries besides its arguments: the approval token it presents, the correlation id of an
 * `ActionRequest`, and the model's tool call it answers in a chat turn, with the secrets the turn knows
 * (read once per turn), which the call's span redacts from the model's call id.
 */
export interface Options {
  readonly token?: string | undefined
  readonly correlationId?: string | undefined
  readonly call?: Telemetry.ToolCallSpan | undefined
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
}

const direct: Options = {}

/**
 * Runs one call of `name` with its raw `params` (the approval token already taken out) through the
 * pipeline, in its span and with its events. Fails with one of the nine `ActionError`s or a
 * `RetrievalFailure`; interruption stays interruption.
 */
export const run = (
  agent: Agent,
  name: string,
  params: Args,
  options: Options = direct
): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const registered = agent.registry.get(name)
  const step = stepOf(agent)
  return Effect.suspend(() => {
    const called =
      registered === undefined ? unknown(agent, name, step) : steps(agent, registered, params, options, step)
    // The error exit: what fails leaves scrubbed of every secret the agent knows (read only then).
    return isSucceeded(called) ? called : Secrets.redacting(called, agent.secrets)
  }).pipe(
    telemetry(agent, name, registered, params, options),
    Observe.observe(agent.hub, () => subjectOf(agent.id, name, registered, options.correlationId))
  )
}

/**
 * Continues a call that paused inside its run step (an agent used as an action whose turn waits for an
 * approval): steps 1 to 6 passed for this exact call before it paused, so it goes on at step 7 with the
 * arguments it had there, then 8 to 10, in a span and with events of its own. A name the agent has not
 * registered is refused as {@link run} refuses it.
 */
export const proceed = (
  agent: Agent,
  name: string,
  args: Args,
  options: Options = direct
): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const registered = agent.registry.get(name)
  if (registered === undefined) return run(agent, name, args, options)
  const step = stepOf(agent)
  return Effect.suspend(() =>
    Secrets.redacting(
      chain(step("run", registered.run(args, []))) // 7
        .next((result) =>
          step("outputGuardrail", GuardrailKernel.checkOutput(name, registered.guardrails?.output, result))
        ) // 8
        .next((output) => checked(registered, args, output, step)).effect, // 9–10
      agent.secrets
    )
  ).pipe(
    telemetry(agent, name, registered, args, options),
    Observe.observe(agent.hub, () => subjectOf(agent.id, name, registered, options.correlationId))
  )
}

/** The ten steps of a call of a registered action. Each gets what the steps before it gave. */
const steps = (
  agent: Agent,
  entry: Registered,
  params: Args,
  options: Options,
  step: Observe.StepTracer
): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const { name, action, role, guardrails } = entry
  const tool = action._tag === "mcpTool" && typeof params.tool === "string" ? params.tool : undefined
  const store = agent.approvals
  const { token } = options
  // Who asks for the call: a refusal asked again in the same scope gets the call's live pending token.
  const scope = options.call?.id ?? options.correlationId
  return chain(step("authority", AuthorityKernel.check(agent.authority, name, tool))) // 1
    .next(() => step("approval", ApprovalKernel.verify({ ...entry.approval, tool, token, params, store, scope }))) // 2
    .next(() => step("beforeHook", Hooks.before(role.hooks, name, params))) // 3
    .next((hooked) => step("inputGuardrail", GuardrailKernel.checkInput(name, guardrails?.input, hooked)))
    .next((guarded) => step("conversion", Conversion.decode(action.parameters, guarded, { action: name }))) // 4
    .next((args: Args) => converted(entry, args, step)).effect // 5–10
}

/** Steps 5 to 8 on the converted arguments, then 9 and 10 on the checked result. */
const converted = (entry: Registered, args: Args, step: Observe.StepTracer) => {
  const { name, action, state, guardrails } = entry
  const contract = action.policies.contract
  return chain(step("precondition", ContractKernel.checkPre(name, contract, args, Ref.getUnsafe(state)))) // 5
    .next(() => step("retrieval", KnowledgeKernel.retrieve({ ...entry.retrieval, args }))) // 6
    .next((knowledge) => step("run", entry.run(args, knowledge))) // 7
    .next((result) => step("outputGuardrail", GuardrailKernel.checkOutput(name, guardrails?.output, result))) // 8
    .next((output) => checked(entry, args, output, step)).effect // 9–10
}

/** Steps 9 and 10 on the checked result, which is the call's value. */
const checked = (entry: Registered, args: Args, output: unknown, step: Observe.StepTracer) => {
  const { name, action, role, state } = entry
  const invariants = role.state?.invariants
  return chain(
    step(
      "postcondition",
      ContractKernel.checkPost(name, action.policies.contract, output, args, Ref.getUnsafe(state), invariants)
    )
  ) // 9
    .next(() => step("afterHook", Hooks.after(role.hooks, name, args, output))) // 10
    .next(() => Exit.succeed(output)).effect
}

/** A name the agent has not registered: authority first, then NOT_FOUND. */
const unknown = (agent: Agent, name: string, step: Observe.StepTracer) =>
  chain(step("authority", AuthorityKernel.check(agent.authority, name))).next(() =>
    Effect.fail(actionNotFound(name, [...agent.registry.keys()]))
  ).effect

const isSucceeded = (effect: Effect.Effect<unknown, unknown, unknown>): boolean =>
  Exit.isExit(effect) && Exit.isSuccess(effect)

// With step spans, each step's error is redacted inside its own span too (a span records the error it ends with).
const stepOf = (agent: Agent): Observe.StepTracer =>
  agent.trace === Observe.untraced
    ? agent.trace
    : (stepName, effect) =>
        agent.trace(stepName, isSucceeded(effect) ? effect : Secrets.redacting(effect, agent.secrets))

/**
 * The call's `execute_tool` span and metrics: made once per action for a direct call, else for this call.
 * What comes from outside — arguments and results with content traced, a correlation id, a model's call id —
 * is redacted of the agent's secrets on the span.
 */
const telemetry = (agent: Agent, name: string, registered: Registered | undefined, params: Args, options: Options) => {
  const { correlationId, call } = options
  if (registered !== undefined && correlationId === undefined && call === undefined && !agent.traceContent) {
    return registered.telemetry
  }
  // A chat turn read the secrets once: with none known, there is nothing to redact.
  const outside =
    options.secrets === undefined
      ? agent.traceContent || correlationId !== undefined || call !== undefined || registered === undefined
      : options.secrets.length > 0
  return Telemetry.executeTool(
    {
      tool: call?.tool ?? name,
      toolCallId: call?.id,
      attributes:
        registered !== undefined && correlationId === undefined
          ? registered.attributes
          : spanAttributes(agent.id, name, registered, correlationId),
      arguments: agent.traceContent ? () => params : undefined,
      redact: outside
        ? options.secrets === undefined
          ? Effect.map(Secrets.known(agent.secrets), Secrets.redactor)
          : Effect.succeed(Secrets.redactor(options.secrets))
        : undefined
    },
    // Names from outside (a model's, a client's) are unbounded: metrics of unknown ones share one series.
    agent.metrics(registered === undefined ? "(unknown)" : name)
  )
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
