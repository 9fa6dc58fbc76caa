/**
 * Smoke tests for the benchmarks: each framework's chat scenarios run once,
 * so a broken peer set-up (a renamed export, a changed model boundary, a
 * tool that no longer runs) fails CI. Nothing here is timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chatSection, combineResults, constantGrowth, type Memory, type PeerResult, peers, turns } from "../chat.ts"
import {
  compare,
  compareAsync,
  type Figures,
  metInEvery,
  percentile,
  ratioOf,
  spreadAcross,
  summarize
} from "../measure.ts"
import { passesTargetsTable, ratioTarget, type Section } from "../report.ts"
import {
  counter,
  deltaCounter,
  finalText,
  nextMove,
  promptFor,
  streamDeltas,
  streamPieces,
  toolCallsIn
} from "../peers/scenario.ts"

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

describe("each framework's streamed turn runs and hands every delta to the caller", () => {
  const streamPeers = {
    rolecraft: () => import("../peers/rolecraft.ts"),
    "ai-sdk": () => import("../peers/ai-sdk.ts"),
    "openai-agents": () => import("../peers/openai-agents.ts")
  }
  for (const [peer, load] of Object.entries(streamPeers)) {
    it(`${peer}: the first delta is reported once and all ${streamDeltas} deltas join to the answer`, async () => {
      const { streamed } = await load()
      let firsts = 0
      await streamed.run(() => {
        firsts += 1
      })
      assert.strictEqual(firsts, 1)
    })
  }

  it("the delta counter rejects a run that lost a delta", () => {
    const deltas = deltaCounter("test", () => {})
    for (const piece of streamPieces.slice(1)) deltas.delta(piece)
    assert.throws(() => deltas.expect(), /99 deltas, expected 100/)
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
    const [met] = chatSection([result("rolecraft", "Rolecraft", 80), ...alternatives]).targets
    assert.strictEqual(met?.met, true)
    assert.include(met?.measured, "Vercel AI SDK")
    const [missed] = chatSection([result("rolecraft", "Rolecraft", 200), ...alternatives]).targets
    assert.strictEqual(missed?.met, false)
    // a run of some alternatives only (node bench/chat.ts ai-sdk langchain) measures no target
    const [unmeasured] = chatSection(alternatives).targets
    assert.strictEqual(unmeasured?.met, undefined)
    assert.strictEqual(unmeasured?.measured, "not measured")
  })

  it("samples are split into rounds: every contender's round, round-robin, before the next round", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const calls: Array<string> = []
        const contender = (name: string) => ({ name, call: () => Effect.sync(() => calls.push(name)) })
        const rows = yield* compare([contender("a"), contender("b")], { warmup: 0, samples: 4, batch: 1, rounds: 2 })
        assert.deepStrictEqual(
          rows.map((row) => [row.samples, row.rounds.length]),
          [
            [4, 2],
            [4, 2]
          ]
        )
        assert.strictEqual(calls.join(""), "abab".repeat(2))
      })
    ))

  const figures = (medianUs: number, rounds: ReadonlyArray<number>): Figures => ({
    name: "row",
    medianUs,
    p95Us: medianUs,
    samples: rounds.length,
    rounds
  })

  it("a ratio is read per round, and a target is met only when every round meets it", () => {
    const ratio = ratioOf(figures(110, [100, 110, 130]), figures(100, [100, 100, 100]))
    assert.deepStrictEqual([ratio.value, ratio.min, ratio.max], [1.1, 1, 1.3])
    assert.isTrue(metInEvery(ratio, 1.3))
    assert.isFalse(metInEvery(ratio, 1.2))
    // the overall median alone would pass: one slow round still misses
    assert.isFalse(ratioTarget("x", 1.15, "base", figures(110, [100, 110, 130]), figures(100, [100, 100, 100])).met)
    assert.isFalse(metInEvery(ratioOf(figures(1, []), figures(1, [])), 2))
    const overhead = spreadAcross([figures(12, [12, 14]), figures(2, [2, 2]), figures(10, [10, 8])], ([a, b, c]) =>
      a === undefined || b === undefined || c === undefined ? Number.NaN : (a - b) / c
    )
    assert.deepStrictEqual(overhead.rounds, [1, 1.5])
  })

  it("the targets of both passes meet only when every pass meets them", () => {
    const section = (met: boolean): Section => ({
      title: "s",
      description: "",
      tables: [],
      targets: [{ name: "t", limit: "≤ 1×", measured: met ? "0.9×" : "1.2×", met }],
      notes: []
    })
    const table = passesTargetsTable([
      { name: "quiet", sections: [section(true)] },
      { name: "loaded", sections: [section(false)] }
    ])
    assert.deepStrictEqual(table.rows, [["t", "≤ 1×", "0.9×", "1.2×", "MISSED (loaded)"]])
    assert.strictEqual(passesTargetsTable([{ name: "quiet", sections: [section(true)] }]).rows[0]?.at(-1), "met")
  })

  it("a chat target is read against each round's fastest alternative", () => {
    const result = (peer: PeerResult["peer"], rounds: ReadonlyArray<number>): PeerResult => {
      const runs = rounds.map((value) => figures(value, [value]))
      return combineResults(
        runs.map((run) => ({ peer, name: peer, toolCallRun: run, singleTurn: run, multiTurn: run }))
      )
    }
    // round 3's fastest alternative is LangChain: Rolecraft's 30 is 0.5× of it
    const [target] = chatSection([
      result("rolecraft", [25, 25, 30]),
      result("ai-sdk", [100, 100, 100]),
      result("langchain", [200, 200, 60])
    ]).targets
    assert.isFalse(target?.met)
    assert.include(target?.measured, "(0.25×–0.50×)")
  })
})
