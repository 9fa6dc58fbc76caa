/**
 * Two builds of Rolecraft, each in its own process, in interleaved rounds, at steady state: the rows a change to
 * the call route must not slow — `executeAction` on a local action, the same with every policy but approval and
 * with every policy on (each call consuming its own pre-approved token), a chat turn with one tool call, and a
 * handoff turn (two model calls) — over the same scenario code, loaded against each build's `packages/core/dist`.
 * Not part of `npm run bench`.
 *
 * Each child process warms each row for at least 3 s and until its time per call stops falling (the best of the
 * last five batches is within 2% of the best of the five before; at most 30 s), then takes its samples round-robin (one batch
 * of each row in turn) and prints the median time per call of each row. The parent runs the builds alternately
 * (A B, B A, A B, …), a fresh process each, and prints each row's per-round medians, their median, and the ratio
 * of the second build to the first in each round, with the load average before and after every child.
 *
 *   node bench/builds.ts <root of build A> <root of build B> [--rounds 4]
 *
 * (each root a checkout with `npm run build` done; a child: `node bench/builds.ts --child <root>`).
 */
import { execFile } from "node:child_process"
import { loadavg } from "node:os"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import type { Action as ActionTypes } from "@rolecraft/core"
import { Effect, Layer, ManagedRuntime, Ref, Schema, Scope } from "effect"

type Core = typeof import("@rolecraft/core")

/** The rows, in the order they are printed. */
const rowNames = [
  "executeAction (local)",
  "every policy but approval",
  "every policy on",
  "chat turn, one tool call",
  "handoff turn (2 model calls)"
] as const

const nights = (checkIn: string, checkOut: string): number =>
  Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }

/** The scenarios on one build: each row a function making one call (an Effect), and the runtime that runs it. */
const scenarios = async (core: Core, approvals: number) => {
  const { Action, Agent, Approval, Compose, KnowledgeBase, LanguageModel, Role } = core
  const parameters = { checkIn: Schema.String, checkOut: Schema.String }
  const guarded = (name: string) =>
    Action.local({
      description: `Count the nights between two dates (${name})`,
      parameters,
      run: ({ checkIn, checkOut }, context: ActionTypes.Context<{ readonly calls: number }>) =>
        Effect.as(
          Ref.update(context.state, (s) => ({ calls: s.calls + 1 })),
          nights(checkIn, checkOut)
        )
    }).pipe(
      Action.guardrails({
        input: { maxLength: 64, blockedPatterns: [/<script/i, /\b\d{13,16}\b/] },
        output: { maxCharacters: 100, blockedPatterns: [/secret/] }
      }),
      Action.contract({
        pre: [{ rule: "check-out follows check-in", check: (a: any) => a.checkOut > a.checkIn }],
        invariants: [{ rule: "state is a record", check: (_a: any, state: any) => typeof state === "object" }],
        post: [{ rule: "a whole number of nights", check: (result: any) => Number.isInteger(result) }],
        checkState: true
      }),
      Action.retrieval({ topK: 3, query: () => "late checkout nights" }),
      Action.resilience({
        retry: { maxAttempts: 2 },
        circuitBreaker: { window: 20, minimumCalls: 10 },
        bulkhead: { maxConcurrent: 8, maxQueued: 8 }
      })
    )
  const travel = Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      nights: Action.local({
        description: "Count the nights between two dates",
        parameters,
        run: ({ checkIn, checkOut }) => nights(checkIn, checkOut)
      })
    }
  })
  const strict = Role.make({
    identity: { name: "strict", goal: "Plan trips carefully", domain: "travel" },
    spec: { knowledge: ["bench-corpus"] },
    state: {
      initial: { calls: 0 },
      invariants: [{ rule: "calls are counted", check: (s: { calls: number }) => s.calls >= 0 }]
    },
    hooks: { before: (_action, a) => a, after: () => undefined },
    actions: {
      everyPolicy: guarded("every policy").pipe(Action.requireApproval({ reason: "bench" })),
      everyPolicyButApproval: guarded("every policy but approval")
    }
  })
  const corpus = Array.from({ length: 12 }, (_, i) => ({
    source: `doc-${i}`,
    text: `${["Late checkout is possible until noon on request.", "Nights are counted from check-in to check-out.", "Breakfast is served in the lobby from seven.", "Pets are welcome for a small fee per night."][i % 4]} Section ${i}.`
  }))
  // The model of the chat rows: a tool call for the user's message, then an answer; triage hands over to billing.
  const usage = { inputTokens: 10, outputTokens: 5 }
  const model = LanguageModel.layer(
    ({ request }) => {
      const system = String(request.messages[0]?.content ?? "")
      const last = request.messages.at(-1)
      if (system.includes('"triage"')) {
        return { toolCalls: [{ id: "call_1", name: "transfer_to_billing", arguments: "{}" }], usage }
      }
      if (system.includes('"billing"')) return { text: "Billing here.", usage }
      return last?.role === "tool"
        ? { text: "Three nights.", usage }
        : { toolCalls: [{ id: "call_1", name: "nights", arguments: JSON.stringify(args) }], usage }
    },
    { name: "bench" }
  )
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      model,
      Layer.effect(KnowledgeBase.KnowledgeBase, KnowledgeBase.make({ load: () => Effect.succeed(corpus) }))
    )
  )
  const scope = Effect.runSync(Scope.make())
  const made = await runtime.runPromise(
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "bench", roles: [travel, strict] })
      const billing = yield* Agent.make({
        id: "billing",
        roles: [Role.make({ identity: { name: "billing", goal: "Answer billing", domain: "bench" } })]
      })
      const triage = yield* Agent.make({
        id: "triage",
        roles: [
          Role.make({
            identity: { name: "triage", goal: "Route", domain: "bench" },
            actions: { transfer_to_billing: Compose.handoff(billing) }
          })
        ]
      })
      const binding = yield* Approval.bindingOf("bench", "everyPolicy", undefined, args)
      const tokens: Array<typeof args & { readonly _approval_token: string }> = []
      for (let i = 0; i < approvals; i++) {
        const token = yield* agent.approvals.request(binding, "bench")
        yield* agent.approvals.approve(token, "bench")
        tokens.push({ ...args, _approval_token: token })
      }
      return { agent, triage, tokens }
    }).pipe(Scope.provide(scope))
  )
  let next = 0
  const { agent, triage, tokens } = made
  const check = (ok: boolean, what: string) => (ok ? Effect.void : Effect.die(new Error(`unexpected ${what}`)))
  const calls: Record<(typeof rowNames)[number], () => Effect.Effect<unknown, unknown, any>> = {
    "executeAction (local)": () => agent.executeAction("nights", args),
    "every policy but approval": () => agent.executeAction("everyPolicyButApproval", args),
    "every policy on": () => agent.executeAction("everyPolicy", tokens[next++] ?? { ...args, _approval_token: "" }),
    "chat turn, one tool call": () =>
      Effect.flatMap(agent.chat("How many nights?"), (result) =>
        check(result._tag === "Completed" && result.text === "Three nights.", "chat result")
      ),
    "handoff turn (2 model calls)": () =>
      Effect.flatMap(triage.chat("Where is my invoice?"), (result) =>
        check(result._tag === "Completed" && result.agent === "billing", "handoff result")
      )
  }
  return { calls, runtime }
}

/** Batch sizes: calls per timed batch of each row. */
const batchOf: Record<(typeof rowNames)[number], number> = {
  "executeAction (local)": 200,
  "every policy but approval": 100,
  "every policy on": 100,
  "chat turn, one tool call": 20,
  "handoff turn (2 model calls)": 20
}
const samples = 120
const steadyWindow = 5
const minWarmMs = 3_000
const maxWarmMs = 30_000

const child = async (root: string) => {
  const core = (await import(pathToFileURL(resolve(root, "packages/core/dist/index.js")).href)) as Core
  // Tokens for the warm-up (at most this many batches) and the samples of the approval row.
  const approvalCalls = batchOf["every policy on"] * (samples + 400)
  const { calls, runtime } = await scenarios(core, approvalCalls)
  const batch = async (row: (typeof rowNames)[number]) => {
    const call = calls[row]
    const size = batchOf[row]
    const program = Effect.gen(function* () {
      for (let i = 0; i < size; i++) yield* call()
    })
    const start = performance.now()
    await runtime.runPromise(program)
    return ((performance.now() - start) * 1000) / size
  }
  const warmed: Record<string, number> = {}
  for (const row of rowNames) {
    const times: Array<number> = []
    const began = performance.now()
    const best = (from: number, to: number) => Math.min(...times.slice(from, to))
    for (;;) {
      times.push(await batch(row))
      const n = times.length
      if (row === "every policy on" && n >= 380) break
      const warm = performance.now() - began >= minWarmMs
      if (
        warm &&
        n >= 2 * steadyWindow &&
        best(n - steadyWindow, n) >= 0.98 * best(n - 2 * steadyWindow, n - steadyWindow)
      )
        break
      if (performance.now() - began > maxWarmMs) break
    }
    warmed[row] = times.length
  }
  const taken: Record<string, Array<number>> = Object.fromEntries(rowNames.map((row) => [row, []]))
  for (let i = 0; i < samples; i++) for (const row of rowNames) taken[row]?.push(await batch(row))
  const median = (values: ReadonlyArray<number>) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
  }
  await runtime.dispose()
  console.log(
    JSON.stringify({ medians: Object.fromEntries(rowNames.map((row) => [row, median(taken[row] ?? [])])), warmed })
  )
}

const parent = async (roots: ReadonlyArray<string>, rounds: number) => {
  const run = promisify(execFile)
  const self = fileURLToPath(import.meta.url)
  const results: Array<Array<Record<string, number>>> = roots.map(() => [])
  const loads: Array<string> = []
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const which of order) {
      const before = loadavg()[0] ?? Number.NaN
      const { stdout } = await run(process.execPath, [self, "--child", roots[which] ?? ""], { maxBuffer: 1 << 24 })
      const after = loadavg()[0] ?? Number.NaN
      loads.push(`${before.toFixed(1)}→${after.toFixed(1)}`)
      const parsed = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
        readonly medians: Record<string, number>
        readonly warmed: Record<string, number>
      }
      results[which]?.push(parsed.medians)
      console.error(
        `round ${round + 1}, build ${which === 0 ? "A" : "B"}: ${rowNames.map((row) => `${row} ${parsed.medians[row]?.toFixed(2)} µs (warmed ${parsed.warmed[row]} batches)`).join("; ")}`
      )
    }
  }
  const median = (values: ReadonlyArray<number>) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted.length % 2 === 1
      ? (sorted[(sorted.length - 1) / 2] ?? Number.NaN)
      : ((sorted[sorted.length / 2 - 1] ?? Number.NaN) + (sorted[sorted.length / 2] ?? Number.NaN)) / 2
  }
  console.log(`A: ${roots[0]}\nB: ${roots[1]}\nload average (1 min) before→after each child: ${loads.join(", ")}\n`)
  console.log("| row | A µs (per round) | B µs (per round) | B/A per round | B/A of the medians |")
  console.log("| --- | --- | --- | --- | --- |")
  for (const row of rowNames) {
    const a = (results[0] ?? []).map((r) => r[row] ?? Number.NaN)
    const b = (results[1] ?? []).map((r) => r[row] ?? Number.NaN)
    const ratios = a.map((x, i) => (b[i] ?? Number.NaN) / x)
    console.log(
      `| ${row} | ${median(a).toFixed(2)} (${a.map((x) => x.toFixed(2)).join(", ")}) | ${median(b).toFixed(2)} (${b.map((x) => x.toFixed(2)).join(", ")}) | ${ratios.map((x) => `${x.toFixed(3)}×`).join(", ")} | ${(median(b) / median(a)).toFixed(3)}× |`
    )
  }
}

const argv = process.argv.slice(2)
if (argv[0] === "--child") {
  await child(argv[1] ?? ".")
} else {
  const roundsAt = argv.indexOf("--rounds")
  const rounds = roundsAt === -1 ? 4 : Number(argv[roundsAt + 1])
  const roots = argv.filter((arg, i) => !arg.startsWith("--") && (roundsAt === -1 || i !== roundsAt + 1))
  if (roots.length !== 2)
    throw new Error("usage: node bench/builds.ts <root of build A> <root of build B> [--rounds 4]")
  await parent(roots, rounds)
}
