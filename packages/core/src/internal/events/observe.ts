/**
 * What the pipeline publishes about an action: started, then succeeded, failed or
 * interrupted with its duration and token usage, and the optional span per pipeline step.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { isActionError } from "../../ActionError.ts"
import type { Usage } from "../../ActionResponse.ts"
import * as Pending from "../pending.ts"
import * as Metering from "./usage.ts"
import type { Common, Event } from "../../Events.ts"
import { type Hub, publish } from "./hub.ts"

/**
 * Who a call is about, for its events.
 *
 * @since 0.1.0
 */
export type Subject = Omit<Common, "timestamp">

const finished = (
  subject: Subject,
  ended: Exit.Exit<unknown, unknown>,
  now: number,
  start: number,
  usage: Usage | undefined
): Event => {
  const durationMs = now - start
  // A call that waits for an approval did not run: its event is its APPROVAL failure.
  const exit = Pending.observed(ended)
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
      return Metering.metered(self, observed)
    })

/**
 * The names of the pipeline's steps, as used in step spans
 * `Rolecraft.step.<name>`.
 *
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
 * @since 0.1.0
 */
export type StepTracer = <A, E, R>(name: Step, step: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** The step tracer without step spans: each step as it is. */
export const untraced: StepTracer = (_name, step) => step
const traced: StepTracer = (name, step) => Effect.withSpan(step, `Rolecraft.step.${name}`, { captureStackTrace: false })

/**
 * The step tracer of an agent: spans per step only when asked for.
 *
 * @since 0.1.0
 */
export const stepTracer = (traceSteps: boolean | undefined): StepTracer => (traceSteps === true ? traced : untraced)
