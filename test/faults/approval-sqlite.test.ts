/**
 * The SQLite approval store under another process's locks (C37): a busy
 * database never blocks the event loop for the wait and never escapes as a
 * defect; the store waits on Effect's scheduler, bounded, then the call fails
 * TRANSIENT inside its `ActionResponse`. Four processes churning one file
 * lose no cycle.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Agent, ApprovalStore } from "@rolecraft/core"
import { Effect } from "effect"
import { bookingRole } from "../support/booking.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const fixture = (name: string) => join(root, "test/fixtures", name)
// On tmpfs where there is one: the locks are SQLite's own, the same on any file system, and a disk's fsync
// (~25 ms a write on these machines) would make the churn minutes long.
const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir()
const databaseFile = () => join(mkdtempSync(join(scratch, "rolecraft-c37-")), "approvals.db")

/** Spawns a fixture with this Node, loading the packages' sources; resolves each stdout line in turn. */
const start = (script: string, args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, ["--conditions=@rolecraft/source", fixture(script), ...args], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const lines: Array<string> = []
  const waiting: Array<(line: string) => void> = []
  createInterface({ input: child.stdout }).on("line", (line) => {
    const next = waiting.shift()
    if (next === undefined) lines.push(line)
    else next(line)
  })
  const line = () =>
    new Promise<string>((resolve) => {
      const ready = lines.shift()
      if (ready === undefined) waiting.push(resolve)
      else resolve(ready)
    })
  return { child, line }
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode === null ? child.once("exit", () => resolve()) : resolve()))

const role = bookingRole()

/** An approved token for `book`, then the call with it while another process holds the file locked. */
const bookWhileLocked = (filename: string, holdMs: number, busyTimeout?: number) =>
  Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "c37", roles: [role] })
    const first = yield* agent.execute({ action: "book", params: { hotelId: "h-1" } })
    assert.isFalse(first.success)
    const token = first.success ? "" : (first.error as { readonly pendingTokenId?: string }).pendingTokenId!
    yield* agent.approvals.approve(token, "alice")

    const locker = start("sqlite-locker.ts", [filename, String(holdMs)])
    assert.strictEqual(yield* Effect.promise(locker.line), "locked")
    // A timer that only runs if the event loop is free while the store waits for the lock.
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    const response = yield* agent.execute({ action: "book", params: { hotelId: "h-1" }, approvalToken: token })
    clearInterval(timer)
    yield* Effect.promise(() => exited(locker.child))
    return { response, ticks }
  }).pipe(Effect.provide(ApprovalStore.layerSqlite({ filename, busyTimeout })))

describe("the SQLite approval store while another process holds the database", () => {
  it.live(
    "C37: a lock held past the store's busy wait fails the call TRANSIENT (retryable) inside its ActionResponse, not a defect; timers ran meanwhile",
    () =>
      Effect.gen(function* () {
        const { response, ticks } = yield* bookWhileLocked(databaseFile(), 2_000, 300)
        assert.isFalse(response.success)
        assert.strictEqual(response.error?.category, "TRANSIENT", response.error?.message)
        assert.isTrue(response.error?.retryable)
        assert.include(response.error?.message, "locked")
        assert.isAtLeast(ticks, 5)
      })
  )

  it.live("C37: a lock released within the store's busy wait: the call goes through, and timers ran meanwhile", () =>
    Effect.gen(function* () {
      const { response, ticks } = yield* bookWhileLocked(databaseFile(), 1_000)
      assert.isTrue(response.success, response.error?.message)
      assert.strictEqual(response.value, "booked h-1")
      assert.isAtLeast(ticks, 5)
    })
  )

  it.live(
    "C37: four processes each requesting, approving and consuming tokens on one file complete every cycle",
    () =>
      Effect.gen(function* () {
        const filename = databaseFile()
        // Create the table first, so the four do not race on the schema.
        yield* Effect.provide(Effect.void, ApprovalStore.layerSqlite({ filename }))
        const cycles = 300
        const workers = Array.from({ length: 4 }, () => start("approval-churn.ts", [filename, String(cycles)]))
        const outcomes = yield* Effect.promise(() =>
          Promise.all(workers.map((worker) => worker.line().then((line) => JSON.parse(line))))
        )
        for (const outcome of outcomes as ReadonlyArray<{ completed: number; failures: ReadonlyArray<string> }>) {
          assert.deepStrictEqual(outcome.failures, [])
          assert.strictEqual(outcome.completed, cycles)
        }
      }),
    60_000
  )
})
