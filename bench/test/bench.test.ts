/**
 * Smoke tests for the benchmarks: each framework's chat scenarios run once,
 * so a broken peer set-up (a renamed export, a changed model boundary, a
 * tool that no longer runs) fails CI. Nothing here is timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Memory, chatSection, constantGrowth, type PeerResult, peers, turns } from "../chat.ts"
import { compare, compareAsync, percentile, summarize } from "../measure.ts"
import { counter, finalText, nextMove, toolCallsIn, promptFor } from "../peers/scenario.ts"

describe("each framework's chat scenarios run and run the tool", () => {
  for (const peer of Object.keys(peers) as ReadonlyArray<keyof typeof peers>) {
    it(`${peer}: one tool call, a single turn and ${turns} turns, with the tool run counted inside each`, async () => {
      const { scenarios } = await peers[peer]()
      await scenarios.toolCallRun()
      await scenarios.singleTurn()
      const seen: Array<number> = []
      await scenarios.multiTurn(turns, (turn) => seen.push(turn))
      assert.deepStrictEqual(
        seen,
        Array.from({ length: turns }, (_, i) => i + 1)
      )
      // a second run starts from a fresh count: the script depends only on the conversation
      await scenarios.toolCallRun()
    })
  }
})

describe("the scenarios' checks", () => {
  it("reject a run whose tool ran a different number of times or whose answer did not arrive", () => {
    const weather = counter("test")
    weather.reset()
    assert.throws(() => weather.expect("toolCallRun", 1, finalText), /ran 0 times, expected 1/)
    weather.reset()
    weather.run("Paris")
    assert.throws(() => weather.expect("toolCallRun", 1, "something else"), /final text/)
    weather.reset()
    weather.run("Paris")
    weather.expect("toolCallRun", 1, finalText)
  })

  it("the script asks for the tool until the requested count of results is in, then answers", () => {
    assert.strictEqual(toolCallsIn(promptFor(25)), 25)
    assert.strictEqual(toolCallsIn("no marker"), 0)
    assert.deepStrictEqual(nextMove(0, 2), { _tag: "CallTool", id: "call_1" })
    assert.deepStrictEqual(nextMove(1, 2), { _tag: "CallTool", id: "call_2" })
    assert.deepStrictEqual(nextMove(2, 2), { _tag: "Answer" })
  })
})

describe("the statistics and the report", () => {
  it("median and p95 are nearest-rank over the samples", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i)
    assert.deepStrictEqual(summarize("x", values), { name: "x", medianUs: 51, p95Us: 96, samples: 100, rounds: [51] })
    assert.isNaN(percentile([], 0.5))
  })

  it.effect("compare samples every contender round-robin and returns figures in order", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const contender = (name: string) => ({ name, call: () => Effect.sync(() => calls.push(name)) })
      const rows = yield* compare([contender("a"), contender("b")], { warmup: 1, samples: 3, batch: 2 })
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.samples]),
        [
          ["a", 3],
          ["b", 3]
        ]
      )
      assert.deepStrictEqual(calls.join(""), `ab${"aabb".repeat(3)}`)
    })
  )

  it("compareAsync rejects when a call rejects (a scenario failing its counter check)", async () => {
    const failing = { name: "x", call: () => Promise.reject(new Error("the tool ran 0 times, expected 1")) }
    let message = ""
    await compareAsync([failing], { warmup: 0, samples: 1, batch: 1 }).catch((error: Error) => {
      message = error.message
    })
    assert.strictEqual(message, "the tool ran 0 times, expected 1")
  })

  it("heap growth is constant when the second half grows no faster than the first (with slack)", () => {
    const memory = (early: number, late: number): Memory => ({
      perTurn: (early + late) / 2,
      early,
      late,
      repetitions: 1
    })
    assert.isTrue(constantGrowth(memory(5000, 5100)))
    assert.isFalse(constantGrowth(memory(6600, 11000)))
  })

  it("the tool-call target compares Rolecraft with the fastest alternative, and is unmeasured without it", () => {
    const figures = (medianUs: number) => ({ name: "run", medianUs, p95Us: medianUs, samples: 1, rounds: [medianUs] })
    const result = (peer: PeerResult["peer"], name: string, medianUs: number): PeerResult => ({
      peer,
      name,
      toolCallRun: figures(medianUs),
      singleTurn: figures(medianUs),
      multiTurn: figures(medianUs)
    })
    const alternatives = [result("ai-sdk", "Vercel AI SDK", 300), result("langchain", "LangChain.js", 2000)]
    const [met] = chatSection([result("rolecraft", "Rolecraft", 100), ...alternatives]).targets
    assert.strictEqual(met?.met, true)
    assert.include(met?.measured, "Vercel AI SDK")
    const [missed] = chatSection([result("rolecraft", "Rolecraft", 200), ...alternatives]).targets
    assert.strictEqual(missed?.met, false)
    // a run of some alternatives only (node bench/chat.ts ai-sdk langchain) measures no target
    const [unmeasured] = chatSection(alternatives).targets
    assert.strictEqual(unmeasured?.met, undefined)
    assert.strictEqual(unmeasured?.measured, "not measured")
  })
})
