/**
 * Events and spans of an agent. Every call publishes
 * `ActionStarted`, then `ActionSucceeded`, `ActionFailed` or
 * `ActionInterrupted`, to `agent.events` (a `Stream`); every call runs in one
 * span `Rolecraft.executeAction`, and, when the agent is made with
 * `traceSteps: true`, each pipeline step in a child span
 * `Rolecraft.step.<step>`. A chat turn (`agent.chat`, `agent.resume`) adds
 * `ChatStep` after each model call and `ToolCallStarted`/`ToolCallFinished`
 * around each tool call it answers.
 *
 * Events and spans never hold argument values or results, only names,
 * categories, messages (already free of secrets: executors scrub them) and
 * durations.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Action from "./Action.ts"
import { type Category, isActionError } from "./ActionError.ts"
import type { Usage } from "./ActionResponse.ts"
import * as LanguageModel from "./LanguageModel.ts"

/**
 * What every action event carries.
 *
 * - `agentId`, `action`: the agent and the name called.
 * - `role`, `type`: the role declaring the action and its type; `undefined`
 *   when no action has that name.
 * - `correlationId`: the request's, when given (`agent.execute`).
 * - `timestamp`: epoch milliseconds on Effect's `Clock` when the event was
 *   made.
 *
 * @category models
 * @since 0.1.0
 */
export interface Common {
  readonly agentId: string
  readonly action: string
  readonly role: string | undefined
  readonly type: Action.Type | undefined
  readonly correlationId: string | undefined
  readonly timestamp: number
}

/**
 * A call entered the pipeline.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionStarted extends Common {
  readonly _tag: "ActionStarted"
}

/**
 * A call succeeded after `durationMs` (Clock milliseconds); `usage` holds the
 * model tokens of an llm action's call (`undefined` for other types, and when
 * no model call was recorded).
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionSucceeded extends Common {
  readonly _tag: "ActionSucceeded"
  readonly durationMs: number
  readonly usage: Usage | undefined
}

/**
 * A call failed after `durationMs`: `error` is the error's tag, `category`
 * its category (`undefined` for `RetrievalFailure` and defects), `message`
 * its message.
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionFailed extends Common {
  readonly _tag: "ActionFailed"
  readonly durationMs: number
  readonly error: string
  readonly category: Category | undefined
  readonly message: string
}

/**
 * A call was interrupted after `durationMs` (interruption is never a
 * category).
 *
 * @category models
 * @since 0.1.0
 */
export interface ActionInterrupted extends Common {
  readonly _tag: "ActionInterrupted"
  readonly durationMs: number
}

/**
 * What both tool call events carry.
 *
 * - `step`: the turn's model step that made the call (1-based, counted across
 *   an approval pause).
 * - `toolCallId`: the call's id, as the model sent it.
 * - `tool`: the model-facing tool name the model called.
 * - `action`: the agent's action that runs it (for an MCP tool, its mcpTool
 *   action); `undefined` when the name was never offered.
 * - `mcpTool`: the server's own tool name, for an MCP tool.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolCallCommon {
  readonly agentId: string
  readonly step: number
  readonly toolCallId: string
  readonly tool: string
  readonly action: string | undefined
  readonly mcpTool: string | undefined
  readonly timestamp: number
}

/**
 * A chat turn started answering one of the model's tool calls. The
 * action's own events (`ActionStarted`, …) come from the pipeline.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolCallStarted extends ToolCallCommon {
  readonly _tag: "ToolCallStarted"
}

/**
 * A chat turn answered one of the model's tool calls after `durationMs`
 * (Clock milliseconds). `success` is `false` when the answer is an error
 * message; `category` is then its category (`undefined` for a
 * `RetrievalFailure`). A call paused for approval finishes with category
 * `APPROVAL`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolCallFinished extends ToolCallCommon {
  readonly _tag: "ToolCallFinished"
  readonly success: boolean
  readonly category: Category | undefined
  readonly durationMs: number
}

/**
 * A chat turn finished one model step: `step` is its number
 * (1-based, counted across an approval pause), `toolCalls` how many tool calls
 * the model made in it (answered after this event), `usage` the tokens of
 * that model call.
 *
 * @category models
 * @since 0.1.0
 */
export interface ChatStep {
  readonly _tag: "ChatStep"
  readonly agentId: string
  readonly step: number
  readonly toolCalls: number
  readonly usage: Usage
  readonly timestamp: number
}

/**
 * Any event of an agent.
 *
 * @category models
 * @since 0.1.0
 */
export type Event =
  | ActionStarted
  | ActionSucceeded
  | ActionFailed
  | ActionInterrupted
  | ToolCallStarted
  | ToolCallFinished
  | ChatStep

/**
 * How many events a subscriber may fall behind before the oldest ones are
 * dropped for it.
 *
 * @since 0.1.0
 */
export const bufferSize = 1024

/**
 * An agent's event hub: a sliding `PubSub` and the number of live
 * subscribers (when there are none, calls make no events at all).
 *
 * @category models
 * @since 0.1.0
 */
export interface Hub {
  readonly pubsub: PubSub.PubSub<Event>
  readonly subscribers: () => number
  /** Every event published after the stream starts; ends when the hub's scope closes. */
  readonly events: Stream.Stream<Event>
}

/**
 * Makes a hub for the life of the current scope.
 *
 * @since 0.1.0
 */
export const makeHub: Effect.Effect<Hub, never, Scope.Scope> = Effect.gen(function* () {
  const pubsub = yield* Effect.acquireRelease(PubSub.sliding<Event>(bufferSize), PubSub.shutdown)
  let subscribers = 0
  const events = Stream.unwrap(
    Effect.gen(function* () {
      const subscription = yield* PubSub.subscribe(pubsub)
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          subscribers += 1
        }),
        () =>
          Effect.sync(() => {
            subscribers -= 1
          })
      )
      return Stream.fromSubscription(subscription)
    })
  )
  return { pubsub, subscribers: () => subscribers, events }
})

/**
 * Publishes one event (dropped when nobody subscribes).
 *
 * @since 0.1.0
 */
export const publish = (hub: Hub, event: Event): Effect.Effect<void> =>
  hub.subscribers() === 0 ? Effect.void : Effect.asVoid(PubSub.publish(hub.pubsub, event))

/**
 * Who a call is about, for its events.
 *
 * @category models
 * @since 0.1.0
 */
export type Subject = Omit<Common, "timestamp">

const finished = (
  subject: Subject,
  exit: Exit.Exit<unknown, unknown>,
  now: number,
  start: number,
  usage: Usage | undefined
): Event => {
  const durationMs = now - start
  if (Exit.isSuccess(exit)) return { _tag: "ActionSucceeded", ...subject, timestamp: now, durationMs, usage }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "ActionInterrupted", ...subject, timestamp: now, durationMs }
  const error = Cause.squash(exit.cause)
  return {
    _tag: "ActionFailed",
    ...subject,
    timestamp: now,
    durationMs,
    error: hasTag(error) ? error._tag : "Defect",
    category: isActionError(error) ? error.category : undefined,
    message: error instanceof Error ? error.message : String(error)
  }
}

const hasTag = (u: unknown): u is { readonly _tag: string } =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string"

/**
 * Wraps one call so that it publishes its start and its end to the hub. When
 * nobody subscribes, the call runs as it is: no clock read, no event made.
 * `subject` is computed only when there is a subscriber. A call of an llm
 * action runs with a usage meter of its own (nested in any meter already
 * there), whose total is its `ActionSucceeded`'s `usage`.
 *
 * @since 0.1.0
 */
export const observe =
  (hub: Hub, subject: () => Subject) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      if (hub.subscribers() === 0) return self
      const about = subject()
      const observed = (run: Effect.Effect<A, E, R>, usage: Effect.Effect<Usage | undefined>) =>
        Effect.flatMap(Clock.currentTimeMillis, (start) =>
          publish(hub, { _tag: "ActionStarted", ...about, timestamp: start }).pipe(
            Effect.andThen(run),
            Effect.onExit((exit) =>
              Effect.flatMap(Effect.zip(Clock.currentTimeMillis, usage), ([now, used]) =>
                publish(hub, finished(about, exit, now, start, used))
              )
            )
          )
        )
      // Model usage is metered only for llm actions, as `agent.execute` does for its response.
      if (about.type !== "llm") return observed(self, Effect.succeed(undefined))
      return Effect.flatMap(LanguageModel.makeUsageMeter, (meter) =>
        observed(
          Effect.provideService(self, LanguageModel.UsageMeter, meter),
          Effect.map(meter.total, (total) => (total.calls === 0 ? undefined : total.usage))
        )
      )
    })

/**
 * The names of the pipeline's steps, in the order they run, as used in step spans
 * `Rolecraft.step.<name>`.
 *
 * @category models
 * @since 0.1.0
 */
export type Step =
  | "authority"
  | "approval"
  | "beforeHook"
  | "inputGuardrail"
  | "conversion"
  | "precondition"
  | "retrieval"
  | "run"
  | "outputGuardrail"
  | "postcondition"
  | "afterHook"

/**
 * Wraps a pipeline step: in a child span `Rolecraft.step.<name>` when
 * `traced`, else the step itself (no cost).
 *
 * @category models
 * @since 0.1.0
 */
export type StepTracer = <A, E, R>(name: Step, step: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const untraced: StepTracer = (_name, step) => step
const traced: StepTracer = (name, step) => Effect.withSpan(step, `Rolecraft.step.${name}`, { captureStackTrace: false })

/**
 * The step tracer of an agent: spans per step only when asked for.
 *
 * @since 0.1.0
 */
export const stepTracer = (traceSteps: boolean | undefined): StepTracer => (traceSteps === true ? traced : untraced)
