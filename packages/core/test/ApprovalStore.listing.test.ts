/**
 * What an approval store lists, on every store alike: the pending, unexpired tokens — of an agent, of a scope
 * (its turn, and its call), the longest waiting first and ties by key, at most `limit` — each with its binding,
 * scope and what a person is shown (the path of agents, the redacted arguments); a decided, used or expired
 * token is not listed. A scope is part of what a request is remembered under: the same call of two turns gets
 * two tokens. Bad options are VALIDATION naming the field.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { type Duration, Effect, Exit, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Postgres from "../../../scripts/postgres.ts"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"

const stores: ReadonlyArray<readonly [string, () => Effect.Effect<Layer.Layer<ApprovalStore.ApprovalStore, unknown>>]> =
  [
    ["memory", () => Effect.succeed(ApprovalStore.layerMemory)],
    [
      "sqlite",
      () => Effect.succeed(ApprovalStore.layerSqlite({ filename: join(mkdtempSync(join(tmpdir(), "list-")), "a.db") }))
    ],
    [
      "postgres",
      () =>
        Effect.map(
          Effect.promise(() => Postgres.freshDatabase(postgresUrl(), "approvals_list")),
          (url) => Layer.provide(ApprovalStore.layerSql, PgClient.layer({ url: Redacted.make(url) }))
        )
    ]
  ]

const binding = (agentId: string, order: string): ApprovalStore.Binding => ({
  agentId,
  action: "refund",
  argumentsDigest: ApprovalStore.digest({ order })
})

const failure = <A>(exit: Exit.Exit<A, { readonly category?: string; readonly field?: string }>) =>
  Exit.isFailure(exit) ? Option.getOrThrow(Exit.findErrorOption(exit)) : undefined

describe("ApprovalStore: the listing of pending tokens", () => {
  for (const [name, layerOf] of stores) {
    it.effect(`${name}: by agent and by scope, the longest waiting first, without decided or expired tokens`, () =>
      Effect.gen(function* () {
        const layer = yield* layerOf()
        yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          const ask = (agent: string, order: string, turn: string, call: string, ttl: Duration.Input = "1 hour") =>
            store.request(binding(agent, order), "Refunds money", ttl, {
              scope: { turn, call },
              agents: ["desk", agent],
              arguments: JSON.stringify({ order })
            })
          const a1 = yield* ask("support", "A-1", "turn-1", "call_1")
          yield* TestClock.adjust("1 second")
          const a2 = yield* ask("support", "A-2", "turn-1", "call_2")
          yield* TestClock.adjust("1 second")
          // The same call of another turn (its provider numbered the calls alike): a token of its own.
          const b1 = yield* ask("support", "A-1", "turn-2", "call_1")
          assert.notStrictEqual(b1, a1)
          assert.strictEqual(yield* ask("support", "A-1", "turn-1", "call_1"), a1)
          yield* TestClock.adjust("1 second")
          const other = yield* ask("billing", "B-1", "turn-3", "call_1")
          yield* TestClock.adjust("1 second")
          const short = yield* ask("support", "A-3", "turn-4", "call_1", "10 seconds")
          const decided = yield* ask("support", "A-4", "turn-5", "call_1")
          yield* store.approve(decided, "alice")
          const rejected = yield* ask("support", "A-5", "turn-5", "call_2")
          yield* store.reject(rejected, "bob", "no")

          const keys = (listed: ReadonlyArray<ApprovalStore.PendingToken>) => listed.map((token) => token.key)
          const key = ApprovalStore.keyOf
          assert.deepStrictEqual(keys(yield* store.list({ agentId: "support" })), [
            key(a1),
            key(a2),
            key(b1),
            key(short)
          ])
          assert.deepStrictEqual(keys(yield* store.list({ scope: { turn: "turn-1" } })), [key(a1), key(a2)])
          assert.deepStrictEqual(keys(yield* store.list({ scope: { turn: "turn-1", call: "call_2" } })), [key(a2)])
          assert.deepStrictEqual(keys(yield* store.list({ agentId: "billing", scope: { turn: "turn-1" } })), [])
          assert.deepStrictEqual(keys(yield* store.list({ limit: 2 })), [key(a1), key(a2)])
          assert.deepStrictEqual(keys(yield* store.list({ scope: { turn: "turn-5" } })), [])

          // Each listed token carries what a person needs to decide it.
          const [first] = yield* store.list({ scope: { turn: "turn-3" } })
          assert.deepStrictEqual(first, {
            key: key(other),
            binding: { ...binding("billing", "B-1"), tool: undefined },
            scope: { turn: "turn-3", call: "call_1" },
            agents: ["desk", "billing"],
            arguments: '{"order":"B-1"}',
            reason: "Refunds money",
            requestedAt: first?.requestedAt ?? -1,
            expiresAt: (first?.requestedAt ?? 0) + 3_600_000
          })

          // Past its time to live, a pending token is no longer listed.
          yield* TestClock.adjust("10 seconds")
          assert.deepStrictEqual(keys(yield* store.list({ agentId: "support" })), [key(a1), key(a2), key(b1)])
          yield* store.approve(a2, "alice")
          assert.deepStrictEqual(keys(yield* store.list({ scope: { turn: "turn-1" } })), [key(a1)])
          // Requested at the same time: ties go by key.
          const tied = [
            yield* ask("support", "T-1", "turn-6", "call_1"),
            yield* ask("support", "T-2", "turn-6", "call_2")
          ]
          assert.deepStrictEqual(keys(yield* store.list({ scope: { turn: "turn-6" } })), tied.map(key).sort())
        }).pipe(Effect.provide(layer))
      })
    )

    it.effect(`${name}: bad options and texts a store cannot hold are VALIDATION naming the field`, () =>
      Effect.gen(function* () {
        const layer = yield* layerOf()
        yield* Effect.gen(function* () {
          const store = yield* ApprovalStore.ApprovalStore
          for (const limit of [0, 1001, 1.5, Number.NaN]) {
            const refused = failure(yield* Effect.exit(store.list({ limit })))
            assert.deepStrictEqual([refused?.category, refused?.field], ["VALIDATION", "limit"])
          }
          const nul = failure(yield* Effect.exit(store.list({ scope: { turn: "a\u0000b" } })))
          assert.deepStrictEqual([nul?.category, nul?.field], ["VALIDATION", "scope.turn"])
          const asked = failure(
            yield* Effect.exit(
              store.request(binding("support", "A-1"), "why", undefined, { agents: ["ok", "x\ud800"] })
            )
          )
          assert.deepStrictEqual([asked?.category, asked?.field], ["VALIDATION", "agents.1"])
        }).pipe(Effect.provide(layer))
      })
    )
  }
})
