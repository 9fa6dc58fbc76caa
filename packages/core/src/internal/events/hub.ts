/**
 * The agent's event hub: a sliding `PubSub` of `Events.Event`s that `agent.events` streams
 * from. Publishing never blocks an action: a subscriber that falls behind loses the oldest
 * events, and with no subscriber no event is made at all.
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Event } from "../../Events.ts"

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
