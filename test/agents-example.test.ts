/**
 * examples/agents.ts, run twice on one SQLite file: the first run hands a customer off to billing and runs a
 * research turn whose inner agent's approval surfaces with its path and is resumed (the protected tool once);
 * the second run goes on with the thread the first one kept, and the model sees its history.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)

describe("examples: agents", () => {
  it("agents.ts: a handoff, two agents as actions with a nested approval, a thread kept in SQLite across two runs", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rolecraft-agents-example-"))
    try {
      const node = () =>
        run(process.execPath, ["--conditions=@rolecraft/source", "examples/agents.ts"], {
          cwd: new URL("..", import.meta.url).pathname,
          env: { ...process.env, ROLECRAFT_THREADS_DB: join(folder, "threads.db") }
        })
      const first = await node()
      assert.deepStrictEqual(first.stdout.trim().split("\n"), [
        "thread lisbon-trip: new",
        "triage -> answered by billing: The second charge is a hold; it drops within three days.",
        'research paused: call_3/call_4 book({"hotel":"Avenida","nights":2}) via research > booker: Bookings cost money',
        "research -> The Avenida at 140 a night; I booked 2 nights from 2 March.",
        "book ran 1 time",
        "tokens: 930 in all (scout 91, booker 183, research 656)",
        "thread lisbon-trip: 1 exchange(s) kept; run the program again to go on"
      ])
      const second = await node()
      assert.deepStrictEqual(second.stdout.trim().split("\n"), [
        "thread lisbon-trip: 1 exchange(s) kept from an earlier run",
        "research (later run) -> 2 nights at 140 a night: 280 for the stay at the Avenida.",
        "the model saw 8 messages: the system message, the thread's, and the new question"
      ])
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }, 60_000)
})
