/**
 * The instrumented run: what one call schedules, counted rather than timed.
 * A `node:async_hooks` hook counts the async resources created while a
 * contender runs `calls` times after its warm-up, by type, per call:
 *
 * - fiber suspensions: Effect 4 gives every suspended fiber an
 *   `AsyncResource("effect/Fiber")` when it yields (to wait for a callback,
 *   a timer, another fiber or the scheduler) and every fork it starts later
 *   one too, so their count is the fiber suspensions and deferred forks of
 *   the call;
 * - scheduler and timer hops: `Immediate` (a `setImmediate`, which is how
 *   Effect's scheduler runs deferred work), `Timeout` (a `setTimeout`),
 *   `TickObject` (`process.nextTick`), `Microtask` (`queueMicrotask`);
 * - `PROMISE`: promises created;
 * - everything else (sockets, pipes, write requests, HTTP parsers): I/O.
 *
 * The hook is enabled only around the counted calls (it slows them), so the
 * timed runs never carry it.
 */
import { createHook } from "node:async_hooks"
import { Effect } from "effect"
import type { Contender } from "./measure.ts"
import type { Table } from "./report.ts"

/** Async resources created per call, by type. */
export interface Hops {
  readonly name: string
  readonly calls: number
  readonly perCall: Readonly<Record<string, number>>
}

const counter = () => {
  const counts = new Map<string, number>()
  const hook = createHook({
    init: (_id, type) => {
      counts.set(type, (counts.get(type) ?? 0) + 1)
    }
  })
  return {
    start: (): void => {
      counts.clear()
      hook.enable()
    },
    stop: (name: string, calls: number): Hops => {
      hook.disable()
      const perCall: Record<string, number> = {}
      for (const [type, count] of counts) perCall[type] = count / calls
      return { name, calls, perCall }
    }
  }
}

/** Counts, for each contender in turn, what `calls` sequential calls create (see the module doc). */
export const countHops = <R>(
  contenders: ReadonlyArray<Contender<Effect.Effect<unknown, unknown, R>>>,
  calls = 500
): Effect.Effect<ReadonlyArray<Hops>, unknown, R> =>
  Effect.gen(function* () {
    const hops: Array<Hops> = []
    for (const { name, call } of contenders) {
      const count = counter()
      count.start()
      try {
        for (let k = 0; k < calls; k++) yield* call()
      } finally {
        hops.push(count.stop(name, calls))
      }
    }
    return hops
  })

/** `countHops` for Promise-returning calls, each awaited before the next. */
export const countHopsAsync = async (
  contenders: ReadonlyArray<Contender<Promise<unknown>>>,
  calls = 500
): Promise<ReadonlyArray<Hops>> => {
  const hops: Array<Hops> = []
  for (const { name, call } of contenders) {
    const count = counter()
    count.start()
    try {
      for (let k = 0; k < calls; k++) await call()
    } finally {
      hops.push(count.stop(name, calls))
    }
  }
  return hops
}

const named: ReadonlyArray<readonly [column: string, type: string]> = [
  ["fiber suspensions", "effect/Fiber"],
  ["setImmediate", "Immediate"],
  ["setTimeout", "Timeout"],
  ["nextTick", "TickObject"],
  ["queueMicrotask", "Microtask"],
  ["promises", "PROMISE"]
]
const namedTypes = new Set(named.map(([, type]) => type))

const perCall = (value: number): string => (value === 0 ? "0" : value >= 10 ? value.toFixed(1) : value.toFixed(2))

/** The types counted as I/O for one row, most frequent first, e.g. `TCPWRAP 1, WRITEWRAP 1`. */
const ioTypes = (hops: Hops): string =>
  Object.entries(hops.perCall)
    .filter(([type, count]) => !namedTypes.has(type) && count >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([type, count]) => `${type} ${perCall(count)}`)
    .join(", ")

/** The instrumented run as a table: one row per contender, counts per call. */
export const hopsTable = (title: string, rows: ReadonlyArray<Hops>): Table => ({
  title,
  columns: ["", ...named.map(([column]) => column), "I/O and other resources"],
  rows: rows.map((hops) => [
    hops.name,
    ...named.map(([, type]) => perCall(hops.perCall[type] ?? 0)),
    ioTypes(hops) || "none"
  ])
})

/** Per-call count of one type, e.g. `of(hops, "effect/Fiber")`. */
export const of = (hops: Hops | undefined, type: string): number => hops?.perCall[type] ?? 0
