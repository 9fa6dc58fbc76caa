/**
 * Waiting out another connection's lock on a SQLite file: a statement that fails because the database is locked
 * (SQLITE_BUSY, SQLITE_LOCKED) is tried again on Effect's scheduler — after 5 ms, 10 ms, 20 ms … (at most 100 ms,
 * jittered) — until a budget of milliseconds has passed on Effect's clock. The driver's own blocking wait is kept
 * short by the stores, so timers and other fibers go on meanwhile.
 */
import type { DatabaseSync } from "node:sqlite"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/** How long SQLite itself may block the event loop waiting for a lock, per try. */
const driverBusyTimeout = 10

/**
 * Opens a SQLite file for the life of the scope (closed when it ends), its driver's busy wait kept short (the stores
 * retry on Effect's scheduler). `node:sqlite` is loaded here, not at import: importing the package must not load it.
 */
export const openDatabase = (filename: string): Effect.Effect<DatabaseSync, unknown, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const { DatabaseSync } = process.getBuiltinModule("node:sqlite")
        return new DatabaseSync(filename, { timeout: driverBusyTimeout })
      },
      catch: (cause) => cause
    }),
    (database) => Effect.sync(() => database.isOpen && database.close())
  )

/** SQLITE_BUSY (5) and SQLITE_LOCKED (6), with any extended code. */
export const isBusy = (cause: unknown): boolean => {
  const code = (cause as { readonly errcode?: unknown } | undefined)?.errcode
  return typeof code === "number" && ((code & 0xff) === 5 || (code & 0xff) === 6)
}

/** Runs `run` (a synchronous driver call); while the database is locked, tries again until `budget` ms have passed. */
export const whileBusy = <A>(budget: number, run: () => A): Effect.Effect<A, unknown> =>
  Effect.try({ try: run, catch: (cause) => cause }).pipe(
    Effect.retry({
      while: isBusy,
      schedule: Schedule.max([
        Schedule.exponential("5 millis").pipe(
          Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(100)))),
          Schedule.jittered
        ),
        Schedule.during(Duration.millis(Math.max(0, budget)))
      ])
    })
  )
