/**
 * The stateful parts under every interleaving fast-check's scheduler draws (seeded: test/support/seeded.ts; the
 * harness: test/support/schedule.ts). Each property runs N operations of one part at once, with a scheduling point
 * before every read and write of its store, and checks the part's invariant:
 *
 * - approval store: of N consumes of one approved token, exactly one wins (memory and SQLite storages);
 * - thread store: N turns on one thread, each reading the head then writing the next exchange, lose no write;
 * - OAuth token store and provider: N processes meeting one expired token make one refresh (one claim wins, every
 *   other waits and uses its token), N authorization attempts on one store each exchange with their own PKCE
 *   verifier, and N writers' changes to one entry are all kept;
 * - DurableChat.start: N starts of one run id at once, exactly one ok and the others VALIDATION;
 * - two durable runs with the same tool call ids, started and decided in any order, never share an approval token;
 * - a chat turn's N parallel tool calls, finishing in any order, each run once and are answered in the calls' order;
 * - N sibling agents under one `maxTotalSteps`, their steps interleaved: the tree never passes the bound.
 *
 * Sizes: the `npm test` size in each `check`, `SCHEDULE_RUNS` at nightly size (scripts/fault-properties.ts).
 */
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, ApprovalStore, Chat, Compose, Role, ThreadStore } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { DurableChat, RunStore } from "@rolecraft/durable"
import { McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as fc from "fast-check"
import { makeAgent, refundModel } from "../packages/durable/test/support/refunds.ts"
import * as OAuthProvider from "../packages/mcp/src/internal/oauth/provider.ts"
import { failures, interleaved, point, race, successes } from "./support/schedule.ts"
import { check } from "./support/seeded.ts"

const many = fc.integer({ min: 2, max: 6 })

const binding: ApprovalStore.Binding = {
  agentId: "desk",
  action: "refund",
  argumentsDigest: ApprovalStore.digest({ order: "A-17", cents: 4200 })
}

describe("approval store under every interleaving", () => {
  for (const [kind, storage] of [
    ["memory", ApprovalStore.memoryStorage],
    ["sqlite", () => ApprovalStore.sqliteStorage(new DatabaseSync(":memory:"))]
  ] as const) {
    it(`${kind}: of N consumes of one approved token, exactly one wins; the others are refused as used`, () =>
      check(
        `approval store (${kind}) one winner`,
        fc.asyncProperty(fc.scheduler(), many, fc.boolean(), async (s, n, keyed) => {
          const store = ApprovalStore.make(interleaved(s, storage(), "storage"))
          const token = await s.waitFor(
            Effect.runPromise(
              Effect.gen(function* () {
                const id = yield* store.request(binding, "refunds move money")
                yield* store.approve(id, "alice")
                return id
              })
            )
          )
          const exits = await race(
            s,
            Array.from({ length: n }, (_, i) => store.consume(token, binding, keyed ? { key: `call-${i}` } : undefined))
          )
          assert.strictEqual(
            successes(exits).length,
            1,
            s
              .report()
              .map((t) => t.label)
              .join(" ")
          )
          for (const error of failures(exits)) assert.strictEqual("check" in error ? error.check : error._tag, "used")
        }),
        40
      ))
  }
})

describe("thread store under every interleaving", () => {
  for (const [kind, storage] of [
    ["memory", ThreadStore.memoryStorage],
    ["sqlite", () => ThreadStore.sqliteStorage(new DatabaseSync(":memory:"))]
  ] as const) {
    it(`${kind}: N turns on one thread, each reading the head and writing the next exchange, lose no write`, () =>
      check(
        `thread store (${kind}) no lost write`,
        fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
          const store = ThreadStore.make(interleaved(s, storage(), "storage"))
          const turn = (i: number) =>
            store.hold("shared", (held) =>
              Effect.gen(function* () {
                const seq = held.head.exchanges + 1
                yield* point(s, `turn ${i} read ${seq - 1}`)
                yield* held.write({
                  exchange: { seq, messages: [{ role: "user", content: `turn ${i}` }] },
                  summary: held.head.summary,
                  paused: undefined
                })
              })
            )
          const exits = await race(
            s,
            Array.from({ length: n }, (_, i) => turn(i))
          )
          assert.strictEqual(successes(exits).length, n)
          const thread = await s.waitFor(Effect.runPromise(store.read("shared")))
          assert.strictEqual(thread.exchanges, n)
          assert.sameMembers(
            thread.messages.map((m) => (m.role === "user" ? m.content : "")),
            Array.from({ length: n }, (_, i) => `turn ${i}`)
          )
        }),
        40
      ))
  }
})

/** One "process": a provider of its own (no in-process coordination) over the shared store. */
const providerOn = (store: McpTokenStore.McpTokenStore["Service"]) => {
  const context = Context.make(McpTokenStore.McpTokenStore, store).pipe(
    Context.add(
      McpOAuth.Authorization,
      McpOAuth.Authorization.of({ authorize: () => Effect.die("no browser step in this property") })
    )
  )
  return OAuthProvider.make({}, "https://mcp.example.test/mcp", context, () => {})
}

const expired = { access_token: "access-0", token_type: "Bearer", refresh_token: "refresh-0" }
const plain: typeof fetch = () => Promise.reject(new Error("no network in this property"))

describe("OAuth token store and provider under every interleaving", () => {
  it("N processes meeting one expired token: one claim wins and refreshes once; every other uses its token", () =>
    check(
      "OAuth one refresh per expiry",
      fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
        const memory = Effect.runSync(Layer.build(McpTokenStore.layerMemory).pipe(Effect.scoped))
        const raw = Context.get(memory, McpTokenStore.McpTokenStore)
        await Effect.runPromise(raw.set("https://mcp.example.test/mcp", { tokens: expired }))
        const store = interleaved(s, raw, "store")
        const spent: Array<string> = []
        const process = (i: number) =>
          Effect.promise(async () => {
            const provider = providerOn(store)
            const attempt = provider.attempt(plain)
            const claimed = await provider.claim(attempt, "access-0")
            if (claimed === "refreshed") return (await provider.tokens())?.access_token
            // What auth() does on a refresh: read the tokens, spend the refresh token, save what came back.
            const read = await attempt.tokens()
            spent.push(read?.refresh_token ?? "none")
            await s.schedule(Promise.resolve(), `process ${i} at the token endpoint`)
            await attempt.saveTokens({ access_token: `access-${i + 1}`, token_type: "Bearer", refresh_token: `r-${i}` })
            await provider.release(attempt)
            return (await provider.tokens())?.access_token
          })
        const used = successes(
          await race(
            s,
            Array.from({ length: n }, (_, i) => process(i))
          )
        )
        assert.deepStrictEqual(spent, ["refresh-0"], "one refresh, with the expired entry's refresh token")
        const stored = await Effect.runPromise(raw.get("https://mcp.example.test/mcp"))
        assert.strictEqual(stored.refreshing, undefined, "the claim is released")
        assert.deepStrictEqual(
          used,
          Array.from({ length: n }, () => stored.tokens?.access_token as string | undefined)
        )
      }),
      40
    ))

  it("N overlapping authorization attempts on one store: each code is exchanged with its own attempt's verifier", () =>
    check(
      "OAuth PKCE per attempt",
      fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
        const memory = Effect.runSync(Layer.build(McpTokenStore.layerMemory).pipe(Effect.scoped))
        const store = interleaved(s, Context.get(memory, McpTokenStore.McpTokenStore), "store")
        const provider = providerOn(store)
        const attempt = (i: number) =>
          Effect.promise(async () => {
            const made = provider.attempt(plain)
            await made.state?.()
            await made.saveCodeVerifier(`verifier-${i}`)
            await s.schedule(Promise.resolve(), `attempt ${i} in the browser`)
            return made.codeVerifier()
          })
        const verifiers = successes(
          await race(
            s,
            Array.from({ length: n }, (_, i) => attempt(i))
          )
        )
        assert.deepStrictEqual(
          verifiers,
          Array.from({ length: n }, (_, i) => `verifier-${i}`)
        )
      }),
      40
    ))

  it("N writers changing one entry through the provider: every change is kept (compare-and-set, no lost write)", () =>
    check(
      "OAuth token store no lost write",
      fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
        const memory = Effect.runSync(Layer.build(McpTokenStore.layerMemory).pipe(Effect.scoped))
        const raw = Context.get(memory, McpTokenStore.McpTokenStore)
        const store = interleaved(s, raw, "store")
        const write = (i: number) =>
          Effect.promise(async () => {
            const made = providerOn(store).attempt(plain)
            await made.state?.()
            await made.saveCodeVerifier(`verifier-${i}`)
          })
        await race(
          s,
          Array.from({ length: n }, (_, i) => write(i))
        )
        const entry = await Effect.runPromise(raw.get("https://mcp.example.test/mcp"))
        assert.sameMembers(
          Object.values(entry.codeVerifiers ?? {}),
          Array.from({ length: n }, (_, i) => `verifier-${i}`)
        )
      }),
      40
    ))
})

/** A durable chat on the in-memory engine; `starts` is the client's context with its run store interleaved by `s`. */
const durable = async (s: fc.Scheduler) => {
  const refunds: Array<string> = []
  const turns = DurableChat.make("support")
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(
    Effect.gen(function* () {
      const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void refunds.push(order)) })
      return yield* Layer.buildWithScope(
        turns
          .layer(agent)
          .pipe(Layer.provideMerge(DurableChat.layerTest), Layer.provide(refundModel(() => Effect.void))),
        scope
      )
    }).pipe(Effect.provideService(Scope.Scope, scope))
  )
  const scheduled = Context.add(
    context,
    RunStore.RunStore,
    interleaved(s, Context.get(context, RunStore.RunStore), "runs")
  )
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  return { turns, refunds, context, scheduled, close }
}

const paused = (turns: DurableChat.DurableChat, runId: string) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("5 millis")),
    Effect.repeat({ until: (status) => status._tag !== "Running" })
  )

describe("DurableChat under every interleaving", () => {
  it("N starts of one run id at once: exactly one ok, the others VALIDATION (the store's insert decides)", () =>
    check(
      "DurableChat.start one winner",
      fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
        const { turns, scheduled, context, close } = await durable(s)
        try {
          const exits = await race(
            s,
            Array.from({ length: n }, () => Effect.provide(turns.start("run-1", "A-17"), scheduled))
          )
          assert.strictEqual(successes(exits).length, 1)
          for (const error of failures(exits)) {
            assert.strictEqual(error.category, "VALIDATION")
            assert.include(error.message, 'a run "run-1" already exists')
          }
          const status = await Effect.runPromise(Effect.provide(paused(turns, "run-1"), context))
          assert.strictEqual(status._tag, "AwaitingApproval")
        } finally {
          await close()
        }
      }),
      15
    ))

  it("two runs with the same tool call ids, started and decided in any order, never share an approval token", () =>
    check(
      "DurableChat approval per run",
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const { turns, scheduled, context, refunds, close } = await durable(s)
        try {
          const started = await race(s, [
            Effect.provide(turns.start("run-a", "A-17"), scheduled),
            Effect.provide(turns.start("run-b", "A-17"), scheduled)
          ])
          assert.strictEqual(successes(started).length, 2)
          for (const id of ["run-a", "run-b"]) {
            const status = await Effect.runPromise(Effect.provide(paused(turns, id), context))
            assert.strictEqual(status._tag, "AwaitingApproval")
            if (status._tag === "AwaitingApproval") assert.strictEqual(status.pending[0]?.toolCallId, "call_1")
          }
          const decided = await race(s, [
            Effect.provide(turns.decide("run-a", { call_1: Chat.approve("alice") }), scheduled),
            Effect.provide(turns.decide("run-b", { call_1: Chat.approve("bob") }), scheduled)
          ])
          assert.strictEqual(successes(decided).length, 2)
          for (const id of ["run-a", "run-b"]) {
            const final = await Effect.runPromise(
              Effect.provide(turns.await(id, { pollInterval: "5 millis" }), context)
            )
            assert.strictEqual(final._tag, "Done", JSON.stringify(final))
            if (final._tag === "Done" && final.result._tag === "Completed")
              assert.strictEqual(final.result.text, "Done: refunded A-17")
          }
          assert.deepStrictEqual(refunds, ["A-17", "A-17"], "each run's refund ran once")
        } finally {
          await close()
        }
      }),
      8
    ))
})

describe("a chat turn's parallel calls and nested budgets under every interleaving", () => {
  it("N parallel tool calls finishing in any order: each runs once and the answers keep the calls' order", () =>
    check(
      "chat parallel calls",
      fc.asyncProperty(fc.scheduler(), many, async (s, n) => {
        const runs: Array<number> = []
        const agent = await Effect.runPromise(
          Agent.make({
            id: "desk",
            roles: [
              Role.make({
                identity: { name: "desk", goal: "Look things up", domain: "support" },
                actions: {
                  lookup: Action.local({
                    description: "Look an order up",
                    parameters: { i: Schema.Number },
                    run: ({ i }) =>
                      Effect.andThen(
                        point(s, `lookup ${i}`),
                        Effect.sync(() => {
                          runs.push(i)
                          return `order ${i}`
                        })
                      )
                  })
                }
              })
            ]
          }).pipe(Effect.scoped)
        )
        const scripted = await Effect.runPromise(
          ScriptedModel.make([
            ScriptedModel.toolCalls(Array.from({ length: n }, (_, i) => ({ name: "lookup", arguments: { i } }))),
            ScriptedModel.reply("done")
          ])
        )
        const [exit] = await race(s, [agent.chat("look", { concurrency: n }).pipe(Effect.provide(scripted.layer))])
        if (exit === undefined || !Exit.isSuccess(exit)) return assert.fail(String(exit))
        assert.sameMembers(
          runs,
          Array.from({ length: n }, (_, i) => i),
          "each call ran once"
        )
        const answers =
          exit.value._tag === "AwaitingApproval" ? [] : exit.value.messages.filter((m) => m.role === "tool")
        assert.deepStrictEqual(
          answers.map((m) => (m.role === "tool" ? m.content : "")),
          Array.from({ length: n }, (_, i) => `order ${i}`)
        )
      }),
      30
    ))

  it("N sibling agents under one bound, their tools interleaved: the whole tree makes at most maxTotalSteps calls", () =>
    check(
      "chat nested budget",
      fc.asyncProperty(fc.scheduler(), many, fc.integer({ min: 2, max: 8 }), async (s, n, bound) => {
        let calls = 0
        const worker = await Effect.runPromise(
          Agent.make({
            id: "worker",
            roles: [
              Role.make({
                identity: { name: "worker", goal: "Work", domain: "work" },
                actions: {
                  step: Action.local({
                    description: "One step",
                    parameters: {},
                    run: () => Effect.andThen(point(s, "worker step"), Effect.succeed("stepped"))
                  })
                }
              })
            ]
          }).pipe(Effect.scoped)
        )
        const lead = await Effect.runPromise(
          Agent.make({
            id: "lead",
            roles: [
              Role.make({
                identity: { name: "lead", goal: "Delegate", domain: "work" },
                actions: { work: Compose.agent(worker, { description: "Work", maxTotalSteps: bound }) }
              })
            ]
          }).pipe(Effect.scoped)
        )
        // Every worker always takes one more step; the lead calls N workers at once, then answers.
        const answer = ScriptedModel.respond((request) => {
          calls++
          const lead = String(request.messages[0]?.content).includes('"lead"')
          const asked = request.messages.some((m) => m.role === "tool")
          if (lead && !asked)
            return ScriptedModel.toolCalls(
              Array.from({ length: n }, (_, i) => ({ name: "work", arguments: { input: `${i}` } }))
            )
          if (lead) return ScriptedModel.reply("lead done")
          return ScriptedModel.toolCalls([{ name: "step", arguments: {} }])
        })
        const scripted = await Effect.runPromise(ScriptedModel.make(Array.from({ length: 200 }, () => answer)))
        const [exit] = await race(s, [lead.chat("go", { concurrency: n }).pipe(Effect.provide(scripted.layer))])
        if (exit === undefined || !Exit.isSuccess(exit)) return assert.fail(String(exit))
        assert.isAtMost(calls, bound, `${calls} model calls under maxTotalSteps ${bound}`)
      }),
      30
    ))
})
