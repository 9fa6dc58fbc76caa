/**
 * Agents made of agents. {@link agent} makes another agent an action: its
 * execution is one chat turn of that agent, with its own roles, authority,
 * approvals, model settings and limits, on its own model when it was made
 * with one (`Agent.make({ model })`), else on the model in context (the
 * calling agent's). What that turn requires (`Agent.TurnServices`: a
 * `LanguageModel` unless the agent has its own model, and what its actions
 * require) is the composed action's requirement, so the calling agent's type
 * carries it. {@link handoff} makes an action that
 * hands the conversation to another agent, which answers instead.
 *
 * Both return an `Action.Local` value (a plain value: put it in a role under
 * the name the model sees, e.g. `research` or `transfer_to_billing`), so a
 * call goes through the calling agent's whole pipeline like any action:
 * authority (which decides which agents and handoffs a role may use),
 * approval, guardrails, contracts, resilience and fallback. The agent they
 * run is one you made with `Agent.make`, in your scope: it keeps its approval
 * store, MCP connections and events for as long as that scope lives, which is
 * what lets a paused inner turn be resumed later.
 *
 * @example
 * ```ts
 * import { Agent, Compose, Role } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const scout = yield* Agent.make({
 *     id: "scout",
 *     roles: [Role.make({ identity: { name: "scout", goal: "Find the best hotel in a city", domain: "travel" } })]
 *   })
 *   const billing = yield* Agent.make({
 *     id: "billing",
 *     roles: [Role.make({ identity: { name: "billing", goal: "Answer billing questions", domain: "support" } })]
 *   })
 *   const lead = Role.make({
 *     identity: { name: "lead", goal: "Plan trips", domain: "travel" },
 *     actions: {
 *       // another agent as an action: one chat turn of it per call
 *       scout: Compose.agent(scout, {
 *         description: "Find the best hotel in a city",
 *         parameters: { city: Schema.String },
 *         prompt: ({ city }) => `The best hotel in ${city}`
 *       }),
 *       // the conversation handed over: billing answers instead
 *       transfer_to_billing: Compose.handoff(billing, { description: "Hand billing questions over" })
 *     }
 *   })
 *   return yield* Agent.make({ id: "lead", roles: [lead] })
 * })
 * ```
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as Action from "./Action.ts"
import type * as Agent from "./Agent.ts"
import type * as Chat from "./Chat.ts"
import * as Kernel from "./internal/agent/compose.ts"
import * as Nesting from "./internal/agent/nesting.ts"
import type * as Prompt from "./Prompt.ts"

/**
 * An agent, or a function giving it (for an agent that is made later, or
 * that uses itself: the recursion is bounded, see {@link agent}). What its
 * chat turns require (`Agent.TurnServices`: its actions' services, and a
 * `LanguageModel` unless it has its own model) the composed action carries
 * to the calling agent.
 *
 * @category models
 * @since 0.2.0
 */
export type AgentRef<A extends Agent.Any = Agent.Any> = A | (() => A)

const resolve = (ref: AgentRef): (() => Nesting.Inner) =>
  typeof ref === "function" ? (ref as () => Nesting.Inner) : () => ref as unknown as Nesting.Inner

const defaultParameters = { input: Schema.String }

const defaultPrompt = (args: Readonly<Record<string, unknown>>): string =>
  typeof args.input === "string" && Object.keys(args).length === 1 ? args.input : JSON.stringify(args)

/**
 * Options of {@link agent}.
 *
 * - `description`: what the model is told the action does.
 * - `parameters`: the action's parameters (a `Schema.Struct` or its fields);
 *   default `{ input: Schema.String }`.
 * - `prompt(args)`: the user message of the inner turn; default the `input`
 *   argument when it is the only one, else the arguments as JSON.
 * - `output`: a schema the inner agent's answer must match (its turn asks for
 *   it as structured output); the action's result is then the decoded value,
 *   else the answer's text.
 * - `maxSteps`, `system`, `model`, `temperature`, `maxTokens`: the inner
 *   turn's chat options (default: the inner agent's own).
 * - `maxDepth`: how many agents deep calls may nest, counted from the
 *   outermost turn (default 4); `maxTotalSteps`: how many model calls all
 *   nested turns of one outermost turn may make together (default 100). The
 *   outermost composed call's values bound the whole tree.
 *
 * @category models
 * @since 0.2.0
 */
export interface AgentOptions<P extends Action.ParametersInput, S extends Schema.Top | undefined> {
  readonly description: string
  readonly parameters?: P | undefined
  readonly prompt?: ((args: Action.ToStruct<P>["Type"]) => string) | undefined
  readonly output?: S | undefined
  readonly maxSteps?: number | undefined
  readonly system?: string | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly maxDepth?: number | undefined
  readonly maxTotalSteps?: number | undefined
}

type OutputOf<S> = S extends Schema.Top ? S["Type"] : string

/**
 * Another agent as an action: a call runs one chat turn of `inner` with the
 * call's arguments as its user message, and its answer is the result — the
 * `output` schema's decoded value, or the answer's text.
 *
 * In a chat turn of the calling agent:
 *
 * - An approval the inner agent needs pauses the calling turn too: its
 *   `AwaitingApproval` lists the inner pending call with `agents` (the path
 *   of agents it came through) and the id `"<outer call>/<inner call>"`.
 *   Deciding it with `agent.resume` resumes the inner turn exactly where it
 *   paused (the decision is recorded, bound to the inner call, in the inner
 *   agent's store, before anything runs); nested three deep, the same.
 * - A streamed turn (`chatStream`) carries the inner turn's events as
 *   `Chat.NestedEvent`s tagged with the path.
 * - The inner turn's `invoke_agent` span is a child of the call's
 *   `execute_tool` span; its tokens are the turn's tokens, and
 *   `Completed.agents` says them per agent.
 * - Recursion is bounded (`maxDepth`, `maxTotalSteps`): past the bound the
 *   call fails EXECUTION naming the path (`lead > researcher > lead`).
 *
 * Errors of a call: the inner turn's `ActionError` (a model failure, bad
 * options); EXECUTION when it reached its `maxSteps` without answering;
 * APPROVAL when it paused and the call was not made by a chat turn
 * (`agent.executeAction` cannot resume it).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Agent, Compose, Role } from "@rolecraft/core"
 *
 * declare const researcherRole: Role.Any
 *
 * const program = Effect.gen(function* () {
 *   const researcher = yield* Agent.make({ id: "researcher", roles: [researcherRole] })
 *   const lead = Role.make({
 *     identity: { name: "lead", domain: "research", goal: "Answer with sources" },
 *     actions: {
 *       research: Compose.agent(researcher, {
 *         description: "Research a question and answer with sources",
 *         parameters: { question: Schema.String },
 *         prompt: ({ question }) => question
 *       })
 *     }
 *   })
 *   return yield* Agent.make({ id: "lead", roles: [lead] })
 * })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const agent = <
  A extends Agent.Any,
  const P extends Action.ParametersInput = typeof defaultParameters,
  S extends Schema.Top | undefined = undefined
>(
  inner: AgentRef<A>,
  options: AgentOptions<P, S>
): Action.Local<Action.ToStruct<P>, OutputOf<S>, Agent.TurnServices<A>> => {
  const composed: Nesting.Composed = {
    _tag: "agent",
    agent: resolve(inner),
    maxDepth: options.maxDepth,
    maxTotalSteps: options.maxTotalSteps
  }
  const chat: Chat.ChatOptions = {
    ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    ...(options.system === undefined ? {} : { system: options.system }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.output === undefined ? {} : { output: options.output })
  }
  const turn: Kernel.TurnOptions = {
    prompt: (options.prompt as Kernel.TurnOptions["prompt"] | undefined) ?? defaultPrompt,
    chat
  }
  const action = Action.local({
    description: options.description,
    parameters: (options.parameters ?? defaultParameters) as P,
    success: options.output,
    run: (args, context) => Kernel.runAgent(composed, turn, context.action, context.agentId, args)
  })
  return Object.assign(action, { [Nesting.ComposedId]: composed }) as unknown as Action.Local<
    Action.ToStruct<P>,
    OutputOf<S>,
    Agent.TurnServices<A>
  >
}

/**
 * What the next agent of a {@link handoff} sees of the conversation: a
 * function of the messages so far (without the system message; the next
 * agent puts its own first), ending with the handoff call and its answer.
 *
 * @category models
 * @since 0.2.0
 */
export type HistoryFilter = (messages: ReadonlyArray<Prompt.Message>) => ReadonlyArray<Prompt.Message>

/**
 * The whole conversation (the default filter).
 *
 * @category filters
 * @since 0.2.0
 */
export const wholeHistory: HistoryFilter = (messages) => messages

/**
 * The conversation without tool calls and their answers: the user's
 * messages and the assistants' texts (an assistant message that only called
 * tools is left out).
 *
 * @category filters
 * @since 0.2.0
 */
export const withoutTools: HistoryFilter = (messages) =>
  messages.flatMap((message): ReadonlyArray<Prompt.Message> => {
    if (message.role === "tool") return []
    if (message.role !== "assistant" || message.toolCalls === undefined || message.toolCalls.length === 0) {
      return [message]
    }
    const { toolCalls: _calls, ...rest } = message
    return typeof message.content === "string" && message.content.length > 0 ? [rest] : []
  })

/**
 * Options of {@link handoff}: `description` (default "Hand the conversation
 * to <id>"), and `filter`, what the next agent sees of the conversation
 * (default {@link wholeHistory}; {@link withoutTools} or your own).
 *
 * @category models
 * @since 0.2.0
 */
export interface HandoffOptions {
  readonly description?: string | undefined
  readonly filter?: HistoryFilter | undefined
}

/**
 * A handoff: an action with no parameters that, called by the model in a
 * chat turn, hands the conversation to `target`. The step's other calls are
 * answered, then the turn ends and `target` runs a turn on the conversation
 * (as `filter` shows it) with the turn's options; its result is the turn's,
 * with `agent` the id of the agent that answered (handoffs chain), its
 * tokens added to the turn's, and `agents` per agent. Name it the way the
 * model should see it (`transfer_to_billing`); the agent's authority decides
 * which handoffs a role may make, like any action.
 *
 * A step whose calls also wait for an approval pauses first: the handoff is
 * then answered, but the conversation is not handed over (the model may call
 * it again after the resume). Outside a chat turn a call is EXECUTION.
 *
 * @example
 * ```ts
 * import { Agent, Compose, Role } from "@rolecraft/core"
 *
 * declare const billing: Agent.Agent
 *
 * const triage = Role.make({
 *   identity: { name: "triage", domain: "support", goal: "Send each customer to the right desk" },
 *   actions: { transfer_to_billing: Compose.handoff(billing, { filter: Compose.withoutTools }) }
 * })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const handoff = <A extends Agent.Any>(
  target: AgentRef<A>,
  options: HandoffOptions = {}
): Action.Local<Action.ToStruct<{}>, string, Agent.TurnServices<A>> => {
  const agentOf = resolve(target)
  const composed: Nesting.Composed = { _tag: "handoff", agent: agentOf, filter: options.filter ?? wholeHistory }
  const action = Action.local({
    description:
      options.description ??
      (typeof target === "function"
        ? "Hand the conversation to another agent"
        : `Hand the conversation to ${target.id}`),
    parameters: {},
    run: (_args, context) => Kernel.runHandoff(composed, context.action)
  })
  return Object.assign(action, { [Nesting.ComposedId]: composed }) as unknown as Action.Local<
    Action.ToStruct<{}>,
    string,
    Agent.TurnServices<A>
  >
}
