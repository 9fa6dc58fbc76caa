import { createHash } from "node:crypto"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Option, Redacted, Schedule } from "effect"
import type * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import * as Postgres from "../../../scripts/postgres.ts"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Decision from "../src/Decision.ts"
import type * as StoreBoundary from "../src/StoreBoundary.ts"
import { approvalStores, pg, tempDir } from "./support/Stores.ts"

const binding: ApprovalStore.Binding = {
  agentId: "planner",
  action: "book",
  argumentsDigest: ApprovalStore.digest({ hotelId: "h-42", checkIn: "2026-11-02" })
}

const stores = approvalStores

/** A storage whose every operation first yields, so concurrent consumes interleave between find and transition. */
const yielding = (storage: ApprovalStore.Storage): ApprovalStore.Storage => ({
  insert: (token) => Effect.andThen(Effect.yieldNow, storage.insert(token)),
  find: (id) => Effect.andThen(Effect.yieldNow, storage.find(id)),
  transition: (id, from, next) => Effect.andThen(Effect.yieldNow, storage.transition(id, from, next)),
  list: (query) => Effect.andThen(Effect.yieldNow, storage.list(query))
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
          const short = yield* store.request(binding, "why", "1 minute", { scope: { turn: "short" } })
          const long = yield* store.request(binding, "why", undefined, { scope: { turn: "long" } })
          const unapproved = yield* store.request(binding, "why", "1 minute", { scope: { turn: "unapproved" } })
          yield* store.approve(short, "alice")
          yield* store.approve(long, "alice")
          yield* TestClock.adjust("59999 millis")
          const early = yield* store.request(binding, "why", "1 minute", { scope: { turn: "early" } })
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

      it.effect("a used token is the same call's again: the same key and binding pass (expired or not), no other", () =>
        Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const id = yield* store.request(binding, "why", "1 minute")
          yield* store.approve(id, "alice")
          const used = yield* store.consume(id, binding, { key: "run-1/call_1" })
          assert.strictEqual(used.usedKey, createHash("sha256").update("run-1/call_1").digest("hex"))
          // The same call run again (after a crash): it used this token, it proceeds.
          assert.deepStrictEqual(yield* store.consume(id, binding, { key: "run-1/call_1" }), used)
          // Any other consume is refused as before: another key, no key, another binding with the same key.
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding, { key: "run-1/call_2" }))), "used")
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(id, binding))), "used")
          const other = { ...binding, argumentsDigest: ApprovalStore.digest({ hotelId: "h-43" }) }
          assert.strictEqual(
            checkOf(yield* Effect.exit(store.consume(id, other, { key: "run-1/call_1" }))),
            "arguments"
          )
          // Past its expiry the call run again still finds its token: it was used in time.
          yield* TestClock.adjust("2 minutes")
          assert.strictEqual((yield* store.consume(id, binding, { key: "run-1/call_1" })).status, "used")
          // A token used without a key is nobody's to use again.
          const keyless = yield* store.request(binding, "why", undefined, { scope: { turn: "keyless" } })
          yield* store.approve(keyless, "alice")
          assert.strictEqual((yield* store.consume(keyless, binding)).usedKey, undefined)
          assert.strictEqual(checkOf(yield* Effect.exit(store.consume(keyless, binding, { key: "k" }))), "used")
          // Of two attempts of one call at once (the same key), both pass; of two calls, one.
          const raced = yield* store.request(binding, "why", undefined, { scope: { turn: "raced" } })
          yield* store.approve(raced, "alice")
          const exits = yield* Effect.forEach(
            ["k-1", "k-1", "k-2"],
            (key) => Effect.exit(Effect.andThen(Effect.yieldNow, store.consume(raced, binding, { key }))),
            { concurrency: "unbounded" }
          )
          const winner = Option.getOrThrow(yield* store.get(raced)).usedKey
          const expected = ["k-1", "k-1", "k-2"].map((key) =>
            createHash("sha256").update(key).digest("hex") === winner ? "ok" : "used"
          )
          assert.deepStrictEqual(exits.map(checkOf), expected)
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
      for (let i = 0; i < 9_998; i++) yield* store.request(binding, "why", "1 minute", { scope: { turn: `call ${i}` } })
      const live = yield* store.request(binding, "why", "1 hour")
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(old, binding))), "expired")
      yield* store.request(binding, "why")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(old, binding))), "unknown")
      yield* store.approve(live, "alice")
      assert.strictEqual(checkOf(yield* Effect.exit(store.consume(live, binding))), "ok")
    })
  )

  describe("a table made before the used key's column", () => {
    const oldSchema = `CREATE TABLE rolecraft_approval_tokens (key VARCHAR(64) PRIMARY KEY, agent_id TEXT NOT NULL,
      action TEXT NOT NULL, tool TEXT, arguments_digest TEXT NOT NULL, reason TEXT NOT NULL, status VARCHAR(16) NOT NULL,
      requested_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, approver TEXT, decided_at BIGINT, rejection TEXT,
      used_at BIGINT)`
    const roundTrip = Effect.gen(function* () {
      const store = yield* ApprovalStore.ApprovalStore
      const id = yield* store.request(binding, "why")
      yield* store.approve(id, "alice")
      yield* store.consume(id, binding, { key: "run-1/call_1" })
      return checkOf(yield* Effect.exit(store.consume(id, binding, { key: "run-1/call_1" })))
    })
    it.effect("sqlite: gets the column when opened; a used token is its call's again", () =>
      Effect.gen(function* () {
        const filename = join(tempDir(), "old.db")
        const database = new DatabaseSync(filename)
        database.exec(oldSchema)
        database.close()
        assert.strictEqual(yield* Effect.provide(roundTrip, ApprovalStore.layerSqlite({ filename })), "ok")
      })
    )
    it.effect("postgres: gets the column when opened; a used token is its call's again", () =>
      Effect.gen(function* () {
        const url = yield* Effect.promise(() => Postgres.freshDatabase(postgresUrl(), "approvals_old"))
        const database = PgClient.layer({ url: Redacted.make(url) })
        yield* Effect.provide(
          Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(oldSchema)),
          database
        )
        // Two stores (two processes) opening the old table at once: one adds the column, the other finds it.
        const opens = [0, 1].map(() =>
          Effect.provide(roundTrip, Layer.provide(Layer.fresh(ApprovalStore.layerSql), database))
        )
        assert.deepStrictEqual(yield* Effect.all(opens, { concurrency: 2 }), ["ok", "ok"])
      })
    )
  })

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

  // The contract on each storage (memory, SQLite, Postgres), built with the production constructor. Each
  // operation of a wrapped storage yields first, so concurrent operations interleave between find and
  // transition (the window a compare-and-set must close).
  const storages: ReadonlyArray<readonly [string, Effect.Effect<ApprovalStore.Storage, unknown, Scope.Scope>]> = [
    ["memory", Effect.sync(ApprovalStore.memoryStorage)],
    ["sqlite", Effect.sync(() => ApprovalStore.sqliteStorage(new DatabaseSync(":memory:")))],
    [
      "postgres",
      Effect.flatMap(Layer.build(pg()), (context) => Effect.provideContext(ApprovalStore.sqlStorage, context))
    ]
  ]

  const apply = (store: ApprovalStore.Service, id: string, decision: Decision.Decision) =>
    decision._tag === "Approve"
      ? store.approve(id, decision.approver)
      : store.reject(id, decision.approver, decision.reason)

  const alice = Decision.approve("alice")
  const bob = Decision.approve("bob")
  const aliceNo = Decision.reject("alice", "too expensive")
  const bobNo = Decision.reject("bob", "not now")
  /** Every order of two decisions: the same decision twice, and each kind of other decision. */
  const orders: ReadonlyArray<readonly [string, Decision.Decision, Decision.Decision]> = [
    ["approve / the same approve", alice, alice],
    ["approve / approve by another", alice, bob],
    ["approve / reject", alice, bobNo],
    ["reject / approve", aliceNo, bob],
    ["reject / the same reject", aliceNo, aliceNo],
    ["reject / reject by another", aliceNo, bobNo],
    ["reject / reject with another reason", aliceNo, Decision.reject("alice", "never")]
  ]

  /** What a decision came to: "ok" with the decision the token records, or the refusal's check and message. */
  const outcome = (
    exit: Exit.Exit<ApprovalStore.Token, ApprovalStore.ApprovalTokenError | StoreBoundary.StoreError>
  ) => {
    if (Exit.isSuccess(exit)) {
      const token = exit.value
      return `ok: ${token.status === "rejected" ? `rejected by ${token.approver}: ${token.rejection}` : `approved by ${token.approver}`}`
    }
    const error = Option.getOrThrow(Exit.findErrorOption(exit))
    return `${error._tag === "ApprovalTokenError" ? error.check : error._tag}: ${error.message}`
  }

  for (const [name, make] of storages) {
    describe(`${name}: a token is decided once`, () => {
      for (const [order, first, second] of orders) {
        it.effect(`${order}, one after the other: the first stands; the second is it again or refused`, () =>
          Effect.gen(function* () {
            const store = ApprovalStore.make(yield* make)
            const id = yield* store.request(binding, "why", undefined, { scope: { turn: order } })
            assert.strictEqual(outcome(yield* Effect.exit(apply(store, id, first))), `ok: ${Decision.describe(first)}`)
            const expected = Decision.same(first, second)
              ? `ok: ${Decision.describe(first)}`
              : `decided: already decided: ${Decision.describe(first)}`
            assert.strictEqual(outcome(yield* Effect.exit(apply(store, id, second))), expected)
            const token = Option.getOrThrow(yield* store.get(id))
            assert.strictEqual(outcome(Exit.succeed(token)), `ok: ${Decision.describe(first)}`)
          })
        )

        it.effect(`${order}, at once (interleaved): one is recorded, the loser is it again or refused`, () =>
          Effect.gen(function* () {
            const store = ApprovalStore.make(yielding(yield* make))
            const id = yield* store.request(binding, "why", undefined, { scope: { turn: `${order} at once` } })
            const [a, b] = yield* Effect.all([apply(store, id, first), apply(store, id, second)].map(Effect.exit), {
              concurrency: "unbounded"
            })
            const token = Option.getOrThrow(yield* store.get(id))
            const recorded = outcome(Exit.succeed(token)).slice("ok: ".length)
            assert.include([Decision.describe(first), Decision.describe(second)], recorded)
            for (const [exit, decision] of [
              [a, first],
              [b, second]
            ] as const) {
              const expected =
                Decision.describe(decision) === recorded ? `ok: ${recorded}` : `decided: already decided: ${recorded}`
              assert.strictEqual(outcome(exit!), expected)
            }
          })
        )
      }

      it.effect("twenty deciders at once (ten approve, ten reject, each their own): exactly one is recorded", () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yielding(yield* make))
          const id = yield* store.request(binding, "why", undefined, { scope: { turn: "twenty" } })
          const deciders = Array.from({ length: 20 }, (_, i) =>
            i % 2 === 0 ? Decision.approve(`approver ${i}`) : Decision.reject(`approver ${i}`, `reason ${i}`)
          )
          const exits = yield* Effect.forEach(deciders, (decision) => Effect.exit(apply(store, id, decision)), {
            concurrency: "unbounded"
          })
          const results = exits.map(outcome)
          const recorded = outcome(Exit.succeed(Option.getOrThrow(yield* store.get(id)))).slice("ok: ".length)
          assert.strictEqual(results.filter((r) => r.startsWith("ok: ")).length, 1)
          assert.deepStrictEqual(
            results.filter((r) => !r.startsWith("ok: ")),
            Array.from({ length: 19 }, () => `decided: already decided: ${recorded}`)
          )
        })
      )

      it.effect("a decision bound to another call (agent, action, tool, arguments) is refused; the token stays", () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yield* make)
          const id = yield* store.request(binding, "why", undefined, { scope: { turn: "bound" } })
          const others: ReadonlyArray<readonly [string, ApprovalStore.Binding]> = [
            ["agent", { ...binding, agentId: "intruder" }],
            ["action", { ...binding, action: "cancel" }],
            ["action", { ...binding, tool: "convert" }],
            ["arguments", { ...binding, argumentsDigest: ApprovalStore.digest({ hotelId: "h-43" }) }]
          ]
          for (const [check, other] of others) {
            assert.strictEqual(checkOf(yield* Effect.exit(store.approve(id, "alice", other))), check)
            assert.strictEqual(checkOf(yield* Effect.exit(store.reject(id, "alice", "no", other))), check)
          }
          assert.strictEqual(Option.getOrThrow(yield* store.get(id)).status, "pending")
          assert.strictEqual((yield* store.approve(id, "alice", binding)).status, "approved")
        })
      )
    })

    describe(`${name}: a call asked for again gets its live pending token`, () => {
      it.effect("the same call (binding, reason, ttl, scope) shares one token until it is decided or expires", () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yield* make)
          const scoped = { scope: { turn: "client 1" } }
          const first = yield* store.request(binding, "why", "1 minute", scoped)
          assert.strictEqual(yield* store.request(binding, "why", "1 minute", scoped), first)
          const others = [
            yield* store.request(binding, "why", "1 minute", { scope: { turn: "client 2" } }),
            yield* store.request(binding, "why", "1 minute"),
            yield* store.request(binding, "another reason", "1 minute", scoped),
            yield* store.request(binding, "why", "2 minutes", scoped),
            yield* store.request(
              { ...binding, argumentsDigest: ApprovalStore.digest({ hotelId: "h-43" }) },
              "why",
              "1 minute",
              scoped
            )
          ]
          assert.strictEqual(new Set([first, ...others]).size, 6)
          yield* store.approve(first, "alice")
          const afterApproval = yield* store.request(binding, "why", "1 minute", scoped)
          assert.notStrictEqual(afterApproval, first)
          yield* store.reject(afterApproval, "alice", "no")
          const afterRejection = yield* store.request(binding, "why", "1 minute", scoped)
          assert.notInclude([first, afterApproval], afterRejection)
          yield* TestClock.adjust("1 minute")
          const afterExpiry = yield* store.request(binding, "why", "1 minute", scoped)
          assert.notInclude([first, afterApproval, afterRejection], afterExpiry)
          assert.strictEqual(Option.getOrThrow(yield* store.get(afterExpiry)).status, "pending")
        })
      )

      it.effect("a hundred requests of one call at once store one token", () =>
        Effect.gen(function* () {
          let inserted = 0
          const storage = yielding(yield* make)
          const store = ApprovalStore.make({
            ...storage,
            insert: (token) =>
              Effect.andThen(
                Effect.sync(() => inserted++),
                storage.insert(token)
              )
          })
          const ids = yield* Effect.forEach(
            Array.from({ length: 100 }),
            () => store.request(binding, "why", undefined, { scope: { turn: "flood" } }),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(new Set(ids).size, 1)
          assert.strictEqual(inserted, 1)
        })
      )
    })

    describe(`${name}: the store boundary`, () => {
      /** Texts no store can hold: a NUL, lone surrogates (high, low, reversed), and text past its cap. */
      const hostile: ReadonlyArray<readonly [string, string]> = [
        ["a NUL", "no\u0000pe"],
        ["only a NUL", "\u0000"],
        ["a lone high surrogate", "s\uD800x"],
        ["a lone high surrogate at the end", "s\uDBFF"],
        ["a lone low surrogate", "s\uDC00x"],
        ["a reversed pair", "\uDC00\uD800"],
        ["1 MB", "x".repeat(1 << 20)]
      ]
      type Field = readonly [
        field: string,
        operation: (store: ApprovalStore.Service, pending: string, text: string) => Effect.Effect<unknown, unknown>
      ]
      const fields: ReadonlyArray<Field> = [
        ["agentId", (store, _, text) => store.request({ ...binding, agentId: text }, "why")],
        ["action", (store, _, text) => store.request({ ...binding, action: text }, "why")],
        ["tool", (store, _, text) => store.request({ ...binding, tool: text }, "why")],
        ["argumentsDigest", (store, _, text) => store.request({ ...binding, argumentsDigest: text }, "why")],
        ["reason", (store, _, text) => store.request(binding, text)],
        ["approver", (store, pending, text) => store.approve(pending, text)],
        ["approver", (store, pending, text) => store.reject(pending, text, "no")],
        ["reason", (store, pending, text) => store.reject(pending, "alice", text)]
      ]

      for (const [what, text] of hostile) {
        it.effect(`${what} in any field is VALIDATION naming the field; nothing is stored or decided`, () =>
          Effect.gen(function* () {
            const store = ApprovalStore.make(yield* make)
            const pending = yield* store.request(binding, "why", undefined, { scope: { turn: `hostile ${what}` } })
            for (const [field, operation] of fields) {
              const error = yield* Effect.flip(operation(store, pending, text))
              const refused = error as StoreBoundary.StoreError
              assert.deepStrictEqual(
                [refused._tag, refused.category, refused.field, refused.retryable],
                ["StoreError", "VALIDATION", field, false],
                `${what} in ${field}`
              )
              assert.include(refused.message, field)
              assert.notInclude(refused.message, text)
            }
            assert.strictEqual(Option.getOrThrow(yield* store.get(pending)).status, "pending")
            // A token id no store issued: unknown, looked up nowhere.
            assert.isTrue(Option.isNone(yield* store.get(text)))
            assert.strictEqual(checkOf(yield* Effect.exit(store.approve(text, "alice"))), "unknown")
            assert.strictEqual(checkOf(yield* Effect.exit(store.consume(text, binding))), "unknown")
          })
        )
      }

      it.effect("two ids differing only in a lone surrogate are both refused: never merged into one row", () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yield* make)
          for (const agentId of ["s\uD800x", "s\uDBFFx"]) {
            const error = yield* Effect.flip(store.request({ ...binding, agentId }, "why"))
            assert.strictEqual((error as StoreBoundary.StoreError).category, "VALIDATION")
          }
        })
      )

      it.effect("text a store can hold round-trips exactly: unicode, pairs, names and reasons at their caps", () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yield* make)
          const name = "🚀".repeat(512)
          const head = "Zoë 🚀 名前 \u00e9\u0301 \u2028 👍🏽 "
          const reason = head + "x".repeat(65_536 - head.length)
          const kept: ApprovalStore.Binding = {
            agentId: name,
            action: "名前 book",
            tool: "tool \u2028",
            argumentsDigest: "d"
          }
          const id = yield* store.request(kept, reason, undefined, { scope: { turn: "round trip" } })
          yield* store.reject(id, "Zoë 🚀", reason)
          const token = Option.getOrThrow(yield* store.get(id))
          assert.deepStrictEqual(
            [token.binding, token.reason, token.approver, token.rejection],
            [kept, reason, "Zoë 🚀", reason]
          )
        })
      )
    })
  }

  describe("the store boundary: rows that do not decode are EXECUTION naming the store, row and field", () => {
    const corrupt: ReadonlyArray<readonly [string, string, string]> = [
      ["a status no version wrote", "status = 'bogus'", "status"],
      ["an approved token without its approver", "status = 'approved', approver = NULL", "approver"]
    ]
    for (const [what, update, field] of corrupt) {
      it.effect(`sqlite: ${what}`, () =>
        Effect.gen(function* () {
          const database = new DatabaseSync(":memory:")
          const store = ApprovalStore.make(ApprovalStore.sqliteStorage(database))
          const id = yield* store.request(binding, "why")
          database.prepare(`UPDATE rolecraft_approval_tokens SET ${update}`).run()
          const operations: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
            store.get(id),
            store.approve(id, "alice"),
            store.consume(id, binding)
          ]
          for (const operation of operations) {
            const error = (yield* Effect.flip(operation)) as StoreBoundary.StoreError
            assert.deepStrictEqual(
              [error._tag, error.category, error.field, error.store],
              ["StoreError", "EXECUTION", field, "the approval store (SQLite)"]
            )
            assert.match(error.message, new RegExp(`token row [0-9a-f]{12}… does not decode at ${field}`))
          }
        })
      )

      it.effect(`postgres: ${what}`, () =>
        Effect.gen(function* () {
          const store = ApprovalStore.make(yield* ApprovalStore.sqlStorage)
          const id = yield* store.request(binding, "why", undefined, { scope: { turn: `corrupt ${what}` } })
          const sql = yield* SqlClient.SqlClient
          const key = createHash("sha256").update(id).digest("hex")
          yield* sql.unsafe(`UPDATE rolecraft_approval_tokens SET ${update} WHERE key = '${key}'`)
          const error = (yield* Effect.flip(store.get(id))) as StoreBoundary.StoreError
          assert.deepStrictEqual(
            [error._tag, error.category, error.field, error.store],
            ["StoreError", "EXECUTION", field, "the approval store (SQL)"]
          )
          assert.include(error.message, `token row ${key.slice(0, 12)}…`)
        }).pipe(Effect.provide(pg()))
      )
    }
  })

  describe("the store boundary: a store that goes away is TRANSIENT naming it, never a defect", () => {
    // A Postgres of this test's own (the run's shared one is never stopped), stopped and started again while
    // the store is in use: every operation is TRANSIENT naming the store, then works again on the same layer.
    it.live("postgres stopped while in use, then started again (C53)", () =>
      Effect.gen(function* () {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => Postgres.start()),
          (started) => Effect.sync(() => Postgres.stop(started.dir))
        )
        const context = yield* Layer.build(
          Layer.provide(ApprovalStore.layerSql, PgClient.layer({ url: Redacted.make(server.url) }))
        )
        const store = Context.get(context, ApprovalStore.ApprovalStore)
        const id = yield* store.request(binding, "why")
        Postgres.halt(server)
        const operations: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
          ["request", store.request(binding, "why", undefined, { scope: { turn: "while down" } })],
          ["get", store.get(id)],
          ["approve", store.approve(id, "alice")],
          ["reject", store.reject(id, "alice", "no")],
          ["consume", store.consume(id, binding)]
        ]
        for (const [name, operation] of operations) {
          const exit = yield* Effect.exit(Effect.timeout(operation, "20 seconds"))
          assert.isTrue(Exit.isFailure(exit), name)
          assert.isFalse(Exit.hasDies(exit), `${name} died: ${Exit.isFailure(exit) ? String(exit.cause) : ""}`)
          const error = Option.getOrThrow(Exit.findErrorOption(exit)) as StoreBoundary.StoreError
          assert.deepStrictEqual(
            [error._tag, error.category, error.retryable, error.store],
            ["StoreError", "TRANSIENT", true, "the approval store (SQL)"],
            name
          )
          assert.match(error.message, /^the approval store \(SQL\) could not (write|read|update) a token: /, name)
        }
        Postgres.restart(server)
        const back = yield* Effect.retry(store.approve(id, "alice"), {
          times: 20,
          schedule: Schedule.spaced("250 millis"),
          while: (error) => error._tag === "StoreError" && error.category === "TRANSIENT"
        })
        assert.strictEqual(back.status, "approved")
        assert.strictEqual((yield* store.consume(id, binding)).status, "used")
      })
    )

    it.effect("sqlite: a closed database", () =>
      Effect.gen(function* () {
        const database = new DatabaseSync(":memory:")
        const store = ApprovalStore.make(ApprovalStore.sqliteStorage(database))
        const id = yield* store.request(binding, "why")
        database.close()
        for (const operation of [
          store.request(binding, "why", undefined, { scope: { turn: "after close" } }),
          store.get(id),
          store.approve(id, "alice"),
          store.consume(id, binding)
        ]) {
          const error = yield* Effect.flip(operation as Effect.Effect<unknown, StoreBoundary.StoreError>)
          assert.deepStrictEqual(
            [error._tag, error.category, error.retryable, error.store],
            ["StoreError", "TRANSIENT", true, "the approval store (SQLite)"]
          )
        }
      })
    )
  })
})
