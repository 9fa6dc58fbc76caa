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
      assert.throws(
        () => ApprovalStore.digest(cyclic),
        TypeError,
        "canonicalJson: the value refers to itself at $.self"
      )
    })

    // Digests the canonical writer of 0.1.0 gave (its own walk, before it moved onto the JSON writer of tool
    // results): a token requested then is bound to these, so they must not change.
    const before: ReadonlyArray<readonly [string, unknown, string]> = [
      [
        "a plain object",
        { hotelId: "h-42", checkIn: "2026-11-02", nights: 3 },
        "6723ce33f1d78c06a6cb2b404b306111ea9dfac223a5bce27e5f1c3ca1465049"
      ],
      [
        "keys in another order",
        { nights: 3, checkIn: "2026-11-02", hotelId: "h-42" },
        "6723ce33f1d78c06a6cb2b404b306111ea9dfac223a5bce27e5f1c3ca1465049"
      ],
      [
        "nested objects and arrays",
        { b: [3, { z: 1, y: [true, false, null] }], a: { d: { c: "x" } } },
        "c1fea58b7dbbabb2f1ccf64da663e0d6cfecb6c4b5ccb1ebf2dbd9cdd8da913b"
      ],
      [
        "an array at the top",
        [1, "two", { three: 3 }, [4]],
        "95622b6cc541c61dcaf28d678257ceab310e25f669bfc6695a7c231651c3c83b"
      ],
      ["an empty object", {}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"],
      ["an empty array", [], "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"],
      [
        "unicode text and keys",
        { 名前: "Zoë 🚀", ключ: "\u00e9\u0301", emoji: "👍🏽", escapes: '"\\\n\t\u0000\u2028' },
        "adb315b418beb5e662b6ebdcf83295ba696a9591a30510f51d7bb8c7fc6fdd6f"
      ],
      ["a lone surrogate", { s: "\ud800x" }, "fdcc2c72d7292223d999036df79143b5a626f4f1ce5e5f83ca2cf143e1b34a9d"],
      [
        "numbers",
        { big: 1e21, negativeZero: -0, small: 1e-7, fraction: 0.1, max: Number.MAX_SAFE_INTEGER, negative: -42.5 },
        "0d6f78461f7504228b5834e1aa44135ac0d4c60999cb7aeee2e315d2b8e3ffea"
      ],
      [
        "non-finite numbers",
        { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, ninf: Number.NEGATIVE_INFINITY },
        "8f5aa92a95f8662c9380b3c366e5c3f7155299c4958b2b0f3ea7b82e4af04e08"
      ],
      [
        "a bigint",
        { amount: 12345678901234567890n },
        "14f3f798b520860fa703dae3ee9749a834ce63ef37978c79b0217da35a49b468"
      ],
      [
        "a Date",
        { at: new Date("2026-11-02T15:00:00.000Z") },
        "cb52a3458fb6ebc308e2fa29ef47eae950e6e742a77ec902abb2a848ec715648"
      ],
      ["a Date at the top", new Date(0), "f5a340121e9b8aeb98b099357bf182e888ad06b759a1c9dec682f7b34030b84b"],
      [
        "undefined, functions and symbols",
        { u: undefined, f: () => 1, s: Symbol("s"), kept: 1, list: [undefined, () => 1] },
        "5794f4a708ca0e2138112fb8d14cf3ea6f91be37145788c7469ddb44451f9d9f"
      ],
      [
        "integer-like keys",
        { 10: "ten", 2: "two", a: "a", "01": "zero-one" },
        "c228762dc676b2394ccf8405ea306766b446f46e5867e8a983f600e544796094"
      ],
      [
        "keys that need escaping",
        { 'a"b': 1, "new\nline": 2, "": 3 },
        "d72e2a6d720959e5cba0bd37d8dbb727de61f961561371d86428375990d63138"
      ],
      [
        "an own __proto__ key",
        JSON.parse('{"__proto__":{"x":1},"y":2}'),
        "3f2d459210f279bbbbe054375e0896f605eb918d5fb0cc23b456c0d4f4e7d5c4"
      ],
      [
        "a toJSON",
        { money: { toJSON: () => ({ currency: "EUR", cents: 1250 }) } },
        "4735a2de8cb81d6d038807d3dc57fe380e007b9bf0aeec43c67218a446665863"
      ],
      ["a string at the top", "just text", "2d97799dd0b1f3725dd11084315d8b7bcd4250e2e659aadf9b27cd39ee1d9521"],
      ["null", null, "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"],
      [
        "a sparse array",
        Object.assign(new Array(3), { 0: 1, 2: 3 }),
        "7db5b36a1553a4e31914df4beb60752bd07320e3056ac1d3790660c4cad6a173"
      ],
      [
        "a class instance",
        new (class Point {
          x = 1
          y = 2
        })(),
        "689a8f1db95402580476e38c264278ce7b1e664320cfb4e9ae8d3a908cf09964"
      ],
      [
        "deep nesting",
        { a: { b: { c: { d: { e: { f: [[[[["deep"]]]]] } } } } } },
        "aa6a4429261f896e370945b26c562a01dc5ba6249422c5cd924f391c16c24df0"
      ]
    ]

    it("digests are those the 0.1.0 writer gave, for objects, nesting, arrays, unicode, numbers and dates", () => {
      for (const [name, value, digest] of before) assert.strictEqual(ApprovalStore.digest(value), digest, name)
    })

    it.effect("a token requested under a 0.1.0 digest is consumed with the digest computed now", () =>
      Effect.gen(function* () {
        const store = ApprovalStore.makeMemory()
        for (const [name, value, digest] of before) {
          const id = yield* store.request({ ...binding, argumentsDigest: digest }, name)
          yield* store.approve(id, "alice")
          const used = yield* store.consume(id, { ...binding, argumentsDigest: ApprovalStore.digest(value) })
          assert.strictEqual(used.status, "used", name)
        }
      })
    )

    it("a Map and a Set are their entries and items, as in a tool's result (0.1.0 wrote both as {})", () => {
      assert.strictEqual(
        ApprovalStore.canonicalJson({
          m: new Map<unknown, unknown>([
            ["b", 2],
            ["a", new Set([1])]
          ])
        }),
        '{"m":{"a":[1],"b":2}}'
      )
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
          assert.deepStrictEqual(
            yield* store.approve(id, "alice"),
            approved,
            "the same approval again is that approval"
          )
          assert.strictEqual(checkOf(yield* Effect.exit(store.approve(id, "bob"))), "decided")
          const used = yield* store.consume(id, binding)
          assert.deepStrictEqual([used.status, used.usedAt], ["used", 1000])
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "used")
          assert.strictEqual((yield* store.approve(id, "alice")).status, "used")
          assert.strictEqual(checkOf(yield* Effect.exit(store.reject(id, "alice", "too late"))), "decided")
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

      it.effect("a rejected token is refused; a decided token is not decided again, either way", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request(binding, "why")
          const rejected = yield* store.reject(id, "alice", "too expensive")
          assert.deepStrictEqual([rejected.status, rejected.rejection], ["rejected", "too expensive"])
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "rejected")
          const approve = yield* Effect.flip(store.approve(id, "bob"))
          assert.deepStrictEqual(
            [approve._tag === "ApprovalTokenError" && approve.check, approve.message],
            ["decided", "already decided: rejected by alice: too expensive"]
          )
          assert.strictEqual(checkOf(yield* Effect.exit(store.reject(id, "bob", "again"))), "decided")
          assert.deepStrictEqual(yield* store.reject(id, "alice", "too expensive"), rejected)
          const approved = yield* store.request(binding, "why")
          yield* store.approve(approved, "alice")
          const revoke = yield* Effect.flip(store.reject(approved, "alice", "changed my mind"))
          assert.strictEqual(revoke.message, "already decided: approved by alice")
          assert.strictEqual((yield* store.consume(approved, binding)).status, "used")
        }).pipe(Effect.provide(layer()))
      )

      it.effect("tokens expire on the Clock after their ttl (default 15 minutes), approved or not", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          // Four calls (four scopes): each its own token.
          const short = yield* store.request(binding, "why", "1 minute", { scope: "short" })
          const long = yield* store.request(binding, "why", undefined, { scope: "long" })
          const unapproved = yield* store.request(binding, "why", "1 minute", { scope: "unapproved" })
          yield* store.approve(short, "alice")
          yield* store.approve(long, "alice")
          yield* TestClock.adjust("59999 millis")
          const early = yield* store.request(binding, "why", "1 minute", { scope: "early" })
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
      for (let i = 0; i < 9_998; i++) yield* store.request(binding, "why", "1 minute", { scope: `call ${i}` })
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

    it.effect("a file that is not a database is a TRANSIENT StoreError naming it", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const filename = join(dir, "not-a-db.txt")
        writeFileSync(filename, "plain text, not SQLite ".repeat(100))
        const error = yield* Effect.flip(
          Effect.provide(Effect.service(ApprovalStore.ApprovalStore), ApprovalStore.layerSqlite({ filename }))
        )
        assert.deepStrictEqual(
          [error._tag, error.category, error.store],
          ["StoreError", "TRANSIENT", "the approval store (SQLite)"]
        )
        assert.include(error.message, filename)
        const missingDir = yield* Effect.flip(
          Effect.provide(
            Effect.service(ApprovalStore.ApprovalStore),
            ApprovalStore.layerSqlite({ filename: join(dir, "no", "such", "dir.db") })
          )
        )
        assert.strictEqual(missingDir._tag, "StoreError")
        rmSync(dir, { recursive: true })
      })
    )
  })
})
