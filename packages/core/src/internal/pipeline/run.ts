/**
 * The pipeline: one call of an agent's action, run through its ten steps in order — authority, approval,
 * the before hook and input guardrail, argument conversion, preconditions, retrieval, run, output guardrail,
 * postconditions, after hook — each a call into the module that owns it. A call's span, metrics and events
 * wrap the steps; the call's error is scrubbed of every secret the agent knows before they see it (and each
 * step's, inside its step span, when steps are traced). Refuses what its
 * steps refuse, and a name the agent has not registered (NOT_FOUND, after authority allowed it, so a denied
 * name cannot be probed).
 *
 * A call is one value (`call.ts`), made where it enters: every step reads it, authority decides once per run,
 * its approval binding is computed once, and its arguments are converted once (an MCP tool's against the
 * tool's own schema, by its executor). A call of a chat turn that needs an approval it does not carry ends at
 * step 2 with a pending value the turn pauses on; a direct caller gets its APPROVAL failure.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import { type ActionError, actionNotFound, type RetrievalFailure } from "../../ActionError.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import type { Registered, Registry } from "./registered.ts"
import type * as EventHub from "../events/hub.ts"
import * as Observe from "../events/observe.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as Secrets from "../secrets.ts"
import * as Conversion from "../schema/decode.ts"
import type { Pending } from "../pending.ts"
import * as ApprovalKernel from "./approval.ts"
import * as AuthorityKernel from "./authority.ts"
import { type Args, type Call, fromView, viewOf } from "./call.ts"
import { type Chain, chain } from "./chain.ts"
import * as ContractKernel from "./contract.ts"
import * as GuardrailKernel from "./guardrail.ts"
import * as Hooks from "./hooks.ts"
import * as KnowledgeKernel from "./retrieval.ts"

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
 * Runs one call through the pipeline, in its span and with its events. Succeeds with the action's value, or —
 * for a call that pauses (a chat turn's) and needs an approval it does not carry — with a {@link Pending}
 * value; fails with one of the nine `ActionError`s or a `RetrievalFailure`; interruption stays interruption.
 */
export const run = (agent: Agent, call: Call): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const step = stepOf(agent)
  return Effect.suspend(() => {
    const called = call.entry === undefined ? unknown(agent, call, step) : steps(agent, call.entry, call, step)
    // The error exit: what fails leaves scrubbed of every secret the agent knows (read only then).
    return isSucceeded(called) ? called : Secrets.redacting(called, agent.secrets)
  }).pipe(
    telemetry(agent, call),
    Observe.observe(agent.hub, () => subjectOf(agent.id, call))
  )
}

/**
 * Continues a call that paused inside its run step (an agent used as an action whose turn waits for an
 * approval): steps 1 to 6 passed for this exact call before it paused, so it goes on at step 7 with the
 * arguments it had there (`call.arguments`), then 8 to 10, in a span and with events of its own. A name the
 * agent has not registered is refused as {@link run} refuses it.
 */
export const proceed = (agent: Agent, call: Call): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const entry = call.entry
  if (entry === undefined) return run(agent, call)
  const step = stepOf(agent)
  const args = call.arguments
  const view = viewOf(call, args)
  return Effect.suspend(() =>
    Secrets.redacting(
      chain(step("run", entry.run(args, [], call.tool, view, call.definition))) // 7
        .next((result) =>
          step("outputGuardrail", GuardrailKernel.checkOutput(call.name, entry.guardrails?.output, result))
        ) // 8
        .next((output) => checked(entry, view, output, step)).effect, // 9–10
      agent.secrets
    )
  ).pipe(
    telemetry(agent, call),
    Observe.observe(agent.hub, () => subjectOf(agent.id, call))
  )
}

/**
 * The ten steps of a call of a registered action. Each gets what the steps before it gave; a call that waits
 * for an approval ends at step 2 with its pending value (only an action with an approval policy can wait: the
 * others run their steps as one chain).
 */
const steps = (
  agent: Agent,
  entry: Registered,
  call: Call,
  step: Observe.StepTracer
): Effect.Effect<unknown, ActionError | RetrievalFailure, any> => {
  const { policy } = entry.approval
  const verified = {
    agentId: agent.id,
    policy,
    call,
    store: agent.approvals,
    secrets: agent.secrets,
    definition: entry.definition
  }
  const head = chain(step("authority", AuthorityKernel.check(agent.authority, call.name, call.tool))) // 1
    .next(() => step("approval", ApprovalKernel.verify(verified))) // 2
  return policy === undefined
    ? admitted(head, entry, call, step) // 3–10
    : head.next((pending) =>
        pending === undefined ? admitted(chain(Exit.void), entry, call, step) : Exit.succeed(pending)
      ).effect
}

/** Steps 3 and 4 on the raw arguments after `head`, then 5 to 10 on the converted ones. */
const admitted = <A, E, R>(head: Chain<A, E, R>, entry: Registered, call: Call, step: Observe.StepTracer) => {
  const { name, action, role, guardrails } = entry
  const hooks = role.hooks
  // What the role's hook and the input guardrail see: for an MCP tool, `{ tool, arguments }` as declared.
  const given =
    hooks.before === undefined && guardrails?.input === undefined ? call.arguments : viewOf(call, call.arguments)
  return head
    .next(() => step("beforeHook", Hooks.before(hooks, name, given))) // 3
    .next((hooked) => step("inputGuardrail", GuardrailKernel.checkInput(name, guardrails?.input, hooked)))
    .next((guarded) => step("conversion", converted(action, call, guarded === given ? call.arguments : guarded))) // 4
    .next((args: Args) => proceeded(entry, call, args, step)).effect // 5–10
}

/**
 * Step 4: the arguments converted against the action's parameters. An MCP tool's arguments are decoded once,
 * against the tool's own input schema, when its executor has found the tool: here its `{ tool, arguments }` is
 * only checked (it was taken apart when the call was made), and the hook's arguments taken.
 */
const converted = (action: Registered["action"], call: Call, args: Args): Effect.Effect<Args, ActionError, any> => {
  if (action._tag !== "mcpTool") return Conversion.decode(action.parameters, args, { action: call.name })
  if (call.malformed !== undefined) return Effect.fail(call.malformed)
  if (args === call.arguments) return Effect.succeed(args)
  const hooked = fromView(call, args)
  return Result.isSuccess(hooked) ? Effect.succeed(hooked.success) : Effect.fail(hooked.failure)
}

/** Steps 5 to 8 on the converted arguments, then 9 and 10 on the checked result. */
const proceeded = (entry: Registered, call: Call, args: Args, step: Observe.StepTracer) => {
  const { name, action, state, guardrails } = entry
  const contract = action.policies.contract
  const view = viewOf(call, args)
  return chain(step("precondition", ContractKernel.checkPre(name, contract, view, Ref.getUnsafe(state)))) // 5
    .next(() => step("retrieval", KnowledgeKernel.retrieve({ ...entry.retrieval, args: view }))) // 6
    .next((knowledge) => step("run", entry.run(args, knowledge, call.tool, view, call.definition))) // 7
    .next((result) => step("outputGuardrail", GuardrailKernel.checkOutput(name, guardrails?.output, result))) // 8
    .next((output) => checked(entry, view, output, step)).effect // 9–10
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
const unknown = (agent: Agent, call: Call, step: Observe.StepTracer) =>
  chain(step("authority", AuthorityKernel.check(agent.authority, call.name))).next(() =>
    Effect.fail(actionNotFound(call.name, [...agent.registry.keys()]))
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
const telemetry = (agent: Agent, call: Call) => {
  const { correlationId, toolCall, entry } = call
  if (entry !== undefined && correlationId === undefined && toolCall === undefined && !agent.traceContent) {
    return entry.telemetry
  }
  // A chat turn read the secrets once: with none known, there is nothing to redact.
  const outside =
    call.secrets === undefined
      ? agent.traceContent || correlationId !== undefined || toolCall !== undefined || entry === undefined
      : call.secrets.length > 0 || Secrets.learns(call.secrets)
  return Telemetry.executeTool(
    {
      tool: toolCall?.tool ?? call.name,
      toolCallId: toolCall?.id,
      attributes:
        entry !== undefined && correlationId === undefined
          ? entry.attributes
          : spanAttributes(agent.id, call.name, entry, correlationId),
      arguments: agent.traceContent ? () => call.bound : undefined,
      redact: outside
        ? call.secrets === undefined
          ? Effect.map(Secrets.known(agent.secrets), Secrets.redactor)
          : Effect.succeed(Secrets.redactor(call.secrets))
        : undefined
    },
    // Names from outside (a model's, a client's) are unbounded: metrics of unknown ones share one series.
    agent.metrics(entry === undefined ? "(unknown)" : call.name)
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

const subjectOf = (agentId: string, call: Call): Observe.Subject => ({
  agentId,
  action: call.name,
  role: call.entry?.role.identity.name,
  type: call.entry?.action._tag,
  correlationId: call.correlationId
})
