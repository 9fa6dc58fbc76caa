/**
 * The bench harness: an interrupted run leaves nothing running (a real
 * process tree, a real SIGINT and SIGTERM), the model gate the cost curves
 * read the heap behind holds every framework's turns, and the curves'
 * section and SVGs say what was measured. Nothing here is timed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { type CurveResult, concurrency, curvesSection } from "../curves.ts"
import { peers } from "../chat.ts"
import { holdAtModel } from "../peers/scenario.ts"
import { svgOf } from "../plot.ts"

const cleanupModule = new URL("../cleanup.ts", import.meta.url).href

/**
 * A stand-in for `run.ts`: registers a section started in its own process
 * group (the section starts a grandchild of its own, as the sections start
 * servers and runners), prints both pids, then waits to be interrupted.
 */
const parentProgram = `
import { spawn } from "node:child_process"
import { ownGroup } from ${JSON.stringify(cleanupModule)}
const section = spawn(process.execPath, ["-e", ${JSON.stringify(
  'const g = require("node:child_process").spawn("sleep", ["300"], { stdio: "ignore" }); console.log(g.pid); setInterval(() => {}, 1000)'
)}], { detached: true, stdio: ["ignore", "pipe", "inherit"] })
ownGroup(section)
section.stdout.setEncoding("utf8")
section.stdout.once("data", (line) => console.log(JSON.stringify({ section: section.pid, grandchild: Number(line.trim()) })))
setInterval(() => {}, 1000)
`

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const firstLine = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = ""
    child.stdout?.setEncoding("utf8")
    child.stdout?.on("data", (chunk: string) => {
      text += chunk
      const end = text.indexOf("\n")
      if (end !== -1) resolve(text.slice(0, end))
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing: ${text}`)))
  })

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

/** Waits (polling, no wall-clock bound on the verdict) until `pid` is gone or `tries` polls pass. */
const gone = async (pid: number, tries = 200): Promise<boolean> => {
  for (let i = 0; i < tries; i++) {
    if (!alive(pid)) return true
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return !alive(pid)
}

describe("an interrupted bench run stops what it started", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143]
  ] as const) {
    it(`${signal}: the section's process group (section and grandchild) is killed, and the run exits ${code}`, async () => {
      const parent = spawn(process.execPath, ["--input-type=module", "-e", parentProgram], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      try {
        const pids = JSON.parse(await firstLine(parent)) as { section: number; grandchild: number }
        assert.isTrue(alive(pids.section) && alive(pids.grandchild), "both started")
        parent.kill(signal)
        assert.strictEqual(await exited(parent), code)
        assert.isTrue(await gone(pids.section), "the section is gone")
        assert.isTrue(await gone(pids.grandchild), "what the section started is gone")
      } finally {
        if (parent.exitCode === null) parent.kill("SIGKILL")
      }
    })
  }
})

describe("the model gate holds every framework's concurrent turns", () => {
  for (const peer of Object.keys(peers) as ReadonlyArray<keyof typeof peers>) {
    it(`${peer}: 5 turns wait at the model until released, then all complete with the tool run 5 times`, async () => {
      const { scenarios } = await peers[peer]()
      const gate = holdAtModel(5)
      let finished = false
      const running = scenarios.concurrent(5).then(() => {
        finished = true
      })
      await gate.arrived
      assert.isFalse(finished, "no turn finishes while the gate is held")
      gate.release()
      await running
      assert.isTrue(finished)
      // and without a gate the models answer at once
      await scenarios.concurrent(3)
    })
  }
})

const point = (turns: number, turnsPerSecond: number, heapPerTurn: number) => ({ turns, turnsPerSecond, heapPerTurn })
const result = (peer: CurveResult["peer"], name: string, rate: number, heap: number): CurveResult => ({
  peer,
  name,
  chat: concurrency.map((n) => point(n, rate, heap)),
  streamed: concurrency.map((n) => point(n, rate / 2, heap * 2))
})

describe("the cost curves' section", () => {
  it("reads the 1,000-turn targets against the best alternative, round by round", () => {
    const round = (rate: number, heap: number) => [
      result("rolecraft", "Rolecraft", rate, heap),
      result("ai-sdk", "Vercel AI SDK", 1000, 40_000),
      result("langchain", "LangChain.js", 100, 30_000)
    ]
    const met = curvesSection([round(2500, 10_000), round(2100, 14_000)])
    assert.deepStrictEqual(
      met.targets.map((target) => target.met),
      [true, true, true, true]
    )
    // one round below 2× the best alternative's rate, and one above 0.5× the lowest heap: missed
    const missed = curvesSection([round(2500, 10_000), round(1900, 16_000)])
    assert.deepStrictEqual(
      missed.targets.map((target) => target.met),
      [false, false, false, false]
    )
    assert.strictEqual(met.curves?.length, 4)
  })

  it("plots every series on a log scale, one line and one dot per point", () => {
    const section = curvesSection([
      [result("rolecraft", "Rolecraft", 2000, 1000), result("ai-sdk", "Vercel AI SDK", 1000, 2000)]
    ])
    const curve = section.curves?.[0]
    assert.isDefined(curve)
    if (curve === undefined) return
    const svg = svgOf(curve)
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    assert.strictEqual(svg.match(/<polyline /g)?.length, 2)
    assert.strictEqual(svg.match(/<circle /g)?.length, 2 * concurrency.length)
    assert.include(svg, "Vercel AI SDK")
    // x: 1, 10, 100, 1,000 evenly spaced (log scale)
    const xs = [...svg.matchAll(/<circle cx="([\d.]+)"/g)].slice(0, concurrency.length).map((m) => Number(m[1]))
    const steps = xs.slice(1).map((x, i) => x - (xs[i] ?? 0))
    assert.isTrue(
      steps.every((step) => Math.abs(step - (steps[0] ?? 0)) < 0.2),
      `even steps: ${steps.join(", ")}`
    )
    assert.include(svgOf({ ...curve, title: "a < b & c" }), "a &lt; b &amp; c")
  })
})
