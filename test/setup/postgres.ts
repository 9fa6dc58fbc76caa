// Vitest global setup: one Postgres 15 for the whole test run. `.ci/run` starts it once and exports
// ROLECRAFT_PG_URL; on a developer's machine this starts one (scripts/postgres.ts) and stops it after the run.
// A Postgres that cannot start does not stop the other tests: the tests that need it fail with the reason
// (see `postgresUrl` in ./postgresUrl.ts), never skipped.
import type { TestProject } from "vitest/node"
import { start, stop } from "../../scripts/postgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    readonly postgres: { readonly url: string } | { readonly error: string }
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const given = process.env.ROLECRAFT_PG_URL
  if (given !== undefined && given !== "") {
    project.provide("postgres", { url: given })
    return () => {}
  }
  try {
    const pg = await start()
    project.provide("postgres", { url: pg.url })
    return () => stop(pg.dir)
  } catch (cause) {
    project.provide("postgres", { error: cause instanceof Error ? cause.message : String(cause) })
    return () => {}
  }
}
