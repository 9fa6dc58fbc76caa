/**
 * What a bench run starts, it stops: when it ends, when it fails, and when it
 * is interrupted (SIGINT, SIGTERM, SIGHUP). `run.ts` starts each section in
 * a process group of its own (`spawn` with `detached: true`), registers it
 * with {@link ownGroup}, and registers the Postgres it starts for the
 * sections with {@link onStop}; an interrupted run kills every group (the
 * section and whatever it started: servers, runner processes, framework
 * children) and stops the database before it exits.
 *
 * Stoppers run synchronously (a signal handler cannot wait), newest first,
 * each at most once; one that throws does not keep the others from running.
 */
import type { ChildProcess } from "node:child_process"
import { constants } from "node:os"

type Stopper = () => void

const stoppers: Array<Stopper> = []
let installed = false

/** Runs every registered stopper, newest first, and forgets them. */
export const stopAll = (): void => {
  for (let stopper = stoppers.pop(); stopper !== undefined; stopper = stoppers.pop()) {
    try {
      stopper()
    } catch (error) {
      process.stderr.write(`bench: a cleanup step failed: ${error instanceof Error ? error.message : String(error)}\n`)
    }
  }
}

const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const

const install = (): void => {
  if (installed) return
  installed = true
  process.on("exit", stopAll)
  for (const signal of signals) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping every process and database this run started\n`)
      stopAll()
      process.exit(128 + constants.signals[signal])
    })
  }
}

/**
 * Registers `stop` to run when the run ends or is interrupted; the function
 * returned runs it now (once) and unregisters it.
 */
export const onStop = (stop: Stopper): (() => void) => {
  install()
  let done = false
  const once = () => {
    if (done) return
    done = true
    stop()
  }
  stoppers.push(once)
  return () => {
    const index = stoppers.indexOf(once)
    if (index !== -1) stoppers.splice(index, 1)
    once()
  }
}

/**
 * Kills the process group led by `child` (started with `detached: true`)
 * with SIGKILL: the child and everything it started that did not leave the
 * group. A group that is already gone is not an error.
 */
export const killGroup = (child: ChildProcess): void => {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

/**
 * Registers a child started in its own process group: its group is killed
 * when the run is interrupted, and when the child closes (whatever it left
 * running in its group goes with it). Returns the stopper, to kill it now.
 */
export const ownGroup = (child: ChildProcess): (() => void) => {
  const stop = onStop(() => killGroup(child))
  child.once("close", stop)
  return stop
}
