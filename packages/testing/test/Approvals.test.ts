import { assert, describe, it } from "@effect/vitest"
import { Action, type ActionError, Agent, ApprovalStore, Role } from "@rolecraft/core"
import { Effect, Exit, Option, Ref, Schema } from "effect"
import * as Approvals from "../src/Approvals.ts"

const makeRole = (booked: Ref.Ref<number>) =>
  Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      book: Action.local({
        description: "Book a hotel room",
        parameters: { hotelId: Schema.String },
        run: ({ hotelId }) =>
          Effect.as(
            Ref.update(booked, (n) => n + 1),
            `booked ${hotelId}`
          )
      }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" }))
    }
  })

const refusal = <A, E>(exit: Exit.Exit<A, E>) => Option.getOrThrow(Exit.findErrorOption(exit))

describe("Approvals", () => {
  it.effect("approvePending approves the token an ApprovalRequired carries; the retried call runs", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeRole(booked)] })
      const error = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-1" })))
      const token = yield* Approvals.approvePending(agent.approvals, error, "alice")
      assert.strictEqual(yield* agent.executeAction("book", { hotelId: "h-1", _approval_token: token }), "booked h-1")
      assert.strictEqual(Option.getOrThrow(yield* agent.approvals.get(token)).approver, "alice")
      const notApproval = yield* Effect.flip(Approvals.approvePending(agent.approvals, new Error("other")))
      assert.strictEqual(notApproval._tag === "ApprovalTokenError" && notApproval.check, "missing")
    })
  )

  it.effect("rejectPending rejects it; the call with it is refused as rejected", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeRole(booked)] })
      const error = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-1" })))
      const token = yield* Approvals.rejectPending(agent.approvals, error, "no budget")
      const again = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-1", _approval_token: token })))
      assert.strictEqual((again as ActionError.ApprovalRequired).check, "rejected")
      assert.strictEqual(yield* Ref.get(booked), 0)
    })
  )

  it.effect("preapprove makes a token for exact arguments: it runs those, and only those", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeRole(booked)] })
      const options = { agentId: "planner", action: "book", params: { hotelId: "h-2" } }
      const token = yield* Approvals.preapprove(agent.approvals, options)
      const other = yield* Approvals.preapprove(agent.approvals, options)
      const wrong = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-3", _approval_token: token })))
      assert.strictEqual((wrong as ActionError.ApprovalRequired).check, "arguments")
      assert.strictEqual(yield* agent.executeAction("book", { hotelId: "h-2", _approval_token: token }), "booked h-2")
      assert.strictEqual(yield* agent.executeAction("book", { hotelId: "h-2", _approval_token: other }), "booked h-2")
      assert.strictEqual(yield* Ref.get(booked), 2)
    })
  )

  it.effect("the recording layer records each request and, with autoApprove, approves it at once", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeRole(booked)] })
      const error = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-4" })))
      const token = (error as ActionError.ApprovalRequired).pendingTokenId!
      assert.strictEqual(yield* agent.executeAction("book", { hotelId: "h-4", _approval_token: token }), "booked h-4")
      const recorder = yield* Approvals.Recorder
      const requests = yield* recorder.requests
      assert.deepStrictEqual(
        requests.map((t) => [t.id, t.status, t.approver, t.binding.action, t.reason]),
        [[token, "approved", "bot", "book", "Books and charges a hotel"]]
      )
      assert.strictEqual(Option.getOrThrow(yield* (yield* ApprovalStore.ApprovalStore).get(token)).status, "used")
    }).pipe(Effect.provide(Approvals.layer({ autoApprove: true, approver: "bot" })))
  )

  it.effect("without autoApprove the recorded token stays pending and the call is refused", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeRole(booked)] })
      const error = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-5" })))
      const token = (error as ActionError.ApprovalRequired).pendingTokenId!
      const again = refusal(yield* Effect.exit(agent.executeAction("book", { hotelId: "h-5", _approval_token: token })))
      assert.strictEqual((again as ActionError.ApprovalRequired).check, "pending")
      // The refused call is asked for again with its live pending token: no second token is requested.
      assert.strictEqual((again as ActionError.ApprovalRequired).pendingTokenId, token)
      assert.deepStrictEqual(
        (yield* (yield* Approvals.Recorder).requests).map((t) => t.status),
        ["pending"]
      )
    }).pipe(Effect.provide(Approvals.layer()))
  )
})
