/**
 * What the stores keep (case C93), on real SQLite files read back as bytes:
 *
 * - a thread's rows pass the redaction boundary: a secret the model quoted in a call's arguments is kept as
 *   `[REDACTED]`; a turn that would pause on a call whose arguments hold a secret is refused naming the call,
 *   and nothing is stored;
 * - a thread store and an approval store on one SQLite file are refused when the layers are built, naming the
 *   file (one file for both deadlocks a gated call);
 * - the empty thread id is VALIDATION naming `thread`.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, ApprovalStore, Chat, Role, ThreadStore } from "@rolecraft/core"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ScriptedModel } from "@rolecraft/testing"
import { ConfigProvider, Effect, Exit, Layer, Schema } from "effect"
import * as Exits from "./support/exits.ts"

const threadKey = "tk-THREAD/key+of=the-desk-9"

const databaseText = (folder: string): string =>
  readdirSync(folder)
    .map((name) => readFileSync(join(folder, name)).toString("latin1"))
    .join("\n")

const makeAgent = Effect.gen(function* () {
  const paid: Array<string> = []
  const role = Role.make({
    identity: { name: "desk", goal: "Pay", domain: "money" },
    actions: {
      pay: Action.local({
        description: "Pay an account",
        parameters: { to: Schema.String, memo: Schema.String },
        run: ({ to }) => {
          paid.push(to)
          return `paid ${to}`
        }
      }).pipe(Action.requireApproval({ reason: "Moves money" })),
      note: Action.local({ description: "Note", parameters: { memo: Schema.String }, run: () => "noted" }),
      // The key is a credential of the agent.
      keyed: Action.webService({
        description: "Keyed",
        parameters: {},
        endpoint: "http://127.0.0.1:9/keyed",
        auth: "BEARER",
        authTokenEnv: "THREAD_KEY"
      })
    }
  })
  return { agent: yield* Agent.make({ id: "desk", roles: [role] }), paid }
})

const withKey = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { THREAD_KEY: threadKey } })),
    Effect.provide(NodeHttpClient.layerUndici)
  )

describe("C93: what the thread store keeps", () => {
  it.live("a secret the model quoted in a call's arguments is kept redacted in the thread's rows", () =>
    Effect.gen(function* () {
      const folder = mkdtempSync(join(tmpdir(), "rolecraft-c93-"))
      const model = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "c1", name: "note", arguments: { memo: `key ${threadKey}` } }]),
        ScriptedModel.reply("Noted.")
      ])
      const kept = yield* Effect.gen(function* () {
        const { agent } = yield* makeAgent
        const result = yield* agent.chat("note my key", { thread: "steal" }).pipe(Effect.provide(model.layer))
        assert.strictEqual(result._tag, "Completed")
        return yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read("steal"))
      }).pipe(withKey, Effect.provide(ThreadStore.layerSqlite({ filename: join(folder, "threads.db") })))
      assert.include(JSON.stringify(kept.messages), "key [REDACTED]")
      assert.deepStrictEqual(Exits.leaks({ "thread rows": databaseText(folder) }, [threadKey]), [])
    })
  )

  it.live("a turn pausing on a call whose arguments hold a secret is refused naming the call; nothing is kept", () =>
    Effect.gen(function* () {
      const folder = mkdtempSync(join(tmpdir(), "rolecraft-c93-"))
      const model = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "c1", name: "pay", arguments: { to: "acct-7", memo: `key ${threadKey}` } }])
      ])
      const { error, paid, thread } = yield* Effect.gen(function* () {
        const { agent, paid } = yield* makeAgent
        const error = yield* Effect.flip(
          agent.chat("pay acct-7", { thread: "steal" }).pipe(Effect.provide(model.layer))
        )
        const thread = yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read("steal"))
        return { error, paid, thread }
      }).pipe(withKey, Effect.provide(ThreadStore.layerSqlite({ filename: join(folder, "threads.db") })))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "pay")
      assert.include(error.message, "secret")
      assert.notInclude(error.message, threadKey)
      assert.deepStrictEqual(paid, [])
      assert.strictEqual(thread.exchanges, 0)
      assert.deepStrictEqual(Exits.leaks({ "thread rows": databaseText(folder) }, [threadKey]), [])
    })
  )

  it.live("a turn pausing on a call without a secret still pauses and resumes from its thread", () =>
    Effect.gen(function* () {
      const folder = mkdtempSync(join(tmpdir(), "rolecraft-c93-"))
      const model = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ id: "c1", name: "pay", arguments: { to: "acct-9", memo: "rent" } }]),
        ScriptedModel.reply("Paid.")
      ])
      const paid = yield* Effect.gen(function* () {
        const { agent, paid } = yield* makeAgent
        const paused = yield* agent.chat("pay rent", { thread: "rent" }).pipe(Effect.provide(model.layer))
        assert.strictEqual(paused._tag, "AwaitingApproval")
        if (paused._tag !== "AwaitingApproval") return paid
        const done = yield* agent
          .resume(paused.state, { c1: Chat.approve("owner") }, { thread: "rent" })
          .pipe(Effect.provide(model.layer))
        assert.strictEqual(done._tag, "Completed")
        return paid
      }).pipe(withKey, Effect.provide(ThreadStore.layerSqlite({ filename: join(folder, "threads.db") })))
      assert.deepStrictEqual(paid, ["acct-9"])
    })
  )

  it.effect("the empty thread id is VALIDATION naming thread, for the store and for a turn", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.ThreadStore
      const refused = yield* Effect.flip(store.read(""))
      assert.strictEqual(refused.category, "VALIDATION")
      assert.strictEqual(refused.field, "thread")
      const { agent } = yield* makeAgent
      const model = yield* ScriptedModel.make([ScriptedModel.reply("hi")])
      const error = yield* Effect.flip(agent.chat("hello", { thread: "" }).pipe(Effect.provide(model.layer)))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "thread")
    }).pipe(Effect.provide(ThreadStore.layerMemory), Effect.provide(NodeHttpClient.layerUndici))
  )
})

describe("C93: two stores on one SQLite file", () => {
  for (const order of ["threads first", "approvals first"] as const) {
    it.live(`are refused when the layers are built, naming the file (${order})`, () =>
      Effect.gen(function* () {
        const filename = join(mkdtempSync(join(tmpdir(), "rolecraft-c93-")), "one.db")
        const threads = ThreadStore.layerSqlite({ filename })
        const approvals = ApprovalStore.layerSqlite({ filename, busyTimeout: 3000 })
        const both = order === "threads first" ? Layer.merge(threads, approvals) : Layer.merge(approvals, threads)
        const error = yield* Effect.flip(Effect.scoped(Layer.build(both)))
        assert.strictEqual(error._tag, "StoreError")
        assert.strictEqual(error.category, "VALIDATION")
        assert.include(error.message, filename)
        // Each on a file of its own is fine, and one kind of store may share a file with itself.
        const own = Layer.mergeAll(
          ThreadStore.layerSqlite({ filename }),
          ApprovalStore.layerSqlite({ filename: `${filename}.approvals` })
        )
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(Effect.scoped(Layer.build(own)))))
      })
    )
  }
})
