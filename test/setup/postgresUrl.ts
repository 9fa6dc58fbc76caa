// The URL of the test run's Postgres (see ./postgres.ts); throws the reason when it could not start, so a test
// that needs Postgres fails loudly instead of being skipped.
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"

export const postgresUrl = (): string => {
  const postgres = inject("postgres")
  if ("url" in postgres) return postgres.url
  throw new Error(`These tests need Postgres 15 and it could not be started: ${postgres.error}`)
}

/**
 * A new, empty database on the run's Postgres, for tests whose tables must not meet another test's (the
 * workflow engine's shard locks, above all); its URL.
 */
export const freshDatabase = (prefix: string): Effect.Effect<string> => {
  const base = postgresUrl()
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE DATABASE ${name}`)
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.toString()
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(base) })), Effect.orDie)
}
