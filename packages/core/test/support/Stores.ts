/**
 * The stores the tests run on, one table each: the thread stores and the approval stores (memory, a SQLite file,
 * SQL on the test run's Postgres), a fresh temp folder for each SQLite file, and a fresh client (its own pool, as
 * a second process would have) on that Postgres.
 */
import { PgClient } from "@effect/sql-pg"
import { Layer, Redacted } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { postgresUrl } from "../../../../test/setup/postgresUrl.ts"
import * as Seeded from "../../../../test/support/seeded.ts"
import * as ApprovalStore from "../../src/ApprovalStore.ts"
import * as ThreadStore from "../../src/ThreadStore.ts"

/** A fresh temp folder. */
export const tempDir = (prefix = "rolecraft-test-"): string => mkdtempSync(join(tmpdir(), prefix))

/** A fresh client (its own pool) on the test run's Postgres. */
export const pg = () => PgClient.layer({ url: Redacted.make(postgresUrl()) })

/** A thread id (or any key) no other test, or earlier run on the shared Postgres, uses. */
export const fresh = (name: string): string => Seeded.unique(name)

/** Every thread store, each made fresh. */
export const threadStores: ReadonlyArray<readonly [string, () => Layer.Layer<ThreadStore.ThreadStore, unknown>]> = [
  ["memory", () => ThreadStore.layerMemory],
  ["sqlite file", () => ThreadStore.layerSqlite({ filename: join(tempDir("rolecraft-threads-"), "threads.db") })],
  ["sql on postgres", () => Layer.provide(ThreadStore.layerSql, pg())]
]

/** Every approval store, each made fresh. */
export const approvalStores: ReadonlyArray<readonly [string, () => Layer.Layer<ApprovalStore.ApprovalStore, unknown>]> =
  [
    ["memory", () => ApprovalStore.layerMemory],
    ["sqlite :memory:", () => ApprovalStore.layerSqlite({ filename: ":memory:" })],
    [
      "sqlite file",
      () => ApprovalStore.layerSqlite({ filename: join(tempDir("rolecraft-approvals-"), "approvals.db") })
    ],
    ["sql on postgres", () => Layer.provide(Layer.fresh(ApprovalStore.layerSql), pg())]
  ]
