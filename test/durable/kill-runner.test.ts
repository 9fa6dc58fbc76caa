// The multi-process proof on a real Postgres: two runner processes and client processes (./process.ts); every turn
// pauses on an approval-gated tool; one runner is killed with SIGKILL while all are paused; a client approves every
// run. All complete on the surviving runner, with exactly two model calls per turn and no tool run twice.
// CI runs 30 turns to stay well inside the time budget on a shared 2-core machine; `node bench/durable.ts`
// (bench/durable.ts) runs the same proof with 200 and prints the takeover times.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { freshDatabase } from "../setup/postgresUrl.ts"
import { killOneRunner } from "./harness.ts"

const turns = 30

describe("durable runs across processes", () => {
  it(`kill -9 of one of two runners with ${turns} paused runs: the other finishes all, no model call or tool run repeated`, async () => {
    const url = await Effect.runPromise(freshDatabase("durable_kill"))
    const figures = await killOneRunner(url, turns)
    const context = figures.logs.slice(-4000)
    expect(figures.completed, context).toBe(turns)
    expect(figures.modelCalls, context).toBe(2 * turns)
    expect(figures.toolRuns, context).toBe(turns)
    expect(figures.duplicateToolRuns).toBe(0)
    expect(figures.keyedToolRuns).toBe(turns)
    // The killed runner held some of the paused runs: they finished elsewhere (a takeover happened).
    expect(figures.takeoverMs.length).toBeGreaterThan(0)
    expect(figures.takeoverMs.length + figures.survivorMs.length).toBe(turns)
  }, 180_000)
})
