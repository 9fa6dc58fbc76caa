/**
 * The thread store's contract, run on all three layers (memory, a SQLite file, SQL on the test run's Postgres):
 * what a hold writes takes effect only when its body succeeds; a second hold of the same thread waits for the
 * first (no update is lost) and fails TRANSIENT naming the thread past its wait; the store boundary (C52-style
 * hostile thread ids are VALIDATION naming `thread`, any message text is kept exactly, a row that does not decode
 * is EXECUTION naming the field); SQL run by a hold's body is not part of the store's transaction.
 */
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type * as Prompt from "../src/Prompt.ts"
import type * as StoreBoundary from "../src/StoreBoundary.ts"
import * as ThreadStore from "../src/ThreadStore.ts"
import { fresh, pg, tempDir, threadStores } from "./support/Stores.ts"

const layers = threadStores

const exchange = (n: number): ReadonlyArray<Prompt.Message> => [
  { role: "user", content: `question ${n}` },
  { role: "assistant", content: "", toolCalls: [{ id: `call_${n}`, name: "ping", arguments: "{}" }] },
  { role: "tool", toolCallId: `call_${n}`, content: "pong" },
  { role: "assistant", content: `answer ${n}` }
]

/** Appends one exchange to a held thread. */
const append = (held: ThreadStore.Held, messages: ReadonlyArray<Prompt.Message>) =>
  held.write({
    exchange: { seq: held.head.exchanges + 1, messages },
    summary: held.head.summary,
    paused: undefined
  })

const storeError = (error: unknown): StoreBoundary.StoreError => {
  assert.strictEqual((error as { readonly _tag?: unknown })._tag, "StoreError", String(error))
  return error as StoreBoundary.StoreError
}

for (const [name, layer] of layers) {
  describe(`ThreadStore (${name})`, () => {
    it.effect("a thread never written is empty", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("empty")
        assert.deepStrictEqual(yield* store.read(id), {
          id,
          messages: [],
          exchanges: 0,
          summary: undefined,
          paused: undefined
        })
      }).pipe(Effect.provide(layer()))
    )

    it.effect("exchanges written by holds are read back in order, with their tokens and call ids", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("order")
        for (const n of [1, 2, 3]) yield* store.hold(id, (held) => append(held, exchange(n)))
        const thread = yield* store.read(id)
        assert.strictEqual(thread.exchanges, 3)
        assert.deepStrictEqual(thread.messages, [...exchange(1), ...exchange(2), ...exchange(3)])
        const index = yield* store.hold(id, (held) => held.index)
        assert.deepStrictEqual(
          index.map((entry) => [entry.seq, entry.callIds]),
          [
            [1, ["call_1"]],
            [2, ["call_2"]],
            [3, ["call_3"]]
          ]
        )
        // Per message ⌈characters / 4⌉ + 4 (History.estimateTokens): "question 1" 7, the call (id, name,
        // arguments: 12 characters) 7, its answer (text and id: 10) 7, "answer 1" 6.
        assert.deepStrictEqual(
          index.map((entry) => entry.tokens),
          [27, 27, 27]
        )
        const middle = yield* store.hold(id, (held) => held.exchanges(2, 2))
        assert.deepStrictEqual(
          middle.map((row) => row.messages),
          [exchange(2)]
        )
      }).pipe(Effect.provide(layer()))
    )

    it.effect("an exchange written again under its number replaces it; delete removes the thread", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("replace")
        yield* store.hold(id, (held) => append(held, exchange(1)))
        yield* store.hold(id, (held) =>
          held.write({ exchange: { seq: 1, messages: exchange(9) }, summary: undefined, paused: undefined })
        )
        assert.deepStrictEqual((yield* store.read(id)).messages, exchange(9))
        yield* store.delete(id)
        assert.deepStrictEqual((yield* store.read(id)).exchanges, 0)
        assert.deepStrictEqual((yield* store.read(id)).messages, [])
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a hold whose body fails writes nothing, and its error comes out as it was", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("fails")
        yield* store.hold(id, (held) => append(held, exchange(1)))
        const error = yield* Effect.flip(
          store.hold(id, (held) => Effect.andThen(append(held, exchange(2)), Effect.fail("the turn failed" as const)))
        )
        assert.strictEqual(error, "the turn failed")
        assert.deepStrictEqual((yield* store.read(id)).messages, exchange(1))
      }).pipe(Effect.provide(layer()))
    )

    it.live("a hold interrupted after writing writes nothing and lets go of the thread", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("interrupted")
        const wrote = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          store.hold(id, (held) =>
            Effect.andThen(append(held, exchange(1)), Effect.andThen(Deferred.succeed(wrote, undefined), Effect.never))
          )
        )
        yield* Deferred.await(wrote)
        yield* Fiber.interrupt(fiber)
        assert.strictEqual((yield* store.read(id)).exchanges, 0)
        // The next hold gets the thread at once.
        yield* store.hold(id, (held) => append(held, exchange(2)), { wait: "5 seconds" })
        assert.deepStrictEqual((yield* store.read(id)).messages, exchange(2))
      }).pipe(Effect.provide(layer()))
    )

    it.live("holds of one thread run one at a time: eight concurrent appends lose none", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("serial")
        // Each reads the thread, lets the others run, then appends after what it read: without the lock, several
        // would write the same number.
        yield* Effect.forEach(
          [1, 2, 3, 4, 5, 6, 7, 8],
          (n) => store.hold(id, (held) => Effect.andThen(Effect.sleep("5 millis"), append(held, exchange(n)))),
          { concurrency: "unbounded" }
        )
        const thread = yield* store.read(id)
        assert.strictEqual(thread.exchanges, 8)
        assert.strictEqual(thread.messages.length, 32)
        assert.deepStrictEqual(
          thread.messages
            .filter((message) => message.role === "user")
            .map((message) => message.content)
            .sort(),
          [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `question ${n}`)
        )
      }).pipe(Effect.provide(layer()))
    )

    it.live("a hold that waits past its wait fails TRANSIENT naming the thread; the holder goes on", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.ThreadStore
        const id = fresh("busy")
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(
          store.hold(id, (held) =>
            Effect.andThen(
              Deferred.succeed(holding, undefined),
              Effect.andThen(Deferred.await(release), append(held, exchange(1)))
            )
          )
        )
        yield* Deferred.await(holding)
        const error = storeError(
          yield* Effect.flip(store.hold(id, (held) => append(held, exchange(2)), { wait: "100 millis" }))
        )
        assert.strictEqual(error.category, "TRANSIENT")
        assert.isTrue(error.retryable)
        assert.include(error.message, `thread ${JSON.stringify(id)} is held by another turn; waited 100 ms`)
        // A thread of another turn: SQLite locks the whole file, the others only the thread.
        const other = yield* Effect.exit(
          store.hold(fresh("other"), (held) => append(held, exchange(3)), { wait: "100 millis" })
        )
        assert.strictEqual(Exit.isSuccess(other), name !== "sqlite file", String(other))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        assert.deepStrictEqual((yield* store.read(id)).messages, exchange(1))
      }).pipe(Effect.provide(layer()))
    )

    describe("the store boundary", () => {
      const hostile: ReadonlyArray<readonly [string, string]> = [
        ["a NUL", "no\u0000pe"],
        ["a lone high surrogate", "s\uD800x"],
        ["a lone low surrogate", "s\uDC00x"],
        ["a reversed pair", "\uDC00\uD800"],
        ["1,025 characters", "x".repeat(1025)]
      ]
      for (const [what, text] of hostile) {
        it.effect(`a thread id with ${what} is VALIDATION naming thread; nothing is read or written`, () =>
          Effect.gen(function* () {
            const store = yield* ThreadStore.ThreadStore
            let ran = false
            for (const operation of [
              store.read(text),
              store.delete(text),
              store.hold(text, () => Effect.sync(() => (ran = true)))
            ]) {
              const error = storeError(yield* Effect.flip(operation))
              assert.strictEqual(error.category, "VALIDATION")
              assert.strictEqual(error.field, "thread")
              assert.notInclude(error.message, text)
            }
            assert.isFalse(ran)
          }).pipe(Effect.provide(layer()))
        )
      }

      it.effect("any text a user or a model sends is kept exactly (NUL, lone surrogates, a reversed pair)", () =>
        Effect.gen(function* () {
          const store = yield* ThreadStore.ThreadStore
          const id = fresh("texts")
          const messages: ReadonlyArray<Prompt.Message> = [
            { role: "user", content: "a\u0000b \uD800 \uDC00 \uDC00\uD800 é 😀" },
            { role: "assistant", content: "\u0000" }
          ]
          yield* store.hold(id, (held) => append(held, messages))
          assert.deepStrictEqual((yield* store.read(id)).messages, messages)
        }).pipe(Effect.provide(layer()))
      )
    })
  })
}

describe("ThreadStore: rows that do not decode are EXECUTION naming the store, thread, row and field", () => {
  const corrupt: ReadonlyArray<readonly [string, string, string]> = [
    ["messages that are not JSON", "UPDATE rolecraft_thread_exchanges SET messages = 'not json'", "messages"],
    [
      "a message of no known role",
      `UPDATE rolecraft_thread_exchanges SET messages = '[{"role":"robot","content":""}]'`,
      "messages[0]"
    ],
    ["call ids that are not a list", "UPDATE rolecraft_thread_exchanges SET call_ids = '{}'", "call_ids"],
    ["a paused turn that does not decode", `UPDATE rolecraft_threads SET paused = '{"version":2}'`, "version"]
  ]
  for (const [what, statement, field] of corrupt) {
    it.effect(`sqlite: ${what}`, () =>
      Effect.gen(function* () {
        const filename = join(tempDir(), "threads.db")
        const written = Effect.gen(function* () {
          const store = yield* ThreadStore.ThreadStore
          yield* store.hold("t", (held) => append(held, exchange(1)))
        }).pipe(Effect.provide(ThreadStore.layerSqlite({ filename })))
        yield* written
        const database = new DatabaseSync(filename)
        database.exec(statement)
        database.close()
        const error = storeError(
          yield* Effect.flip(
            Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read("t")).pipe(
              Effect.provide(ThreadStore.layerSqlite({ filename }))
            )
          )
        )
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "the thread store (SQLite)")
        assert.include(error.message, 'thread "t"')
        assert.strictEqual(error.field?.startsWith(field), true, `${error.field} ${error.message}`)
      })
    )
  }

  it.effect("sql on postgres: messages that are not JSON", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.ThreadStore
      const id = fresh("corrupt")
      yield* store.hold(id, (held) => append(held, exchange(1)))
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE rolecraft_thread_exchanges SET messages = 'not json' WHERE thread_id = ${id}`
      const error = storeError(yield* Effect.flip(store.read(id)))
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "the thread store (SQL)")
      assert.strictEqual(error.field, "messages")
    }).pipe(Effect.provide(Layer.provideMerge(ThreadStore.layerSql, pg())))
  )
})

describe("ThreadStore: sql on postgres", () => {
  it.effect("SQL a hold's body runs goes through the pool, not the store's transaction", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.ThreadStore
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE IF NOT EXISTS thread_test_side_effects (id TEXT PRIMARY KEY)`
      const id = fresh("outside")
      // The body's own insert commits by itself; the store's write rolls back with the failed body.
      yield* Effect.flip(
        store.hold(id, (held) =>
          Effect.andThen(
            Effect.andThen(sql`INSERT INTO thread_test_side_effects (id) VALUES (${id})`, append(held, exchange(1))),
            Effect.fail("failed")
          )
        )
      )
      const rows = yield* sql<{ readonly id: string }>`SELECT id FROM thread_test_side_effects WHERE id = ${id}`
      assert.deepStrictEqual(
        rows.map((row) => row.id),
        [id]
      )
      assert.strictEqual((yield* store.read(id)).exchanges, 0)
    }).pipe(Effect.provide(Layer.provideMerge(ThreadStore.layerSql, pg())))
  )

  it.effect("a hold inside the caller's own transaction still takes a transaction of its own", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.ThreadStore
      const sql = yield* SqlClient.SqlClient
      const id = fresh("nested")
      // The caller's transaction fails after the hold: the thread keeps what the hold wrote.
      yield* Effect.flip(
        sql.withTransaction(
          Effect.andThen(
            store.hold(id, (held) => append(held, exchange(1))),
            Effect.fail("later")
          )
        )
      )
      assert.strictEqual((yield* store.read(id)).exchanges, 1)
    }).pipe(Effect.provide(Layer.provideMerge(ThreadStore.layerSql, pg())))
  )
})
