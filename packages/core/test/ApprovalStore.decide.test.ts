/**
 * Deciding a pending token by the key a listing gives (`store.decide`), on every store alike: the decision is
 * recorded once under the same rules as `approve`/`reject` (the same decision again changes nothing and says
 * so; another is refused naming who decided), an approved token is then consumed by its call, an unknown key
 * or an expired token is refused, text a store cannot hold is VALIDATION naming the field, and of deciders
 * racing on one token exactly one is recorded.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as Postgres from "../../../scripts/postgres.ts"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Decision from "../src/Decision.ts"

const stores: ReadonlyArray<readonly [string, () => Effect.Effect<Layer.Layer<ApprovalStore.ApprovalStore, unknown>>]> =
  [
    ["memory", () => Effect.succeed(ApprovalStore.layerMemory)],
    [
      "sqlite",
      () =>
        Effect.succeed(ApprovalStore.layerSqlite({ filename: join(mkdtempSync(join(tmpdir(), "decide-")), "a.db") }))
    ],
    [
      "postgres",
      () =>
        Effect.map(
          Effect.promise(() => Postgres.freshDatabase(postgresUrl(), "approvals_decide")),
          (url) => Layer.provide(ApprovalStore.layerSql, PgClient.layer({ url: Redacted.make(url) }))
        )
    ]
  ]

const binding: ApprovalStore.Binding = {
  agentId: "lead",
  action: "book",
  argumentsDigest: ApprovalStore.digest({ hotel: "Avenida" })
}

const refusal = <A>(exit: Exit.Exit<A, { readonly _tag: string }>) => {
  if (Exit.isSuccess(exit)) return undefined
  const error = Option.getOrUndefined(Exit.findErrorOption(exit)) as
    | {
        readonly _tag: string
        readonly check?: string
        readonly category?: string
        readonly field?: string
        readonly message: string
      }
    | undefined
  return error === undefined
    ? undefined
    : { tag: error._tag, check: error.check, category: error.category, field: error.field, message: error.message }
}

describe("ApprovalStore: deciding a listed token by its key", () => {
  for (const [name, layerOf] of stores) {
    it.effect(`${name}: recorded once, repeated, refused naming the decider, then consumed by its call`, () =>
      Effect.gen(function* () {
        const layer = yield* layerOf()
        yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const tokenId = yield* store.request(binding, "Bookings cost money", "1 hour", {
            scope: { turn: "t-1", call: "call_book" }
          })
          const [listed] = yield* store.list()
          assert.strictEqual(listed?.key, ApprovalStore.keyOf(tokenId))
          const key = listed?.key ?? ""

          assert.deepStrictEqual(yield* store.decide(key, Decision.approve("alice")), {
            decision: Decision.approve("alice"),
            repeated: false,
            status: "approved"
          })
          const token = Option.getOrUndefined(yield* store.get(tokenId))
          assert.deepStrictEqual([token?.status, token?.approver], ["approved", "alice"])
          assert.deepStrictEqual(yield* store.list(), [])
          assert.deepStrictEqual(yield* store.decide(key, Decision.approve("alice")), {
            decision: Decision.approve("alice"),
            repeated: true,
            status: "approved"
          })
          assert.deepStrictEqual(refusal(yield* Effect.exit(store.decide(key, Decision.reject("mallory", "no")))), {
            tag: "ApprovalTokenError",
            check: "decided",
            category: undefined,
            field: undefined,
            message: "already decided: approved by alice"
          })
          // The call holds the token itself: it consumes what the listing's decider approved.
          assert.strictEqual((yield* store.consume(tokenId, binding)).status, "used")
          assert.deepStrictEqual(yield* store.decide(key, Decision.approve("alice")), {
            decision: Decision.approve("alice"),
            repeated: true,
            status: "used"
          })
          assert.strictEqual(
            refusal(yield* Effect.exit(store.decide(key, Decision.approve("bob"))))?.message,
            "already decided: approved by alice"
          )
        }).pipe(Effect.provide(layer))
      })
    )

    it.effect(`${name}: an unknown key, an expired token and text the store cannot hold are refused`, () =>
      Effect.gen(function* () {
        const layer = yield* layerOf()
        yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const tokenId = yield* store.request(binding, "Bookings cost money", "10 seconds")
          const key = ApprovalStore.keyOf(tokenId)
          assert.strictEqual(
            refusal(yield* Effect.exit(store.decide("0".repeat(64), Decision.approve("alice"))))?.check,
            "unknown"
          )
          const nul = refusal(yield* Effect.exit(store.decide(key, Decision.approve("al\u0000ice"))))
          assert.deepStrictEqual([nul?.tag, nul?.category, nul?.field], ["StoreError", "VALIDATION", "approver"])
          yield* TestClock.adjust("11 seconds")
          assert.strictEqual(
            refusal(yield* Effect.exit(store.decide(key, Decision.approve("alice"))))?.check,
            "expired"
          )
          assert.strictEqual(Option.getOrUndefined(yield* store.get(tokenId))?.status, "pending")
        }).pipe(Effect.provide(layer))
      })
    )

    it.live(`${name}: of 12 deciders racing on one token, exactly one is recorded; the others are told who`, () =>
      Effect.gen(function* () {
        const layer = yield* layerOf()
        yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const tokenId = yield* store.request(binding, "Bookings cost money")
          const key = ApprovalStore.keyOf(tokenId)
          const names = Array.from({ length: 12 }, (_, i) => `decider-${i}`)
          const exits = yield* Effect.forEach(
            names,
            (approver, i) =>
              Effect.exit(
                store.decide(key, i % 2 === 0 ? Decision.approve(approver) : Decision.reject(approver, "no"))
              ),
            { concurrency: "unbounded" }
          )
          const recorded = exits.filter(Exit.isSuccess).map((exit) => exit.value)
          assert.strictEqual(recorded.length, 1)
          const winner = recorded[0]?.decision
          assert.isDefined(winner)
          if (winner === undefined) return
          assert.isFalse(recorded[0]?.repeated)
          const token = Option.getOrUndefined(yield* store.get(tokenId))
          assert.strictEqual(token?.approver, winner.approver)
          for (const exit of exits.filter(Exit.isFailure)) {
            assert.deepStrictEqual(
              [refusal(exit)?.check, refusal(exit)?.message],
              ["decided", `already decided: ${Decision.describe(winner)}`]
            )
          }
        }).pipe(Effect.provide(layer))
      })
    )
  }

  it.effect("a storage without key access cannot decide: EXECUTION naming the store", () =>
    Effect.gen(function* () {
      const { findListed: _find, transitionListed: _transition, ...bare } = ApprovalStore.memoryStorage()
      const store = ApprovalStore.make({ ...bare, name: "my store" })
      const tokenId = yield* store.request(binding, "Bookings cost money")
      const failed = refusal(yield* Effect.exit(store.decide(ApprovalStore.keyOf(tokenId), Decision.approve("a"))))
      assert.deepStrictEqual([failed?.tag, failed?.category], ["StoreError", "EXECUTION"])
      assert.include(failed?.message ?? "", "my store")
    })
  )
})
