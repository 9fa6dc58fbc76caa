/**
 * The MCP connections an agent holds: one per server key,
 * opened lazily by the first call that needs it, shared by every later call,
 * and closed with the agent's scope.
 *
 * - Opening runs in its own fiber in the agent's scope, so a caller that
 *   times out or is interrupted does not abandon a half-open connection: the
 *   next call gets it.
 * - A connection found closed (the server exited, the transport dropped) is
 *   dropped and the next call reconnects at once.
 * - A failed connect is remembered: until its backoff has passed (500 ms,
 *   doubling per consecutive failure, at most 30 s) calls fail fast instead of
 *   spawning the server again — no tight respawn loop.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type Connection, McpClientError } from "../../McpClient.ts"

/**
 * A connect failed recently and its backoff has not passed: `error` is that
 * failure, `retryAfterMs` the time left.
 */
export interface BackingOff {
  readonly _tag: "BackingOff"
  readonly error: McpClientError
  readonly retryAfterMs: number
}

type Slot =
  | { readonly _tag: "Opening"; readonly deferred: Deferred.Deferred<Connection, McpClientError> }
  | { readonly _tag: "Open"; readonly connection: Connection; readonly scope: Scope.Closeable }
  | { readonly _tag: "Failed"; readonly error: McpClientError; readonly failures: number; readonly retryAt: number }

/**
 * The pool: `get(key, open)` returns the open connection of `key`, opening it
 * with `open()` when there is none; `drop(key, connection)` forgets a
 * connection that failed (and closes it) so the next `get` reconnects.
 */
export interface Pool {
  readonly get: (
    key: string,
    open: () => Effect.Effect<Connection, McpClientError, Scope.Scope>
  ) => Effect.Effect<Connection, McpClientError | BackingOff>
  readonly drop: (key: string, connection: Connection) => Effect.Effect<void>
}

const backoffMs = (failures: number): number => Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1))

const toClientError = (cause: Cause.Cause<McpClientError>): McpClientError => {
  const error = Cause.squash(cause)
  return error instanceof McpClientError
    ? error
    : new McpClientError({ reason: "Connect", sent: false, message: String(error), cause: error })
}

/**
 * Makes the pool of one agent; connections live in child scopes of `scope`.
 */
export const make = (scope: Scope.Scope): Pool => {
  const slots = new Map<string, Slot>()

  const closeLater = (child: Scope.Closeable) => Effect.asVoid(Effect.forkIn(Scope.close(child, Exit.void), scope))

  const start = (key: string, open: () => Effect.Effect<Connection, McpClientError, Scope.Scope>, failures: number) => {
    const deferred = Deferred.makeUnsafe<Connection, McpClientError>()
    slots.set(key, { _tag: "Opening", deferred })
    const opening = Effect.gen(function* () {
      const child = yield* Scope.fork(scope)
      const exit = yield* Effect.exit(Scope.provide(open(), child))
      if (Exit.isSuccess(exit)) {
        slots.set(key, { _tag: "Open", connection: exit.value, scope: child })
      } else {
        yield* Scope.close(child, exit)
        const now = yield* Clock.currentTimeMillis
        const error = toClientError(exit.cause)
        slots.set(key, { _tag: "Failed", error, failures: failures + 1, retryAt: now + backoffMs(failures + 1) })
      }
      yield* Deferred.done(deferred, exit)
    }).pipe(
      Effect.onInterrupt(() =>
        Effect.andThen(
          Effect.sync(() => slots.delete(key)),
          Deferred.interrupt(deferred)
        )
      )
    )
    return Effect.andThen(Effect.forkIn(opening, scope), Deferred.await(deferred))
  }

  const get: Pool["get"] = (key, open) =>
    Effect.suspend((): Effect.Effect<Connection, McpClientError | BackingOff> => {
      const slot = slots.get(key)
      switch (slot?._tag) {
        case "Open": {
          if (slot.connection.isOpen()) return Effect.succeed(slot.connection)
          slots.delete(key)
          return Effect.andThen(closeLater(slot.scope), start(key, open, 0))
        }
        case "Opening":
          return Deferred.await(slot.deferred)
        case "Failed":
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            // Another call may have started opening while the clock was read.
            const latest = slots.get(key)
            if (latest !== slot) return get(key, open)
            return now < slot.retryAt
              ? Effect.fail<BackingOff>({ _tag: "BackingOff", error: slot.error, retryAfterMs: slot.retryAt - now })
              : start(key, open, slot.failures)
          })
        default:
          return start(key, open, 0)
      }
    })

  const drop: Pool["drop"] = (key, connection) =>
    Effect.suspend(() => {
      const slot = slots.get(key)
      if (slot?._tag !== "Open" || slot.connection !== connection) return Effect.void
      slots.delete(key)
      return closeLater(slot.scope)
    })

  return { get, drop }
}
