/**
 * The agent's event hub: a sliding `PubSub` of `Events.Event`s that `agent.events` streams
 * from. Publishing never blocks an action: a subscriber that falls behind loses the oldest
 * events, and with no subscriber no event is made at all. It is one of the agent's exits: an
 * event that carries text from outside (a failure's message, a model's tool name or call id, a
 * correlation id, a name the agent does not know) is redacted of every secret the agent knows
 * before a subscriber sees it.
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Redacted from "effect/Redacted"
import type { Event } from "../../Events.ts"
import * as Redact from "../redact.ts"
import * as Secrets from "../secrets.ts"

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
 * @since 0.1.0
 */
export interface Hub {
  readonly pubsub: PubSub.PubSub<Event>
  readonly subscribers: () => number
  /** The credentials of the agent's actions (`undefined` when none names one). */
  readonly secrets: Secrets.Read | undefined
  /** Every event published after the stream starts; ends when the hub's scope closes. */
  readonly events: Stream.Stream<Event>
}

/**
 * Makes a hub for the life of the current scope, redacting the credentials `secrets` reads (and the
 * model's in context).
 *
 * @since 0.1.0
 */
export const makeHub = (secrets: Secrets.Read | undefined): Effect.Effect<Hub, never, Scope.Scope> =>
  Effect.gen(function* () {
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
    return { pubsub, subscribers: () => subscribers, secrets, events }
  })

/**
 * Publishes one event (dropped when nobody subscribes). An event that carries text from outside is
 * redacted first, of `known` when the caller has read the agent's secrets already (a chat turn), else of
 * those read now.
 *
 * @since 0.1.0
 */
export const publish = (
  hub: Hub,
  event: Event,
  known?: ReadonlyArray<Redacted.Redacted<string>>
): Effect.Effect<void> => {
  if (hub.subscribers() === 0) return Effect.void
  if (!fromOutside(event)) return Effect.asVoid(PubSub.publish(hub.pubsub, event))
  if (known !== undefined) return Effect.asVoid(PubSub.publish(hub.pubsub, redacted(event, known)))
  return Effect.flatMap(Secrets.known(hub.secrets), (read) =>
    Effect.asVoid(PubSub.publish(hub.pubsub, redacted(event, read)))
  )
}

// Whether an event may hold text the agent did not write: everything else is names, numbers and categories.
const fromOutside = (event: Event): boolean => {
  switch (event._tag) {
    case "StepFinished":
      return false
    case "ToolExecutionStarted":
    case "ToolExecutionFinished":
    case "ActionFailed":
    case "McpToolListingStopped":
    case "McpToolCallProgressed":
    case "McpServerLogged":
    case "McpToolDefinitionChanged":
    case "McpTextSanitised":
      return true
    default:
      return event.correlationId !== undefined || event.role === undefined
  }
}

const redacted = (event: Event, secrets: ReadonlyArray<Redacted.Redacted<string>>): Event =>
  secrets.length === 0 ? event : (Redact.value(event, secrets) as Event)
