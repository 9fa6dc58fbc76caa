/**
 * Agent ids in a shared approval store (issue 40, item 6). Decision: an agent's id is its identity to the store —
 * an agent made again with the same id (after a restart, in another process, per request) must find its own
 * pending approvals, so the store cannot tell two agents given one id apart, and they accept each other's tokens
 * for the same action and arguments. What tells agents apart is their id: a token is bound to the agent that asked
 * (`check: "agent"` for any other), so distinct ids never share a token. Give each agent its own id.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, ApprovalStore, Role } from "@rolecraft/core"
import { Effect, Schema } from "effect"

/** The pending token id, or the check, of an APPROVAL refusal. */
const refusal = (response: { readonly success: boolean; readonly error?: unknown }) =>
  (response.success ? {} : response.error) as { readonly pendingTokenId?: string; readonly check?: string }

const desk = (paid: Array<string>) =>
  Role.make({
    identity: { name: "desk", goal: "Pay", domain: "money" },
    actions: {
      pay: Action.local({
        description: "Pay an account",
        parameters: { to: Schema.String },
        run: ({ to }) => {
          paid.push(to)
          return `paid ${to}`
        }
      }).pipe(Action.requireApproval({ reason: "Moves money" }))
    }
  })

describe("agent ids in a shared approval store", () => {
  it.effect("a token is bound to the agent id that asked: another id is refused and nothing runs", () =>
    Effect.gen(function* () {
      const paid: Array<string> = []
      const alice = yield* Agent.make({ id: "alice-desk", roles: [desk(paid)] })
      const bob = yield* Agent.make({ id: "bob-desk", roles: [desk(paid)] })
      const asked = yield* alice.execute({ action: "pay", params: { to: "acct-9" } })
      const token = refusal(asked).pendingTokenId
      assert.isString(token)
      yield* alice.approvals.approve(token ?? "", "owner")
      const stolen = yield* bob.execute({ action: "pay", params: { to: "acct-9" }, approvalToken: token })
      assert.isFalse(stolen.success)
      assert.strictEqual(refusal(stolen).check, "agent")
      assert.deepStrictEqual(paid, [])
      const own = yield* alice.execute({ action: "pay", params: { to: "acct-9" }, approvalToken: token })
      assert.isTrue(own.success)
      assert.deepStrictEqual(paid, ["acct-9"])
    }).pipe(Effect.provide(ApprovalStore.layerMemory))
  )

  it.effect("an agent made again with the same id finds its pending approval (the reason ids are identities)", () =>
    Effect.gen(function* () {
      const paid: Array<string> = []
      const before = yield* Agent.make({ id: "desk", roles: [desk(paid)] })
      const asked = yield* before.execute({ action: "pay", params: { to: "acct-1" } })
      const token = refusal(asked).pendingTokenId
      yield* before.approvals.approve(token ?? "", "owner")
      const after = yield* Agent.make({ id: "desk", roles: [desk(paid)] })
      const done = yield* after.execute({ action: "pay", params: { to: "acct-1" }, approvalToken: token })
      assert.isTrue(done.success)
      assert.deepStrictEqual(paid, ["acct-1"])
    }).pipe(Effect.provide(ApprovalStore.layerMemory))
  )
})
