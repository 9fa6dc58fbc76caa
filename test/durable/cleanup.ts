// Every process and every Postgres the durable proofs start is stopped when this process ends, however it ends: on
// exit, and on SIGINT or SIGTERM (a bench interrupted with Ctrl-C, or stopped by bench/run.ts), before the signal
// takes this process down.
import type { ChildProcess } from "node:child_process"
import * as Postgres from "../../scripts/postgres.ts"

const children = new Set<ChildProcess>()
const databases = new Set<string>()

/** Kills every live child (SIGKILL) and stops every Postgres still running; safe to call more than once. */
export const stopEverything = (): void => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  children.clear()
  for (const dir of databases) {
    try {
      Postgres.stop(dir)
    } catch {
      // already gone
    }
  }
  databases.clear()
}

let installed = false
const install = () => {
  if (installed) return
  installed = true
  process.once("exit", stopEverything)
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stopEverything()
      process.kill(process.pid, signal)
    })
  }
}

/** Stops `child` with this process, unless it exits first. */
export const trackProcess = (child: ChildProcess): void => {
  install()
  children.add(child)
  child.once("exit", () => children.delete(child))
}

/** Starts a Postgres of its own (scripts/postgres.ts) that is stopped with this process unless stopped first. */
export const startPostgres = async (): Promise<Postgres.Postgres & { readonly stop: () => void }> => {
  install()
  const pg = await Postgres.start()
  databases.add(pg.dir)
  return {
    ...pg,
    stop: () => {
      databases.delete(pg.dir)
      Postgres.stop(pg.dir)
    }
  }
}
