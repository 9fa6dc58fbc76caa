// examples/durable/main.ts: a turn paused in one process is finished in another, on the test run's Postgres.
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { postgresUrl } from "../setup/postgresUrl.ts"

const run = promisify(execFile)

describe("examples: durable", () => {
  it("durable/main.ts: pauses in one process, the refund runs once in the other, the turn completes there", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=@rolecraft/source", "examples/durable/main.ts"], {
      cwd: new URL("../..", import.meta.url).pathname,
      env: { ...process.env, ROLECRAFT_PG_URL: postgresUrl() }
    })
    const pid = (pattern: RegExp) => stdout.match(pattern)?.[1]
    const paused = pid(/\[pid (\d+)\] paused: refund\(\{"order":"order-42"\}\) needs approval: Refunds move money/)
    const finisher = pid(/\[pid (\d+)\] found the paused run; alice approves call_1/)
    assert.isDefined(paused, stdout)
    assert.isDefined(finisher, stdout)
    assert.notStrictEqual(paused, finisher)
    assert.strictEqual(stdout.match(/refund order-42 runs/g)?.length, 1)
    assert.include(stdout, `[pid ${finisher}] refund order-42 runs`)
    assert.include(stdout, `[pid ${finisher}] done: Order-42 is refunded.`)
  }, 60_000)
})
