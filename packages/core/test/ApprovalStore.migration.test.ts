/**
 * Approval tables written by Rolecraft 0.2.0 (`test/fixtures/approvals-0.2.0`, made by the 0.2.0 store's own
 * operations from the v0.2.0 sources) open in this version: SQLite and Postgres get the columns added since on
 * first open, and every token reads back as 0.2.0 left it — pending, approved, rejected, used with its call's
 * idempotency key — is decided and consumed by the same rules, and a pending one is listed (with no scope or
 * arguments recorded, and its agent as its path). A second store opening the table at the same time (a second
 * process) finds the columns there.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Postgres from "../../../scripts/postgres.ts"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"

const fixtures = join(import.meta.dirname, "../../../test/fixtures/approvals-0.2.0")

interface Made {
  readonly pending: { readonly id: string; readonly order: string }
  readonly mcp: { readonly id: string; readonly tool: string; readonly path: string }
  readonly approved: { readonly id: string; readonly order: string; readonly approver: string }
  readonly rejected: {
    readonly id: string
    readonly order: string
    readonly approver: string
    readonly rejection: string
  }
  readonly used: { readonly id: string; readonly order: string; readonly approver: string; readonly key: string }
}
const tokens = JSON.parse(readFileSync(join(fixtures, "tokens.json"), "utf8")) as {
  readonly version: string
  readonly now: number
  readonly sqlite: Made
  readonly postgres: Made
}

const refund = (order: string): ApprovalStore.Binding => ({
  agentId: "support",
  action: "refund",
  argumentsDigest: ApprovalStore.digest({ order, cents: 1200 })
})
const deleteFile = (path: string): ApprovalStore.Binding => ({
  agentId: "support",
  action: "files",
  tool: "delete_file",
  argumentsDigest: ApprovalStore.digest({ tool: "delete_file", arguments: { path } })
})

const checkOf = <A>(exit: Exit.Exit<A, { readonly _tag: string; readonly check?: string }>): string =>
  Exit.isFailure(exit) ? (Option.getOrThrow(Exit.findErrorOption(exit)).check ?? "no check") : "ok"

/** What a store opened on a 0.2.0 table holds and does (the clock a minute after the tokens were made). */
const opened = (made: Made) =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore.ApprovalStore
    const get = (id: string) => Effect.map(store.get(id), Option.getOrThrow)

    // Every token reads back as 0.2.0 left it, with nothing recorded of what was added since.
    const pending = yield* get(made.pending.id)
    assert.deepStrictEqual(
      [pending.status, pending.binding, pending.reason, pending.scope, pending.agents, pending.arguments],
      ["pending", { ...refund(made.pending.order), tool: undefined }, "Refunds money", undefined, undefined, undefined]
    )
    assert.strictEqual(pending.expiresAt, tokens.now + 3_600_000)
    const mcp = yield* get(made.mcp.id)
    assert.deepStrictEqual([mcp.status, mcp.binding], ["pending", deleteFile(made.mcp.path)])
    const approved = yield* get(made.approved.id)
    assert.deepStrictEqual([approved.status, approved.approver], ["approved", made.approved.approver])
    const rejected = yield* get(made.rejected.id)
    assert.deepStrictEqual(
      [rejected.status, rejected.approver, rejected.rejection],
      ["rejected", made.rejected.approver, made.rejected.rejection]
    )
    const used = yield* get(made.used.id)
    assert.strictEqual(used.status, "used")

    // The pending ones are listed, the longest waiting first (ties by key), each with its agent as its path.
    const listed = yield* store.list({ agentId: "support" })
    assert.deepStrictEqual(
      listed.map((token) => token.key).sort(),
      [ApprovalStore.keyOf(made.pending.id), ApprovalStore.keyOf(made.mcp.id)].sort()
    )
    for (const token of listed) {
      assert.deepStrictEqual([token.agents, token.scope, token.arguments], [["support"], undefined, undefined])
    }

    // The rules are the same on them: a used token is its call's again under its key, and no one else's.
    assert.strictEqual(
      checkOf(yield* Effect.exit(store.consume(made.used.id, refund(made.used.order), { key: made.used.key }))),
      "ok"
    )
    assert.strictEqual(checkOf(yield* Effect.exit(store.consume(made.used.id, refund(made.used.order)))), "used")
    assert.strictEqual(
      checkOf(yield* Effect.exit(store.consume(made.rejected.id, refund(made.rejected.order)))),
      "rejected"
    )
    assert.strictEqual(checkOf(yield* Effect.exit(store.consume(made.pending.id, refund("A-9")))), "arguments")
    yield* store.approve(made.pending.id, "carol", refund(made.pending.order))
    assert.strictEqual(checkOf(yield* Effect.exit(store.consume(made.pending.id, refund(made.pending.order)))), "ok")
    assert.strictEqual(checkOf(yield* Effect.exit(store.consume(made.approved.id, refund(made.approved.order)))), "ok")
    yield* store.reject(made.mcp.id, "dave", "not that file", deleteFile(made.mcp.path))
    assert.deepStrictEqual(yield* store.list({ agentId: "support" }), [])

    // A token requested now is written with what was added: its scope, path and shown arguments.
    const fresh = yield* store.request(refund("A-5"), "Refunds money", "1 hour", {
      scope: { turn: "run-9", call: "call_1" },
      agents: ["desk", "support"],
      arguments: '{"order":"A-5"}'
    })
    const [listedFresh] = yield* store.list({ scope: { turn: "run-9" } })
    assert.deepStrictEqual(
      [listedFresh?.key, listedFresh?.scope, listedFresh?.agents, listedFresh?.arguments],
      [ApprovalStore.keyOf(fresh), { turn: "run-9", call: "call_1" }, ["desk", "support"], '{"order":"A-5"}']
    )
  })

/** The statements of a `pg_dump --inserts` dump, without psql's meta-commands, its settings and comments. */
const statementsOf = (dump: string): ReadonlyArray<string> =>
  dump
    .split("\n")
    .filter((line) => !/^(--|\\|SET |SELECT pg_catalog\.set_config)/.test(line))
    .join("\n")
    .split(/;\s*\n/)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "")

describe("an approval table written by Rolecraft 0.2.0", () => {
  it.effect("sqlite: opens, gets the added columns, and every token reads, decides, consumes and lists", () =>
    Effect.gen(function* () {
      // The clock a minute after the tokens were made, set before any store (or pool) starts a timer.
      yield* TestClock.setTime(tokens.now + 60_000)
      const filename = join(mkdtempSync(join(tmpdir(), "approvals-0.2.0-")), "approvals.sqlite")
      copyFileSync(join(fixtures, "approvals.sqlite"), filename)
      yield* Effect.provide(opened(tokens.sqlite), ApprovalStore.layerSqlite({ filename }))
      const database = new DatabaseSync(filename)
      const columns = (
        database.prepare("SELECT name FROM pragma_table_info('rolecraft_approval_tokens')").all() as Array<{
          name: string
        }>
      ).map((column) => column.name)
      database.close()
      for (const added of ["used_key", "scope_turn", "scope_call", "agents", "arguments", "definition_digest"]) {
        assert.include(columns, added)
      }
    })
  )

  it.effect("postgres: two stores open it at once; every token reads, decides, consumes and lists", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(tokens.now + 60_000)
      const url = yield* Effect.promise(() => Postgres.freshDatabase(postgresUrl(), "approvals_020"))
      const database = PgClient.layer({ url: Redacted.make(url) })
      const dump = readFileSync(join(fixtures, "approvals.postgres.sql"), "utf8")
      yield* Effect.provide(
        Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
          Effect.forEach(statementsOf(dump), (statement) => sql.unsafe(statement), { discard: true })
        ),
        database
      )
      // Two processes opening the old table at once: one adds each column, the other finds it there.
      const opens = [0, 1].map(() =>
        Effect.provide(
          Effect.flatMap(ApprovalStore.ApprovalStore, (store) => store.list()),
          Layer.provide(Layer.fresh(ApprovalStore.layerSql), database)
        )
      )
      const [first, second] = yield* Effect.all(opens, { concurrency: 2 })
      assert.deepStrictEqual(first?.length, second?.length)
      yield* Effect.provide(opened(tokens.postgres), Layer.provide(Layer.fresh(ApprovalStore.layerSql), database))
    })
  )
})
