// The URL of the test run's Postgres (see ./postgres.ts); throws the reason when it could not start, so a test
// that needs Postgres fails loudly instead of being skipped.
import { Effect } from "effect"
import { inject } from "vitest"
import { freshDatabase as freshDatabaseAt } from "../../scripts/postgres.ts"

export const postgresUrl = (): string => {
  const postgres = inject("postgres")
  if ("url" in postgres) return postgres.url
  throw new Error(`These tests need Postgres 15 and it could not be started: ${postgres.error}`)
}

/** A new, empty database on the run's Postgres (see ./database.ts); its URL. */
export const freshDatabase = (prefix: string): Effect.Effect<string> =>
  Effect.promise(() => freshDatabaseAt(postgresUrl(), prefix))
