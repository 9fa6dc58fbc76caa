import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples: policies", () => {
  it("local-actions.ts: book needs an approved token, once, for its own arguments; charge is guarded and contracted", async () => {
    const { stdout } = await node("examples/local-actions.ts")
    const lines = [
      "book without a token -> APPROVAL (missing): book requires approval (Books and charges a hotel): no approval token was given",
      "alice approves the pending token -> approved",
      'book with the approved token -> "booked h-42 from 2026-11-02"',
      "book again with the same token -> APPROVAL (used): book requires approval (Books and charges a hotel): the approval token has already been used",
      "book with another date on an approved token -> APPROVAL (arguments): book requires approval (Books and charges a hotel): the approval token was issued for other arguments",
      'charge(400, "hote…") -> {"charged":400,"left":600}',
      'charge(50, "card…") -> GUARDRAIL: charge: input guardrail: memo matches the blocked pattern /\\b\\d{13,16}\\b/',
      'charge(700, "flig…") -> CONTRACT: charge: precondition failed: the amount fits the budget',
      'charge(600, "flig…") -> {"charged":600,"left":0}'
    ]
    for (const line of lines) assert.include(stdout, line)
    assert.notInclude(stdout, "4111111111111111")
  })
})
