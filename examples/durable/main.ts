/**
 * A durable chat turn that pauses in one process and finishes in another
 * (`@rolecraft/durable`, docs/durable.md). Starts a throwaway Postgres 15
 * (scripts/postgres.ts; or uses ROLECRAFT_PG_URL), then runs two processes
 * one after the other on it:
 *
 * 1. `pause.ts` starts a run; the model calls `refund`, which needs
 *    approval; the run pauses and the process exits;
 * 2. `finish.ts` finds the paused run, approves the call, and the turn
 *    finishes there: the refund runs once, the model answers.
 *
 * Run: node examples/durable/main.ts
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { freshDatabase, start, stop } from "../../scripts/postgres.ts"

const given = process.env.ROLECRAFT_PG_URL
const pg = given === undefined || given === "" ? await start() : undefined
try {
  const url = await freshDatabase(given ?? pg?.url ?? "", "durable_example")
  for (const step of ["pause.ts", "finish.ts"]) {
    const file = fileURLToPath(new URL(step, import.meta.url))
    process.stdout.write(
      execFileSync(process.execPath, ["--conditions=@rolecraft/source", file, url], { encoding: "utf8" })
    )
  }
} finally {
  if (pg !== undefined) stop(pg.dir)
}
