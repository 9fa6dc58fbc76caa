import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"

const binding: ApprovalStore.Binding = {
  agentId: "planner",
  action: "book",
  argumentsDigest: ApprovalStore.digest({ hotelId: "h-42", checkIn: "2026-11-02" })
}

const tempDir = () => mkdtempSync(join(tmpdir(), "rolecraft-approvals-"))

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<ApprovalStore.ApprovalStore, unknown>]> = [
  ["memory", () => ApprovalStore.layerMemory],
  ["sqlite :memory:", () => ApprovalStore.layerSqlite({ filename: ":memory:" })],
  ["sqlite file", () => ApprovalStore.layerSqlite({ filename: join(tempDir(), "approvals.db") })],
  ["sql on postgres", () => Layer.provide(ApprovalStore.layerSql, pg())]
]

/** A fresh client (its own pool) on the test run's Postgres, as a second process would have. */
const pg = () => PgClient.layer({ url: Redacted.make(postgresUrl()) })

/** A storage whose every operation first yields, so concurrent consumes interleave between find and transition. */
const yielding = (storage: ApprovalStore.Storage): ApprovalStore.Storage => ({
  insert: (token) => Effect.andThen(Effect.yieldNow, storage.insert(token)),
  find: (id) => Effect.andThen(Effect.yieldNow, storage.find(id)),
  transition: (id, from, next) => Effect.andThen(Effect.yieldNow, storage.transition(id, from, next))
})

const interleaved: ReadonlyArray<readonly [string, () => ApprovalStore.Storage]> = [
  ["memory", ApprovalStore.memoryStorage],
  ["sqlite", () => ApprovalStore.sqliteStorage(new DatabaseSync(":memory:"))]
]

const checkOf = <A>(exit: Exit.Exit<A, { readonly _tag: string; readonly check?: string }>): string =>
  Exit.isFailure(exit) ? (Option.getOrThrow(Exit.findErrorOption(exit)).check ?? "no check") : "ok"

describe("ApprovalStore", () => {
  describe("canonical JSON and digest", () => {
    it("sorts keys at every depth and drops undefined, like JSON otherwise", () => {
      assert.strictEqual(
        ApprovalStore.canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined }], c: "x" }, u: undefined }),
        '{"a":{"c":"x","d":[3,{"z":1}]},"b":1}'
      )
      assert.strictEqual(ApprovalStore.canonicalJson({ 10: 1, 2: 2, a: 3 }), '{"10":1,"2":2,"a":3}')
      assert.strictEqual(ApprovalStore.canonicalJson([undefined, Number.NaN, 1n]), '[null,null,"1"]')
    })

    it("a cycle is a TypeError, not a stack overflow", () => {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      assert.throws(() => ApprovalStore.digest(cyclic), TypeError)
    })

    it("property: the digest ignores key order and changes with any value", () => {
      fc.assert(
        fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
          const reversed = Object.fromEntries(Object.entries(record).reverse())
          assert.strictEqual(ApprovalStore.digest(record), ApprovalStore.digest(reversed))
          assert.match(ApprovalStore.digest(record), /^[0-9a-f]{64}$/)
          assert.notStrictEqual(ApprovalStore.digest(record), ApprovalStore.digest({ ...record, "\u0000extra": 1 }))
        })
      )
    })

    it("token ids are 32 base64url characters and do not repeat", () => {
      const ids = new Set(Array.from({ length: 1000 }, ApprovalStore.newTokenId))
      assert.strictEqual(ids.size, 1000)
      for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{32}$/)
    })
  })

  for (const [name, layer] of stores) {
    describe(name, () => {
      it.effect("request → approve → consume once; the token records who and when", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          yield* TestClock.adjust("1 second")
          const id = yield* store.request(binding, "Books and charges a hotel")
          const pending = Option.getOrThrow(yield* store.get(id))
          assert.deepStrictEqual(
            { status: pending.status, requestedAt: pending.requestedAt, expiresAt: pending.expiresAt },
            { status: "pending", requestedAt: 1000, expiresAt: 1000 + 15 * 60_000 }
          )
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "pending")
          const approved = yield* store.approve(id, "alice")
          assert.deepStrictEqual([approved.status, approved.approver, approved.decidedAt], ["approved", "alice", 1000])
          assert.strictEqual((yield* store.approve(id, "bob")).approver, "alice", "approving twice is a no-op")
          const used = yield* store.consume(id, binding)
          assert.deepStrictEqual([used.status, used.usedAt], ["used", 1000])
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "used")
          assert.strictEqual(checkOf(yield* Effect.exit(store.approve(id, "alice"))), "used")
          assert.deepStrictEqual(Option.getOrThrow(yield* store.get(id)).binding, { ...binding, tool: undefined })
        }).pipe(Effect.provide(layer()))
      )

      it.effect("a mismatched binding is refused by check and does not burn the token", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request({ ...binding, tool: "convert" }, "why")
          yield* store.approve(id, "alice")
          const cases: ReadonlyArray<readonly [string, ApprovalStore.Binding]> = [
            ["agent", { ...binding, tool: "convert", agentId: "other" }],
            ["action", { ...binding, tool: "convert", action: "cancel" }],
            ["action", { ...binding, tool: "delete" }],
            ["action", binding],
            ["arguments", { ...binding, tool: "convert", argumentsDigest: ApprovalStore.digest({ hotelId: "h-43" }) }]
          ]
          for (const [check, other] of cases) {
            assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, other))), check)
          }
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume("no-such-token", binding))), "unknown")
          assert.strictEqual((yield* store.consume(id, { ...binding, tool: "convert" })).status, "used")
        }).pipe(Effect.provide(layer()))
      )

      it.effect("a rejected token is refused; it cannot be approved afterwards", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request(binding, "why")
          const rejected = yield* store.reject(id, "alice", "too expensive")
          assert.deepStrictEqual([rejected.status, rejected.rejection], ["rejected", "too expensive"])
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "rejected")
          assert.strictEqual(checkOf(yield* Effect.exit(store.approve(id, "bob"))), "rejected")
          assert.strictEqual(checkOf(yield* Effect.exit(store.reject(id, "bob", "again"))), "rejected")
          const revoked = yield* store.request(binding, "why")
          yield* store.approve(revoked, "alice")
          yield* store.reject(revoked, "alice", "changed my mind")
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(revoked, binding))), "rejected")
        }).pipe(Effect.provide(layer()))
      )

      it.effect("tokens expire on the Clock after their ttl (default 15 minutes), approved or not", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const short = yield* store.request(binding, "why", "1 minute")
          const long = yield* store.request(binding, "why")
          const unapproved = yield* store.request(binding, "why", "1 minute")
          yield* store.approve(short, "alice")
          yield* store.approve(long, "alice")
          yield* TestClock.adjust("59999 millis")
          const early = yield* store.request(binding, "why", "1 minute")
          yield* store.approve(early, "alice")
          yield* TestClock.adjust("1 milli")
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(short, binding))), "expired")
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(unapproved, binding))), "expired")
          assert.strictEqual(checkOf(yield* Effect.exit(store.approve(unapproved, "alice"))), "expired")
          assert.strictEqual((yield* store.consume(early, binding)).status, "used")
          yield* TestClock.adjust("14 minutes")
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(long, binding))), "expired")
        }).pipe(Effect.provide(layer()))
      )

      it.effect("100 concurrent consumes of one approved token: exactly one wins, the rest see used", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request(binding, "why")
          yield* store.approve(id, "alice")
          const exits = yield* Effect.forEach(
            Array.from({ length: 100 }),
            () => Effect.exit(Effect.andThen(Effect.yieldNow, store.consume(id, binding))),
            { concurrency: "unbounded" }
          )
          const checks = exits.map(checkOf)
          assert.strictEqual(checks.filter((c) => c === "ok").length, 1)
          assert.strictEqual(checks.filter((c) => c === "used").length, 99)
        }).pipe(Effect.provide(layer()))
      )
    })
  }

  it.effect(
    "sql on postgres: 100 interleaved consumes of one token (find and transition apart): exactly one wins",
    () =>
      Effect.gen(function* () {
        const store = ApprovalStore.make(yielding(yield* ApprovalStore.sqlStorage))
        const id = yield* store.request(binding, "why")
        yield* store.approve(id, "alice")
        const exits = yield* Effect.forEach(
          Array.from({ length: 100 }),
          () => Effect.exit(store.consume(id, binding)),
          {
            concurrency: "unbounded"
          }
        )
        const checks = exits.map(checkOf)
        assert.strictEqual(checks.filter((c) => c === "ok").length, 1)
        assert.strictEqual(checks.filter((c) => c === "used").length, 99)
      }).pipe(Effect.provide(pg()))
  )

  for (const [name, storage] of interleaved) {
    it.effect(`${name}: 100 interleaved consumes of one token (find and transition apart): exactly one wins`, () =>
      Effect.gen(function* () {
        const store = ApprovalStore.make(yielding(storage()))
        const id = yield* store.request(binding, "why")
        yield* store.approve(id, "alice")
        const exits = yield* Effect.forEach(
          Array.from({ length: 100 }),
          () => Effect.exit(store.consume(id, binding)),
          {
            concurrency: "unbounded"
          }
        )
        const checks = exits.map(checkOf)
        assert.strictEqual(checks.filter((c) => c === "ok").length, 1)
        assert.strictEqual(checks.filter((c) => c === "used").length, 99)
      })
    )
  }

  it.effect("memory: expired tokens are swept once the store grows past 10,000; live ones stay", () =>
    Effect.gen(function* () {
      const storage = ApprovalStore.memoryStorage()
      const store = ApprovalStore.make(storage)
      const old = yield* store.request(binding, "why", "1 minute")
      for (let i = 0; i < 9_998; i++) yield* store.request(binding, "why", "1 minute")
      const live = yield* store.request(binding, "why", "1 hour")
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(old, binding))), "expired")
      yield* store.request(binding, "why")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(old, binding))), "unknown")
      yield* store.approve(live, "alice")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(live, binding))), "ok")
    })
  )

  describe("sql on postgres across processes", () => {
    it.effect("two clients (two processes): one requests, the other approves; one consume of two wins", () =>
      Effect.gen(function* () {
        const a = Context.get(
          yield* Layer.build(Layer.provide(ApprovalStore.layerSql, pg())),
          ApprovalStore.ApprovalStore
        )
        const b = Context.get(
          yield* Layer.build(Layer.provide(ApprovalStore.layerSql, pg())),
          ApprovalStore.ApprovalStore
        )
        const id = yield* a.request(binding, "why")
        yield* b.approve(id, "alice")
        const exits = yield* Effect.all([a.consume(id, binding), b.consume(id, binding)].map(Effect.exit), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(exits.map(checkOf).sort(), ["ok", "used"])
      })
    )

    it.effect("keys rows by the SHA-256 of the token id, so the table holds no usable token", () =>
      Effect.gen(function* () {
        const store = yield* ApprovalStore.ApprovalStore
        const id = yield* store.request(binding, "why")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ readonly key: string }>`SELECT key FROM rolecraft_approval_tokens`
        assert.isAbove(rows.length, 0)
        for (const row of rows) assert.notInclude(JSON.stringify(row), id)
        assert.isTrue(rows.some((row) => row.key === createHash("sha256").update(id).digest("hex")))
      }).pipe(Effect.provide(Layer.provideMerge(ApprovalStore.layerSql, pg())))
    )
  })

  describe("sqlite durability", () => {
    it.effect("a token requested and approved before a restart is consumed once after it", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const filename = join(dir, "approvals.db")
        const id = yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request(binding, "why")
          yield* store.approve(id, "alice")
          return id
        }).pipe(Effect.provide(ApprovalStore.layerSqlite({ filename })))
        const reopened = ApprovalStore.layerSqlite({ filename })
        const first = yield* Effect.exit(
          Effect.flatMap(Effect.service(ApprovalStore.ApprovalStore), (store) => store.consume(id, binding)).pipe(
            Effect.provide(reopened)
          )
        )
        const second = yield* Effect.exit(
          Effect.flatMap(Effect.service(ApprovalStore.ApprovalStore), (store) => store.consume(id, binding)).pipe(
            Effect.provide(reopened)
          )
        )
        assert.deepStrictEqual([checkOf(first), checkOf(second)], ["ok", "used"])
        rmSync(dir, { recursive: true })
      })
    )

    it.effect("two stores on one file (two processes): one consume wins", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const filename = join(dir, "approvals.db")
        const a = yield* Layer.build(ApprovalStore.layerSqlite({ filename }))
        const b = yield* Layer.build(ApprovalStore.layerSqlite({ filename }))
        const storeA = Context.get(a, ApprovalStore.ApprovalStore)
        const storeB = Context.get(b, ApprovalStore.ApprovalStore)
        const id = yield* storeA.request(binding, "why")
        yield* storeB.approve(id, "alice")
        const exits = yield* Effect.all([storeA.consume(id, binding), storeB.consume(id, binding)].map(Effect.exit), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(exits.map(checkOf).sort(), ["ok", "used"])
        rmSync(dir, { recursive: true })
      })
    )

    it.effect("keys rows by the SHA-256 of the token id, so the file holds no usable token", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const filename = join(dir, "approvals.db")
        const id = yield* Effect.flatMap(Effect.service(ApprovalStore.ApprovalStore), (store) =>
          store.request(binding, "why")
        ).pipe(Effect.provide(ApprovalStore.layerSqlite({ filename })))
        for (const file of [filename, `${filename}-wal`]) {
          if (existsSync(file)) assert.notInclude(readFileSync(file).toString("latin1"), id)
        }
        const database = new DatabaseSync(filename)
        const keys = database.prepare("SELECT key FROM rolecraft_approval_tokens").all()
        database.close()
        // The key is the digest of the id: not the id, and not merely its hex.
        assert.deepStrictEqual(keys, [{ key: createHash("sha256").update(id).digest("hex") }])
        assert.notStrictEqual(keys[0]?.key, Buffer.from(id).toString("hex"))
        rmSync(dir, { recursive: true })
      })
    )

    it.effect("a file that is not a database is ApprovalStorageError naming it", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const filename = join(dir, "not-a-db.txt")
        writeFileSync(filename, "plain text, not SQLite ".repeat(100))
        const error = yield* Effect.flip(
          Effect.provide(Effect.service(ApprovalStore.ApprovalStore), ApprovalStore.layerSqlite({ filename }))
        )
        assert.strictEqual(error._tag, "ApprovalStorageError")
        assert.include(error.message, filename)
        const missingDir = yield* Effect.flip(
          Effect.provide(
            Effect.service(ApprovalStore.ApprovalStore),
            ApprovalStore.layerSqlite({ filename: join(dir, "no", "such", "dir.db") })
          )
        )
        assert.strictEqual(missingDir._tag, "ApprovalStorageError")
        rmSync(dir, { recursive: true })
      })
    )
  })
})
