/**
 * A chat turn as a stream of its events, `TurnFinished` last: the turn runs as the stream is pulled, its
 * events handed to the caller as they happen, and stopping the stream (interrupting it, or no longer
 * pulling) stops the turn. `chat` and `resume` run the same turns unstreamed: their events are dropped.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { ActionError } from "../../ActionError.ts"
import type { ChatEvent, ChatResult } from "../../Chat.ts"
import type { Emit, Mode } from "./context.ts"

/** A turn run in `mode` as a stream of its events, `TurnFinished` last. */
export const events = <R>(
  run: (mode: Mode) => Effect.Effect<ChatResult, ActionError, R>,
  argumentDeltas: boolean
): Stream.Stream<ChatEvent, ActionError, R> =>
  Stream.callback<ChatEvent, ActionError, R>(
    (queue) => {
      // Each offer hands its events to a waiting caller at once, not after the scheduler's next turn: the
      // turn would otherwise run on through every chunk already received before the caller saw the first.
      const flushed = Queue.flush(queue)
      const emit: Emit = (event) => Effect.andThen(Queue.offer(queue, event), flushed)
      const emitAll = (events: ReadonlyArray<ChatEvent>) => Effect.andThen(Queue.offerAll(queue, events), flushed)
      return run({ emit, emitAll, streaming: true, argumentDeltas }).pipe(
        Effect.flatMap((result) => emit({ _tag: "TurnFinished", result })),
        Effect.andThen(Queue.end(queue))
      )
    },
    { bufferSize: 16, strategy: "suspend" }
  )

/** How `chat` and `resume` run a turn: the same loop, its events dropped as they happen, no stream. */
export const unstreamed: Mode = {
  emit: () => Effect.void,
  emitAll: () => Effect.void,
  streaming: false,
  argumentDeltas: false
}
