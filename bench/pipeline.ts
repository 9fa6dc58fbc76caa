/**
 * The cost of Rolecraft's pipeline: `executeAction` on a local action next to
 * a direct call of the same function and one traced `Effect.fn` call, all in
 * this run; then the same action with every policy on. Prints figures;
 * asserts nothing. Targets: the overhead of `executeAction` over the direct
 * call is at most 1.5× one traced `Effect.fn`; with every policy on, at most
 * 5× (issue 16), each met in every round.
 *
 * "Every policy on": role hooks (before and after), input and output
 * guardrails, a contract (pre, post, invariants, state invariants), retrieval
 * (top 3 of a 12-document in-memory corpus, minisearch), resilience (retry
 * policy, circuit breaker, bulkhead), and an approval. An approval token is
 * single-use, so each timed call carries its own: the tokens are requested
 * and approved before timing starts, and the timed figure includes consuming
 * one (digest of the arguments, binding checks, the atomic burn). It is shown
 * with and without the approval step.
 *
 * Samples are taken in rounds, each round-robin (one batch of each contender
 * in turn), so load changes on the machine weigh on every row alike; an
 * instrumented run then counts what one call of each row schedules
 * (`hops.ts`): a local action's pipeline should suspend no fiber at all.
 *
 * Run: node bench/pipeline.ts
 */
import { Action, Agent, Approval, KnowledgeBase, Role } from "@rolecraft/core"
import { Effect, Layer, Ref, Schema } from "effect"
import { countHops, hopsTable } from "./hops.ts"
import { compare, type Figures, loadedPass, metInEvery, spreadAcross } from "./measure.ts"
import { figuresTable, isMain, printSection, type Section, spread, us } from "./report.ts"

const nights = (checkIn: string, checkOut: string): number =>
  Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)

const parameters = { checkIn: Schema.String, checkOut: Schema.String }

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

const guarded = (name: string) =>
  Action.local({
    description: `Count the nights between two dates (${name})`,
    parameters,
    run: ({ checkIn, checkOut }, context: Action.Context<{ readonly calls: number }>) =>
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
      pre: [{ rule: "check-out follows check-in", check: (args: any) => args.checkOut > args.checkIn }],
      invariants: [{ rule: "state is a record", check: (_args: any, state: any) => typeof state === "object" }],
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

export const strict = Role.make({
  identity: { name: "strict", goal: "Plan trips carefully", domain: "travel" },
  spec: { knowledge: ["bench-corpus"] },
  state: {
    initial: { calls: 0 },
    invariants: [{ rule: "calls are counted", check: (s: { calls: number }) => s.calls >= 0 }]
  },
  hooks: { before: (_action, args) => args, after: () => undefined },
  actions: {
    everyPolicy: guarded("every policy").pipe(Action.requireApproval({ reason: "bench" })),
    everyPolicyButApproval: guarded("every policy but approval")
  }
})

export const corpus = Array.from({ length: 12 }, (_, i) => ({
  source: `doc-${i}`,
  text: [
    "Late checkout is possible until noon on request.",
    "Nights are counted from check-in to check-out.",
    "Breakfast is served in the lobby from seven.",
    "Pets are welcome for a small fee per night."
  ][i % 4]!.concat(` Section ${i}.`)
}))

// biome-ignore lint/correctness/useYield: the traced function under test does no effectful work
const traced = Effect.fn("nights")(function* (checkIn: string, checkOut: string) {
  return nights(checkIn, checkOut)
})

const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }
const options = { warmup: 20_000, samples: 150, batch: 200, rounds: 3 }

/** Calls counted per row in the instrumented run. */
const countedCalls = 500

/**
 * The rows, in one running Effect: direct call, traced `Effect.fn`,
 * `executeAction` plain, with every policy but approval, and with every policy.
 */
export const measurePipeline = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "bench", roles: [travel, strict] })
  const knowledge = yield* KnowledgeBase.KnowledgeBase
  const search = {
    action: "everyPolicy",
    role: "strict",
    sources: ["bench-corpus"],
    text: "late checkout nights",
    topK: 3
  }
  // One approved token per call of the approval row, made before timing starts.
  const binding = yield* Approval.bindingOf("bench", "everyPolicy", undefined, args)
  const calls = options.warmup + options.samples * options.batch + (loadedPass() ? 0 : countedCalls)
  const withTokens: Array<typeof args & { readonly _approval_token: string }> = []
  for (let i = 0; i < calls; i++) {
    const token = yield* agent.approvals.request(binding, "bench")
    yield* agent.approvals.approve(token, "bench")
    withTokens.push({ ...args, _approval_token: token })
  }
  let next = 0
  const contenders = [
    { name: "direct call", call: () => Effect.sync(() => nights(args.checkIn, args.checkOut)) },
    { name: "traced Effect.fn", call: () => traced(args.checkIn, args.checkOut) },
    { name: "executeAction (local)", call: () => agent.executeAction("nights", args) },
    { name: "every policy but approval", call: () => agent.executeAction("everyPolicyButApproval", args) },
    { name: "every policy on", call: () => agent.executeAction("everyPolicy", withTokens[next++]!) },
    // The retrieval step's own work, the search library's: the same search the two rows above make per call.
    { name: "the knowledge search alone", call: () => knowledge.search(search) }
  ]
  const rows = yield* compare(contenders, options)
  const hops = loadedPass() ? undefined : yield* countHops(contenders, countedCalls)
  return { rows, hops }
}).pipe(
  Effect.scoped,
  Effect.provide(Layer.effect(KnowledgeBase.KnowledgeBase, KnowledgeBase.make({ load: () => Effect.succeed(corpus) })))
)

/** The pipeline bench as a report section (targets: ≤ 1.5× and ≤ 5× a traced `Effect.fn`, in every round). */
export const bench = async (): Promise<Section> => {
  const { rows, hops } = await Effect.runPromise(measurePipeline)
  const [direct, fn] = rows
  const target = (row: Figures | undefined, limit: number) => {
    const overhead = spreadAcross([row, direct], ([x = Number.NaN, y = Number.NaN]) => x - y)
    const ratio = spreadAcross([row, direct, fn], ([x = Number.NaN, y = Number.NaN, z = Number.NaN]) => (x - y) / z)
    return {
      name: `${row?.name ?? "?"}: overhead over a direct call`,
      limit: `≤ ${limit}× one traced Effect.fn`,
      measured: `${us(overhead.value)} µs = ${spread(ratio)}`,
      met: Number.isFinite(ratio.value) ? metInEvery(ratio, limit) : undefined
    }
  }
  return {
    title: "executeAction on a local action",
    description:
      "One running Effect times a direct call of the action's function (wrapped in `Effect.sync`), the same " +
      "function as a traced `Effect.fn`, and `agent.executeAction` on it (the whole ten-step pipeline), plain and " +
      "with every policy on (hooks, guardrails, contract with state, retrieval over 12 documents, retry, circuit " +
      "breaker, bulkhead, and approval: each call consumes its own token, approved before timing starts). " +
      "Each sample is the mean of a batch of 200 calls, after 20 000 warm-up calls; samples are taken in " +
      `${options.rounds} rounds, each round-robin (one batch of each in turn); a ratio's range is over the rounds.`,
    tables: [
      figuresTable(rows, "traced Effect.fn"),
      ...(hops === undefined
        ? []
        : [hopsTable(`What one call schedules (instrumented run, ${countedCalls} calls each, per call)`, hops)])
    ],
    targets: [target(rows[2], 1.5), target(rows[3], 5), target(rows[4], 5)],
    notes: [
      `The retrieval policy's search (minisearch over 12 documents, the same query) is ${us(rows[5]?.medianUs ?? Number.NaN)} µs ` +
        "of each policy row's overhead: the search library's own work, beside the pipeline's."
    ]
  }
}

if (isMain(import.meta)) await printSection(() => bench())
