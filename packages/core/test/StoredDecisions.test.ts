/**
 * `StoredDecisions` reads a paused turn's decisions from the approval store: approved (and used) calls as
 * approvals by who approved, rejected ones with the reason, pending ones as waiting, expired or unknown ones
 * apart; `whenDecided` waits (on the TestClock here) until none waits.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Layer, Schedule } from "effect"
import { TestClock } from "effect/testing"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import type * as Chat from "../src/Chat.ts"
import * as Decision from "../src/Decision.ts"
import * as StoredDecisions from "../src/StoredDecisions.ts"

const bindingOf = (hotel: string): ApprovalStore.Binding => ({
  agentId: "lead",
  action: "book",
  argumentsDigest: ApprovalStore.digest({ hotel })
})

const pausedWith = (calls: ReadonlyArray<readonly [string, string]>): Chat.PausedState => ({
  version: 1,
  messages: [],
  pending: calls.map(([toolCallId, pendingTokenId]) => ({
    toolCallId,
    action: "book",
    arguments: {},
    pendingTokenId,
    reason: "Bookings cost money"
  })),
  steps: 1,
  maxSteps: 10,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
})

describe("StoredDecisions", () => {
  it.effect("reads approved, used, rejected, waiting, expired and unknown calls apart", () =>
    Effect.gen(function* () {
      const store = yield* ApprovalStore.ApprovalStore
      const ask = (hotel: string, ttl: Duration.Input = "1 hour") =>
        store.request(bindingOf(hotel), "Bookings cost money", ttl)
      const approved = yield* ask("A")
      const used = yield* ask("B")
      const rejected = yield* ask("C")
      const waiting = yield* ask("D")
      const expiring = yield* ask("E", "5 seconds")
      yield* store.approve(approved, "alice")
      yield* store.approve(used, "bob")
      yield* store.consume(used, bindingOf("B"))
      yield* store.reject(rejected, "carol", "too dear")
      yield* TestClock.adjust("6 seconds")
      const state = pausedWith([
        ["c1", approved],
        ["c2", used],
        ["c3", rejected],
        ["c4", waiting],
        ["c5", expiring],
        ["c6", ApprovalStore.newTokenId()]
      ])
      const read = yield* StoredDecisions.read(state)
      assert.deepStrictEqual(read.decisions, {
        c1: Decision.approve("alice"),
        c2: Decision.approve("bob"),
        c3: Decision.reject("carol", "too dear")
      })
      assert.deepStrictEqual(
        read.waiting.map((call) => call.toolCallId),
        ["c4"]
      )
      assert.deepStrictEqual(
        read.expired.map((call) => call.toolCallId),
        ["c5", "c6"]
      )
    }).pipe(Effect.provide(ApprovalStore.layerMemory))
  )

  it.effect("whenDecided waits until every call is decided, then answers with the decisions", () =>
    Effect.gen(function* () {
      const store = yield* ApprovalStore.ApprovalStore
      const first = yield* store.request(bindingOf("A"), "Bookings cost money")
      const second = yield* store.request(bindingOf("B"), "Bookings cost money")
      const state = pausedWith([
        ["c1", first],
        ["c2", second]
      ])
      const waiting = yield* Effect.forkChild(
        StoredDecisions.whenDecided(state, { schedule: Schedule.spaced("1 second") })
      )
      yield* store.decide(ApprovalStore.keyOf(first), Decision.approve("alice"))
      yield* TestClock.adjust("3 seconds")
      assert.isUndefined(waiting.pollUnsafe(), "one call still waits")
      yield* store.decide(ApprovalStore.keyOf(second), Decision.reject("alice", "one is enough"))
      yield* TestClock.adjust("1 second")
      const { decisions, waiting: left } = yield* Fiber.join(waiting)
      assert.deepStrictEqual(decisions, {
        c1: Decision.approve("alice"),
        c2: Decision.reject("alice", "one is enough")
      })
      assert.deepStrictEqual(left, [])
    }).pipe(Effect.provide(Layer.fresh(ApprovalStore.layerMemory)))
  )
})
