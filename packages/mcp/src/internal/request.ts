/**
 * One request of a connection, waited on in the caller's fiber (no fork, no
 * race): the SDK's own timer is the timeout (it sends the server
 * `notifications/cancelled` when it fires, as an interruption does through
 * the signal), and a broken reply reported by the transport fails it at once
 * (the session's `pending`). On any clock but Effect's own (the TestClock)
 * the timeout is Effect's, so tests drive it with `TestClock.adjust`.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Core from "@rolecraft/core/McpClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { toError } from "./failure.ts"
import type { Phase, Session } from "./session.ts"

// setTimeout's largest delay; a larger (or infinite) one fires at once.
const maxTimerMs = 2_147_483_647

// The clock a fiber reads when no layer provides one.
const defaultClock: Clock.Clock = Context.get(Context.empty(), Clock.Clock)

/** A duration in milliseconds (`fallback` when not given), within what a timer can wait. */
export const toMillis = (input: Duration.Input | undefined, fallback: number): number => {
  const ms = input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))
  return Math.min(Math.max(0, ms), maxTimerMs)
}

const timedOut = (timeoutMs: number) =>
  new Core.McpClientError({
    reason: "Timeout",
    sent: true,
    code: ErrorCode.RequestTimeout,
    message: `the MCP request timed out after ${Duration.format(Duration.millis(timeoutMs))}`
  })

const waited = <A>(
  session: Session,
  phase: Phase,
  timeoutMs: number,
  send: (signal: AbortSignal, timeout: number) => Promise<A>
) =>
  Effect.callback<A, Core.McpClientError>((resume) => {
    const controller = new AbortController()
    const timed = timeoutMs > 0 && timeoutMs < maxTimerMs
    const start = performance.now()
    let settled = false
    const settle = () => {
      if (settled) return false
      settled = true
      session.pending.delete(broken)
      return true
    }
    const broken = (failure: Core.McpClientError) => {
      if (!settle()) return
      controller.abort(failure)
      resume(Effect.fail(failure))
    }
    session.pending.add(broken)
    send(controller.signal, timed ? timeoutMs : maxTimerMs).then(
      (value) => {
        if (settle()) resume(Effect.succeed(value))
      },
      (error) => {
        if (!settle()) return
        // The SDK's own timer (it cannot fire before the time has passed): the request timed out here.
        const ownTimeout =
          timed &&
          error instanceof McpError &&
          error.code === ErrorCode.RequestTimeout &&
          performance.now() - start >= timeoutMs - 1
        resume(
          ownTimeout ? Effect.fail(timedOut(timeoutMs)) : Effect.flatMap(toError(session, error, phase), Effect.fail)
        )
      }
    )
    return Effect.sync(() => {
      if (settle()) controller.abort()
    })
  })

/** One request (see the module doc): `send` is given the signal and the timeout to pass to the SDK. */
export const request = <A>(
  session: Session,
  phase: Phase,
  timeoutMs: number,
  send: (signal: AbortSignal, timeout: number) => Promise<A>
): Effect.Effect<A, Core.McpClientError> =>
  Effect.withFiber<A, Core.McpClientError>((fiber) => {
    if (!(timeoutMs > 0 && timeoutMs < maxTimerMs) || fiber.getRef(Clock.Clock) === defaultClock) {
      return waited(session, phase, timeoutMs, send)
    }
    return Effect.timeoutOrElse(waited(session, phase, 0, send), {
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(timedOut(timeoutMs))
    })
  })
