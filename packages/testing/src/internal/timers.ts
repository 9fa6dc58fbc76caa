/**
 * The timers of a scripted server: each belongs to one response and is
 * cleared when that response's connection closes (a client that hangs up
 * leaves nothing scheduled), and `clear` stops every one still pending when
 * the server stops.
 */
import type * as Http from "node:http"

/**
 * - `later(response, ms, f)`: runs `f` after `ms` of real time, unless the
 *   response's connection closes first.
 * - `clear()`: clears every pending timer.
 */
export interface Timers {
  readonly later: (response: Http.ServerResponse, ms: number, f: () => void) => void
  readonly clear: () => void
}

export const make = (): Timers => {
  const timers = new Set<NodeJS.Timeout>()
  // Each response's pending timers, cleared by one close listener when the connection goes.
  const pendingOf = new WeakMap<Http.ServerResponse, Set<NodeJS.Timeout>>()
  const later = (response: Http.ServerResponse, ms: number, f: () => void) => {
    let pending = pendingOf.get(response)
    if (pending === undefined) {
      const own = new Set<NodeJS.Timeout>()
      pending = own
      pendingOf.set(response, own)
      response.on("close", () => {
        for (const timer of own) {
          clearTimeout(timer)
          timers.delete(timer)
        }
        own.clear()
      })
    }
    const own = pending
    const timer = setTimeout(() => {
      timers.delete(timer)
      own.delete(timer)
      f()
    }, ms)
    timers.add(timer)
    own.add(timer)
  }
  const clear = () => {
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
  }
  return { later, clear }
}
