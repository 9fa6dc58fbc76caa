/**
 * Local actions through the agent's pipeline: `nights` with string
 * dates, a failing call reported in an `ActionResponse`, a flaky action that
 * succeeds on its third attempt under a retry policy, an
 * approval-guarded `book` (refused without a token, run with an approved one,
 * refused on replay and with changed arguments), and a guarded, contracted
 * `charge` that keeps a budget in the role's state.
 *
 * Run: node examples/local-actions.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, ActionError, type ActionResponse, Agent, Role } from "@rolecraft/core"
import { Console, Effect, Ref, Schema } from "effect"

let flakyCalls = 0

export const TravelRole = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    availability: Action.local({
      description: "Rooms left at a hotel (the upstream is busy twice before it answers)",
      parameters: { hotelId: Schema.String },
      run: ({ hotelId }) => {
        flakyCalls += 1
        return flakyCalls < 3
          ? Effect.fail(new ActionError.TransientFailure({ action: "availability", message: "upstream busy" }))
          : Effect.succeed({ hotelId, roomsLeft: 4, attempts: flakyCalls })
      }
    }).pipe(Action.resilience({ retry: { maxAttempts: 3, initialDelay: "50 millis" } })),
    book: Action.local({
      description: "Book a hotel room",
      parameters: { hotelId: Schema.String, checkIn: Schema.String },
      run: ({ hotelId, checkIn }) => `booked ${hotelId} from ${checkIn}`
    }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" }))
  }
})

interface Budget {
  readonly limit: number
  readonly spent: number
}

export const BillingRole = Role.make({
  identity: { name: "billing", goal: "Charge within budget", domain: "travel" },
  state: {
    initial: { limit: 1000, spent: 0 } as Budget,
    invariants: [{ rule: "spending stays within the limit", check: (budget: Budget) => budget.spent <= budget.limit }]
  },
  actions: {
    charge: Action.local({
      description: "Charge an amount against the trip budget",
      parameters: { amount: Schema.Number, memo: Schema.String },
      run: ({ amount }, context: Action.Context<Budget>) =>
        Effect.map(
          Ref.updateAndGet(context.state, (budget) => ({ ...budget, spent: budget.spent + amount })),
          (budget) => ({ charged: amount, left: budget.limit - budget.spent })
        )
    }).pipe(
      Action.guardrails({ input: { maxLength: 80, blockedPatterns: [/\b\d{13,16}\b/] } }),
      Action.contract({
        pre: [
          { rule: "the amount is positive", check: (args: { amount: number }) => args.amount > 0 },
          {
            rule: "the amount fits the budget",
            check: (args: { amount: number }, budget: Budget) => budget.spent + args.amount <= budget.limit
          }
        ],
        post: [
          {
            rule: "the amount charged is the amount asked",
            check: (result: any, args: any) => result.charged === args.amount
          }
        ],
        checkState: true
      })
    )
  }
})

const outcome = (response: ActionResponse.ActionResponse): string =>
  response.success
    ? JSON.stringify(response.value)
    : `${response.error.category}${response.error._tag === "ApprovalRequired" ? ` (${response.error.check})` : ""}: ${response.error.message}`

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "planner", roles: [TravelRole, BillingRole] })

  const nights = yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
  yield* Console.log(`nights(2026-11-02, 2026-11-05) -> ${nights}`)

  const response = yield* agent.execute({ action: "nights", params: { checkIn: "2026-11-02" } })
  yield* Console.log(
    response.success
      ? `unexpected success: ${String(response.value)}`
      : `nights(checkIn only) -> ${response.error.category}: ${response.error.message}`
  )

  const rooms = yield* agent.executeAction("availability", { hotelId: "h-42" })
  yield* Console.log(`availability(h-42) -> ${JSON.stringify(rooms)}`)

  // Approval: the first call is refused and leaves a pending token for an approver.
  const stay = { hotelId: "h-42", checkIn: "2026-11-02" }
  const refused = yield* agent.execute({ action: "book", params: stay })
  yield* Console.log(`book without a token -> ${outcome(refused)}`)
  const pending =
    !refused.success && refused.error._tag === "ApprovalRequired" ? refused.error.pendingTokenId : undefined
  if (pending === undefined) return yield* Effect.die("book was not refused for approval")
  const approved = yield* agent.approvals.approve(pending, "alice")
  yield* Console.log(`alice approves the pending token -> ${approved.status}`)
  const booked = yield* agent.execute({ action: "book", params: { ...stay, _approval_token: pending } })
  yield* Console.log(`book with the approved token -> ${outcome(booked)}`)
  const replay = yield* agent.execute({ action: "book", params: { ...stay, _approval_token: pending } })
  yield* Console.log(`book again with the same token -> ${outcome(replay)}`)
  const second = yield* agent.execute({ action: "book", params: stay })
  const other = !second.success && second.error._tag === "ApprovalRequired" ? second.error.pendingTokenId : undefined
  if (other === undefined) return yield* Effect.die("book was not refused for approval")
  yield* agent.approvals.approve(other, "alice")
  const changed = yield* agent.execute({
    action: "book",
    params: { ...stay, checkIn: "2026-12-24" },
    approvalToken: other
  })
  yield* Console.log(`book with another date on an approved token -> ${outcome(changed)}`)

  // Guardrail, contract and state: a budget kept in the billing role's state.
  const charges = [
    { amount: 400, memo: "hotel deposit" },
    { amount: 50, memo: "card 4111111111111111" },
    { amount: 700, memo: "flights" },
    { amount: 600, memo: "flights" }
  ]
  for (const params of charges) {
    const response = yield* agent.execute({ action: "charge", params })
    yield* Console.log(`charge(${params.amount}, "${params.memo.slice(0, 4)}…") -> ${outcome(response)}`)
  }
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
