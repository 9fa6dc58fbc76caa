import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, Schema } from "effect"
import * as Action from "../src/Action.ts"
import type { ContractViolation } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type * as Contract from "../src/Contract.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

interface Account {
  readonly balance: number
  readonly history: ReadonlyArray<number>
}

/** A bank role: state is the account; withdraw updates it through `context.state`. */
const bank = (
  contract: Contract.Policy<any, any, any>,
  withdrawals: Ref.Ref<number>,
  options: { readonly retry?: boolean } = {}
) =>
  Role.make({
    identity: identity("bank"),
    state: {
      initial: { balance: 100, history: [] } as Account,
      invariants: [{ rule: "the balance is never negative", check: (account: Account) => account.balance >= 0 }]
    },
    actions: {
      withdraw: Action.local({
        description: "Withdraw an amount",
        parameters: { amount: Schema.Number },
        run: ({ amount }, context: Action.Context<Account>) =>
          Effect.gen(function* () {
            yield* Ref.update(withdrawals, (n) => n + 1)
            const account = yield* Ref.updateAndGet(context.state, (a) => ({
              balance: a.balance - amount,
              history: [...a.history, amount]
            }))
            return account.balance
          })
      }).pipe(
        Action.contract(contract),
        Action.resilience(options.retry === true ? { retry: { maxAttempts: 3, retryOn: ["CONTRACT"] } } : {})
      ),
      balance: Action.local({
        description: "Read the balance",
        parameters: {},
        run: (_args, context: Action.Context<Account>) => Effect.map(Ref.get(context.state), (a) => a.balance)
      })
    }
  })

const violation = (error: { readonly _tag: string }) => {
  assert.strictEqual(error._tag, "ContractViolation")
  const v = error as ContractViolation
  return [v.category, v.stage, v.rule] as const
}

describe("Contract (SPEC §9 steps 5 and 9)", () => {
  it.effect("a precondition over arguments and state fails CONTRACT before the action runs", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const role = bank(
        {
          pre: [
            { rule: "amount is positive", check: (args: any) => args.amount > 0 },
            { rule: "funds suffice", check: (args: any, state: any) => args.amount <= state.balance }
          ]
        },
        withdrawals
      )
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      assert.deepStrictEqual(violation(yield* Effect.flip(agent.executeAction("withdraw", { amount: -1 }))), [
        "CONTRACT",
        "pre",
        "amount is positive"
      ])
      assert.deepStrictEqual(violation(yield* Effect.flip(agent.executeAction("withdraw", { amount: 500 }))), [
        "CONTRACT",
        "pre",
        "funds suffice"
      ])
      assert.strictEqual(yield* Ref.get(withdrawals), 0)
      // @ts-expect-error a string for a number: the contract sees the converted value
      assert.strictEqual(yield* agent.executeAction("withdraw", { amount: "30" }), 70)
    })
  )

  it.effect("a predicate that throws counts as failed", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const role = bank(
        {
          pre: [
            {
              rule: "checks something that throws",
              check: () => {
                throw new Error("boom")
              }
            }
          ]
        },
        withdrawals
      )
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      assert.deepStrictEqual(violation(yield* Effect.flip(agent.executeAction("withdraw", { amount: 1 }))), [
        "CONTRACT",
        "pre",
        "checks something that throws"
      ])
    })
  )

  it.effect("invariants are checked before the run and again after it", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const role = bank(
        {
          invariants: [{ rule: "at most 2 withdrawals", check: (_args: any, state: any) => state.history.length < 2 }]
        },
        withdrawals
      )
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      assert.strictEqual(yield* agent.executeAction("withdraw", { amount: 1 }), 99)
      const after = yield* Effect.flip(agent.executeAction("withdraw", { amount: 1 }))
      assert.deepStrictEqual(violation(after), ["CONTRACT", "invariant", "at most 2 withdrawals"])
      assert.strictEqual(yield* Ref.get(withdrawals), 2, "the second ran, and broke the invariant afterwards")
      const before = yield* Effect.flip(agent.executeAction("withdraw", { amount: 1 }))
      assert.deepStrictEqual(violation(before), ["CONTRACT", "invariant", "at most 2 withdrawals"])
      assert.strictEqual(yield* Ref.get(withdrawals), 2, "the third was stopped before it ran")
    })
  )

  it.effect("a postcondition that fails after the side effect: CONTRACT, and the side effect is not repeated", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const role = bank(
        { post: [{ rule: "the result is at least 50", check: (result: any) => result >= 50 }] },
        withdrawals,
        { retry: true }
      )
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      const error = yield* Effect.flip(agent.executeAction("withdraw", { amount: 60 }))
      assert.deepStrictEqual(violation(error), ["CONTRACT", "post", "the result is at least 50"])
      assert.strictEqual(yield* Ref.get(withdrawals), 1, "not retried, though the policy retries CONTRACT")
      assert.strictEqual(yield* agent.executeAction("balance", {}), 40, "the state change stays: it happened")
    })
  )

  it.effect("state invariants are checked after the run only when the contract says checkState", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const unchecked = yield* Agent.make({ id: "a", roles: [bank({}, withdrawals)] })
      assert.strictEqual(yield* unchecked.executeAction("withdraw", { amount: 150 }), -50)
      const checked = yield* Agent.make({ id: "b", roles: [bank({ checkState: true }, withdrawals)] })
      assert.strictEqual(yield* checked.executeAction("withdraw", { amount: 60 }), 40)
      const error = yield* Effect.flip(checked.executeAction("withdraw", { amount: 60 }))
      assert.deepStrictEqual(violation(error), ["CONTRACT", "state", "the balance is never negative"])
    })
  )

  it.effect("each agent holds its own state; calls of one agent share it", () =>
    Effect.gen(function* () {
      const withdrawals = yield* Ref.make(0)
      const role = bank({}, withdrawals)
      const first = yield* Agent.make({ id: "a", roles: [role] })
      const second = yield* Agent.make({ id: "b", roles: [role] })
      yield* first.executeAction("withdraw", { amount: 10 })
      yield* first.executeAction("withdraw", { amount: 10 })
      assert.deepStrictEqual(
        [yield* first.executeAction("balance", {}), yield* second.executeAction("balance", {})],
        [80, 100]
      )
    })
  )
})
