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

const alternatives = ["ai-sdk", "openai-agents", "langchain"] as const

describe("each alternative's chat scenarios run and run the tool", () => {
  for (const peer of alternatives) {
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

describe("the Rolecraft chat scenarios", () => {
  it("run through agent.chat, each checking the tool's count and the final text", async () => {
    const module = await peers.rolecraft()
    assert.isUndefined(module.unavailable)
    await module.scenarios.toolCallRun()
    await module.scenarios.singleTurn()
    const seen: Array<number> = []
    await module.scenarios.multiTurn(3, (turn) => seen.push(turn))
    assert.deepStrictEqual(seen, [1, 2, 3])
  })
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
    assert.deepStrictEqual(summarize("x", values), { name: "x", medianUs: 51, p95Us: 96, samples: 100 })
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
    const figures = (medianUs: number) => ({ name: "tool-call run", medianUs, p95Us: medianUs, samples: 1 })
    const results: ReadonlyArray<PeerResult> = [
      { peer: "rolecraft", name: "Rolecraft", toolCallRun: figures(100) },
      { peer: "ai-sdk", name: "Vercel AI SDK", toolCallRun: figures(300) },
      { peer: "langchain", name: "LangChain.js", toolCallRun: figures(2000) }
    ]
    const [toolCall] = chatSection(results).targets
    assert.strictEqual(toolCall?.met, true)
    assert.include(toolCall?.measured, "Vercel AI SDK")
    const without = chatSection([
      { peer: "rolecraft", name: "Rolecraft", unavailable: "agent.chat is missing" },
      ...results.slice(1)
    ])
    assert.strictEqual(without.targets[0]?.met, undefined)
  })
})
