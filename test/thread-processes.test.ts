/**
 * Two processes on one thread (SQLite file and Postgres): each runs five turns on the same thread at the same
 * time. Turns on one thread run one after the other across processes — SQLite's `BEGIN IMMEDIATE`, Postgres's row
 * lock held for the turn — so every turn loads every exchange written before it: the tenth exchange saw nine, no
 * exchange is lost or written twice (the failure kind of concurrent sessions peers report: last-writer-wins,
 * turns acting on stale history).
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { ThreadStore } from "@rolecraft/core"
import { Effect, Layer, Redacted } from "effect"
import { freshDatabase } from "./setup/postgresUrl.ts"
import * as Seeded from "./support/seeded.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir()

/** Starts one process of the fixture; resolves when it is ready, then `run()` lets it go and waits for its line. */
const start = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly run: () => Promise<{ readonly failures: ReadonlyArray<string> }> }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@rolecraft/source", join(root, "test/fixtures/thread-turns.ts"), ...args],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    const lines = createInterface({ input: child.stdout })
    const outcome = new Promise<{ readonly failures: ReadonlyArray<string> }>((done) =>
      lines.on("line", (line) => {
        if (line === "ready") return
        done(JSON.parse(line) as { readonly failures: ReadonlyArray<string> })
      })
    )
    lines.once("line", (line) =>
      line === "ready"
        ? resolve({
            run: () => {
              child.stdin.write("go\n")
              return outcome
            }
          })
        : reject(new Error(line))
    )
    child.once("error", reject)
  })

const turns = 5

const twoProcesses = (
  kind: "sqlite" | "postgres",
  where: string,
  layer: Layer.Layer<ThreadStore.ThreadStore, unknown>
) =>
  Effect.gen(function* () {
    const thread = Seeded.unique("shared")
    const [a, b] = yield* Effect.promise(() =>
      Promise.all([start([kind, where, thread, String(turns), "a"]), start([kind, where, thread, String(turns), "b"])])
    )
    const outcomes = yield* Effect.promise(() => Promise.all([a.run(), b.run()]))
    assert.deepStrictEqual(
      outcomes.map((outcome) => outcome.failures),
      [[], []]
    )
    const kept = yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read(thread)).pipe(
      Effect.provide(layer)
    )
    assert.strictEqual(kept.exchanges, 2 * turns)
    const replies = kept.messages.filter((message) => message.role === "assistant").map((message) => message.content)
    // Each turn saw every exchange before it: 0, 1, …, 9 in the order they were written.
    assert.deepStrictEqual(
      replies.map((reply) => Number(reply.split(" saw ")[1])),
      Array.from({ length: 2 * turns }, (_, n) => n)
    )
    // Both processes took part, and every input is there once.
    const inputs = kept.messages.filter((message) => message.role === "user").map((message) => message.content)
    assert.deepStrictEqual(
      [...inputs].sort(),
      [
        ...Array.from({ length: turns }, (_, n) => `a ${n}`),
        ...Array.from({ length: turns }, (_, n) => `b ${n}`)
      ].sort()
    )
  })

describe("two processes on one thread", () => {
  it.live(
    "sqlite: turns run one after the other across processes; each loads every exchange before it",
    () => {
      const filename = join(mkdtempSync(join(scratch, "rolecraft-threads-")), "threads.db")
      return twoProcesses("sqlite", filename, ThreadStore.layerSqlite({ filename }))
    },
    60_000
  )

  it.live(
    "postgres: turns run one after the other across processes; each loads every exchange before it",
    () =>
      Effect.flatMap(freshDatabase("threads"), (url) =>
        twoProcesses("postgres", url, Layer.provide(ThreadStore.layerSql, PgClient.layer({ url: Redacted.make(url) })))
      ),
    60_000
  )
})
