/**
 * Streamed chat turns.
 *
 * 1. Each framework's streamed turn over the same fake stream, at its own
 *    model boundary (Rolecraft `agent.chatStream`, the AI SDK's
 *    `streamText(...).fullStream`, OpenAI Agents JS `run(..., { stream: true })`):
 *    the model yields 100 text deltas at once; timed are the time to the
 *    first delta reaching the caller and the whole turn, whose cost per
 *    delta is the per-event overhead. Each framework in a fresh process.
 * 2. Time to first delta over real HTTP: a raw `openai` SDK stream
 *    (`chat.completions.create({ stream: true })`) against Rolecraft's
 *    `agent.chatStream` over `@rolecraft/openai`, both against the same
 *    local `ChatCompletionsServer` streaming the same answer, sampled
 *    round-robin in one process.
 *
 * Targets (issues 13, 27): Rolecraft's time to first delta ≤ 1.2× the raw SDK
 * stream's (the aim: 1.1×); its per-event overhead ≤ 0.5× the fastest alternative's.
 *
 * Run: node bench/streaming.ts. One framework, as JSON: node bench/streaming.ts --child ai-sdk
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Agent, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Effect, Exit, ManagedRuntime, Redacted, Scope, Stream } from "effect"
import OpenAI from "openai"
import { type Figures, quickMode, summarize } from "./measure.ts"
import { type StreamScenario, streamDeltas } from "./peers/scenario.ts"
import { isMain, printSection, type Section, times, us } from "./report.ts"

const peers = {
  rolecraft: (): Promise<{ readonly streamed: StreamScenario }> => import("./peers/rolecraft.ts"),
  "ai-sdk": (): Promise<{ readonly streamed: StreamScenario }> => import("./peers/ai-sdk.ts"),
  "openai-agents": (): Promise<{ readonly streamed: StreamScenario }> => import("./peers/openai-agents.ts")
} as const

type Peer = keyof typeof peers

interface StreamFigures {
  readonly peer: string
  readonly name: string
  readonly firstDelta: Figures
  readonly turn: Figures
}

/** Warm-up runs, then up to `samples` timed runs within `budgetMs` (at least `minSamples`). */
const plan = quickMode()
  ? { warmup: 50, samples: 500, budgetMs: 600, minSamples: 20 }
  : { warmup: 200, samples: 2000, budgetMs: 3000, minSamples: 50 }

const now = (): number => performance.now()

/**
 * Samples several streamed calls round-robin; each sample is one run: the
 * time to its first delta and to its end, µs.
 */
const sample = async (
  contenders: ReadonlyArray<{ readonly name: string; readonly run: (onFirstDelta: () => void) => Promise<void> }>,
  options: typeof plan
): Promise<ReadonlyArray<{ readonly firstDelta: Figures; readonly turn: Figures }>> => {
  const firsts = contenders.map((): Array<number> => [])
  const turns = contenders.map((): Array<number> => [])
  for (const contender of contenders) for (let k = 0; k < options.warmup; k++) await contender.run(() => {})
  const deadline = now() + options.budgetMs
  for (let n = 0; n < options.samples && (n < options.minSamples || now() < deadline); n++) {
    for (const [i, contender] of contenders.entries()) {
      const start = now()
      let first = Number.NaN
      await contender.run(() => {
        first = now()
      })
      const end = now()
      firsts[i]?.push((first - start) * 1000)
      turns[i]?.push((end - start) * 1000)
    }
  }
  return contenders.map((contender, i) => ({
    firstDelta: summarize(contender.name, firsts[i] ?? []),
    turn: summarize(contender.name, turns[i] ?? [])
  }))
}

/** One framework's streamed turn, in this process. */
const measurePeer = async (peer: Peer): Promise<StreamFigures> => {
  const { streamed } = await peers[peer]()
  const [figures] = await sample([streamed], plan)
  if (figures === undefined) throw new Error(`${peer}: no figures`)
  return { peer, name: streamed.name, ...figures }
}

const run = promisify(execFile)

const measureInChild = async (peer: Peer): Promise<StreamFigures> => {
  const { stdout } = await run(process.execPath, [fileURLToPath(import.meta.url), "--child", peer], {
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024
  })
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as StreamFigures
}

// -----------------------------------------------------------------------------
// Time to first delta over the local OpenAI-compatible server.
// -----------------------------------------------------------------------------

const answer = "Hotel Lisboa has rooms at 90 euros a night, breakfast included, ten minutes from the river."

/** Raw SDK against Rolecraft over the same local server; figures in that order. */
const overHttp = async (): Promise<ReadonlyArray<{ readonly firstDelta: Figures; readonly turn: Figures }>> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const server = await Effect.runPromise(
      Scope.provide(
        ChatCompletionsServer.make(
          Array.from({ length: 2 * (plan.warmup + plan.samples) + 10 }, () =>
            ChatCompletionsServer.reply(answer, {
              usage: { prompt_tokens: 20, completion_tokens: 20, total_tokens: 40 }
            })
          )
        ),
        scope
      )
    )
    const client = new OpenAI({ apiKey: "sk-bench", baseURL: server.baseURL, maxRetries: 0, timeout: 30_000 })
    const messages = [{ role: "user" as const, content: "Find me a hotel" }]
    const raw = async (onFirstDelta: () => void): Promise<void> => {
      const stream = await client.chat.completions.create({
        model: "gpt-bench",
        messages,
        stream: true,
        stream_options: { include_usage: true }
      })
      let text = ""
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content
        if (typeof delta === "string" && delta !== "") {
          if (text === "") onFirstDelta()
          text += delta
        }
      }
      if (text !== answer) throw new Error(`raw openai stream: got ${JSON.stringify(text)}`)
    }
    const runtime = ManagedRuntime.make(
      OpenAiLanguageModel.layer({ model: "gpt-bench", apiKey: Redacted.make("sk-bench"), baseURL: server.baseURL })
    )
    const role = Role.make({ identity: { name: "concierge", goal: "Answer", domain: "travel" } })
    const agent = await runtime.runPromise(Scope.provide(Agent.make({ id: "bench", roles: [role] }), scope))
    const rolecraft = async (onFirstDelta: () => void): Promise<void> => {
      let text = ""
      await runtime.runPromise(
        Stream.runForEach(agent.chatStream("Find me a hotel", { maxSteps: 1 }), (event) =>
          Effect.sync(() => {
            if (event._tag !== "TextDelta") return
            if (text === "") onFirstDelta()
            text += event.delta
          })
        )
      )
      if (text !== answer) throw new Error(`Rolecraft stream: got ${JSON.stringify(text)}`)
    }
    const figures = await sample(
      [
        { name: "raw openai SDK stream", run: raw },
        { name: "Rolecraft agent.chatStream", run: rolecraft }
      ],
      { ...plan, warmup: 100, samples: 1000 }
    )
    await runtime.dispose()
    return figures
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Builds the section from the figures (separate from running, so a test can check it). */
export const streamingSection = (
  frameworks: ReadonlyArray<StreamFigures>,
  http: ReadonlyArray<{ readonly firstDelta: Figures; readonly turn: Figures }>
): Section => {
  const perEvent = (figures: StreamFigures) => figures.turn.medianUs / streamDeltas
  const ours = frameworks.find((f) => f.peer === "rolecraft")
  const alternatives = frameworks.filter((f) => f.peer !== "rolecraft")
  const fastest = alternatives.reduce<StreamFigures | undefined>(
    (best, f) => (best === undefined || perEvent(f) < perEvent(best) ? f : best),
    undefined
  )
  const eventRatio = ours === undefined || fastest === undefined ? undefined : perEvent(ours) / perEvent(fastest)
  const [raw, rolecraft] = http
  const firstRatio =
    raw === undefined || rolecraft === undefined ? undefined : rolecraft.firstDelta.medianUs / raw.firstDelta.medianUs
  return {
    title: "Streamed chat turns",
    description:
      `Each framework's streamed turn over the same fake stream at its own model boundary: the model yields ` +
      `${streamDeltas} text deltas at once, no tool call; each run asserts that all ${streamDeltas} deltas reached ` +
      "the caller and join to the answer. Per-event overhead is the turn's median time divided by the deltas. Each " +
      "framework runs in a fresh Node process. Then the time to the first delta over real HTTP: a raw openai SDK " +
      "stream and Rolecraft's agent.chatStream (over @rolecraft/openai) against the same local ChatCompletionsServer " +
      "streaming the same 16-word answer, sampled round-robin.",
    tables: [
      {
        title: `A streamed turn over a fake stream of ${streamDeltas} deltas`,
        columns: [
          "framework",
          "first delta µs (median)",
          "turn µs (median)",
          "turn p95 µs",
          "µs per delta",
          "× Rolecraft",
          "samples"
        ],
        rows: frameworks.map((f) => [
          f.name,
          us(f.firstDelta.medianUs),
          us(f.turn.medianUs),
          us(f.turn.p95Us),
          us(perEvent(f)),
          ours === undefined ? "—" : times(perEvent(f) / perEvent(ours)),
          String(f.turn.samples)
        ])
      },
      {
        title: "Time to first delta over the local OpenAI-compatible server (real HTTP, real openai SDK)",
        columns: ["stream", "first delta µs (median)", "p95 µs", "whole answer µs (median)", "samples"],
        rows: http.map((f) => [
          f.firstDelta.name,
          us(f.firstDelta.medianUs),
          us(f.firstDelta.p95Us),
          us(f.turn.medianUs),
          String(f.firstDelta.samples)
        ])
      }
    ],
    targets: [
      {
        name: "time to first delta over HTTP",
        limit: "≤ 1.2× a raw openai SDK stream",
        measured:
          firstRatio === undefined
            ? "not measured"
            : `${us(rolecraft?.firstDelta.medianUs ?? Number.NaN)} µs vs ${us(raw?.firstDelta.medianUs ?? Number.NaN)} µs = ${times(firstRatio)}`,
        met: firstRatio === undefined ? undefined : firstRatio <= 1.2
      },
      {
        name: "per-event overhead of a streamed turn",
        limit: "≤ 0.5× the fastest alternative",
        measured:
          eventRatio === undefined || ours === undefined || fastest === undefined
            ? "not measured"
            : `${us(perEvent(ours))} µs vs ${fastest.name} ${us(perEvent(fastest))} µs = ${times(eventRatio)}`,
        met: eventRatio === undefined ? undefined : eventRatio <= 0.5
      }
    ],
    notes: [
      "The per-event figure includes each turn's fixed cost (set-up, prompt, the final result) spread over its deltas.",
      "OpenAI Agents JS runs with tracing disabled, as in the chat scenarios."
    ]
  }
}

export const bench = async (): Promise<Section> => {
  const frameworks: Array<StreamFigures> = []
  for (const peer of Object.keys(peers) as Array<Peer>) frameworks.push(await measureInChild(peer))
  return streamingSection(frameworks, await overHttp())
}

if (isMain(import.meta)) {
  const child = process.argv.indexOf("--child")
  if (child !== -1) {
    const peer = process.argv[child + 1] as Peer
    if (!(peer in peers)) throw new Error(`unknown framework ${peer}; one of ${Object.keys(peers).join(", ")}`)
    console.log(JSON.stringify(await measurePeer(peer)))
    process.exit(0)
  } else {
    await printSection(bench)
    process.exit(0)
  }
}
