import { mkdtempSync, rmSync } from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { InMemoryMcp } from "@rolecraft/testing"
import { Effect, Exit, Option, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import type { ApprovalRequired } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import * as ApprovalKernel from "../src/internal/pipeline/approval.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

/** The seeds' approval-guarded `book`, counting the bookings it makes. */
const makeTravel = (booked: Ref.Ref<number>, seen?: Ref.Ref<ReadonlyArray<unknown>>) =>
  Role.make({
    identity: identity("travel"),
    hooks: {
      before: (_action, args) =>
        seen === undefined
          ? args
          : Effect.as(
              Ref.update(seen, (all) => [...all, args]),
              args
            )
    },
    actions: {
      book: Action.local({
        description: "Book a hotel room",
        parameters: { hotelId: Schema.String, checkIn: Schema.String },
        run: ({ hotelId, checkIn }) =>
          Effect.as(
            Ref.update(booked, (n) => n + 1),
            `booked ${hotelId} from ${checkIn}`
          )
      }).pipe(Action.requireApproval({ reason: "Books and charges a hotel", ttl: "10 minutes" })),
      cancel: Action.local({
        description: "Cancel a booking",
        parameters: { hotelId: Schema.String, checkIn: Schema.String },
        run: ({ hotelId }) => `cancelled ${hotelId}`
      }).pipe(Action.requireApproval({ reason: "Cancels a booking" })),
      nights: Action.local({
        description: "Count nights",
        parameters: { n: Schema.Number },
        run: ({ n }) => n
      })
    }
  })

const args = { hotelId: "h-42", checkIn: "2026-11-02" }

const approvalError = <A, E>(exit: Exit.Exit<A, E>): ApprovalRequired => {
  const error = Option.getOrThrow(Exit.findErrorOption(exit)) as { _tag: string }
  assert.strictEqual(error._tag, "ApprovalRequired")
  return error as unknown as ApprovalRequired
}

let correlation = 0

/**
 * Calls `book` without a token and approves the pending token it gets back. Each is its own call (its own
 * correlation id): the same call asked for again would get its live pending token back.
 */
const approvedToken = (agent: Agent.Agent<any, any>, params: Readonly<Record<string, unknown>> = args) =>
  Effect.gen(function* () {
    const response = yield* agent.execute({ action: "book", params, correlationId: `approved-${++correlation}` })
    assert.isFalse(response.success)
    const refused = (response.success ? undefined : response.error) as ApprovalRequired
    assert.strictEqual(refused._tag, "ApprovalRequired")
    const id = refused.pendingTokenId!
    yield* agent.approvals.approve(id, "alice")
    return id
  })

describe("Approval (SPEC §9 step 2)", () => {
  it("strip removes the reserved parameter without mutating; the request's token wins", () => {
    const params = { a: 1, _approval_token: "t-param" }
    assert.deepStrictEqual(ApprovalKernel.strip(params), { params: { a: 1 }, token: "t-param" })
    assert.deepStrictEqual(ApprovalKernel.strip(params, "t-request"), { params: { a: 1 }, token: "t-request" })
    assert.deepStrictEqual(params, { a: 1, _approval_token: "t-param" })
    assert.deepStrictEqual(ApprovalKernel.strip({ a: 1, _approval_token: 7 }), { params: { a: 1 }, token: "" })
    assert.deepStrictEqual(ApprovalKernel.strip({ a: 1 }), { params: { a: 1 }, token: undefined })
  })

  it.effect("without a token: APPROVAL with check missing, reason and a pending token bound to the call", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      yield* TestClock.adjust("5 seconds")
      const error = approvalError(yield* Effect.exit(agent.executeAction("book", args)))
      assert.deepStrictEqual(
        [error.category, error.check, error.reason],
        ["APPROVAL", "missing", "Books and charges a hotel"]
      )
      const token = Option.getOrThrow(yield* agent.approvals.get(error.pendingTokenId!))
      assert.deepStrictEqual(token.binding, {
        agentId: "planner",
        action: "book",
        tool: undefined,
        argumentsDigest: ApprovalStore.digest(args)
      })
      assert.deepStrictEqual([token.status, token.requestedAt, token.expiresAt], ["pending", 5000, 5000 + 600_000])
      assert.strictEqual(yield* Ref.get(booked), 0)
    })
  )

  it.effect("an approved token runs the action once; replay, pending, unknown and rejected tokens are refused", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const call = (token: string) => Effect.exit(agent.executeAction("book", { ...args, _approval_token: token }))

      const pending = approvalError(yield* Effect.exit(agent.executeAction("book", args))).pendingTokenId!
      assert.strictEqual(approvalError(yield* call(pending)).check, "pending")
      yield* agent.approvals.approve(pending, "alice")
      assert.deepStrictEqual(yield* call(pending), Exit.succeed("booked h-42 from 2026-11-02"))
      const replay = approvalError(yield* call(pending))
      assert.strictEqual(replay.check, "used")
      // SPEC §9 step 2: a used token is refused with a fresh pending token for the same call.
      assert.notStrictEqual(replay.pendingTokenId, undefined)
      assert.notStrictEqual(replay.pendingTokenId, pending)
      assert.strictEqual(approvalError(yield* call("made-up-token")).check, "unknown")

      const toReject = approvalError(yield* Effect.exit(agent.executeAction("book", args))).pendingTokenId!
      yield* agent.approvals.reject(toReject, "alice", "over budget")
      const rejected = approvalError(yield* call(toReject))
      assert.strictEqual(rejected.check, "rejected")
      // A rejection is a person's answer: nobody is asked again.
      assert.strictEqual(rejected.pendingTokenId, undefined)
      assert.strictEqual(yield* Ref.get(booked), 1)
    })
  )

  it.effect(
    "every refusal but a rejected token carries the live pending token of the call as it was made (unknown, pending, expired, used, arguments, action, agent): one per call",
    () =>
      Effect.gen(function* () {
        const booked = yield* Ref.make(0)
        const role = makeTravel(booked)
        const agent = yield* Agent.make({ id: "planner", roles: [role] })
        const other = yield* Agent.make({ id: "intruder", roles: [role] })
        const changed = { ...args, checkIn: "2026-11-03" }
        const used = yield* approvedToken(agent)
        yield* agent.executeAction("book", { ...args, _approval_token: used })
        const pending = approvalError(yield* Effect.exit(agent.executeAction("book", args))).pendingTokenId!
        const expiring = yield* approvedToken(agent)
        const forArgs = yield* approvedToken(agent)
        const forAction = yield* approvedToken(agent)
        const forAgent = yield* approvedToken(agent)
        const cases: ReadonlyArray<
          readonly [string, string, string, string, Readonly<Record<string, unknown>>, Agent.Agent<any, any>]
        > = [
          ["unknown", "made-up-token", "planner", "book", args, agent],
          ["pending", pending, "planner", "book", args, agent],
          ["used", used, "planner", "book", args, agent],
          ["arguments", forArgs, "planner", "book", changed, agent],
          ["action", forAction, "planner", "cancel", args, agent],
          ["agent", forAgent, "intruder", "book", args, other]
        ]
        // The live pending token of each call (agent, action, arguments): refusals of one call share it.
        const live = new Map<string, string>([[ApprovalStore.digest(["planner", "book", args]), pending]])
        const check = (
          expected: string,
          token: string,
          agentId: string,
          action: string,
          params: Readonly<Record<string, unknown>>,
          caller: Agent.Agent<any, any>
        ) =>
          Effect.gen(function* () {
            const refusal = approvalError(
              yield* Effect.exit(
                Effect.provideService(
                  caller.executeAction(action, { ...params, _approval_token: token }),
                  ApprovalStore.ApprovalStore,
                  agent.approvals
                )
              )
            )
            assert.strictEqual(refusal.check, expected)
            const fresh = refusal.pendingTokenId
            assert.isDefined(fresh, expected)
            // A pending token presented is that call's live one: it is the one to approve.
            if (expected === "pending") assert.strictEqual(fresh, token, expected)
            else assert.notStrictEqual(fresh, token, expected)
            const call = ApprovalStore.digest([agentId, action, params])
            assert.strictEqual(fresh, live.get(call) ?? fresh, expected)
            live.set(call, fresh!)
            const stored = Option.getOrThrow(yield* agent.approvals.get(fresh!))
            assert.strictEqual(stored.status, "pending", expected)
            assert.deepStrictEqual(
              stored.binding,
              {
                agentId,
                action,
                tool: undefined,
                argumentsDigest: ApprovalStore.digest(params)
              },
              expected
            )
          })
        for (const [expected, token, agentId, action, params, caller] of cases) {
          yield* check(expected, token, agentId, action, params, caller)
        }
        assert.strictEqual(live.size, 4)
        yield* TestClock.adjust("11 minutes")
        // The call's pending token has expired meanwhile: it is asked for again with a new one.
        live.delete(ApprovalStore.digest(["planner", "book", args]))
        yield* check("expired", expiring, "planner", "book", args, agent)
        assert.notStrictEqual(live.get(ApprovalStore.digest(["planner", "book", args])), pending)
        assert.strictEqual(yield* Ref.get(booked), 1)
      })
  )

  it.effect("a token bound to other arguments, another action or another agent is refused and not burnt", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const role = makeTravel(booked)
      const agent = yield* Agent.make({ id: "planner", roles: [role] })
      const other = yield* Agent.make({ id: "intruder", roles: [role] })
      const token = yield* approvedToken(agent)
      const changed = { ...args, checkIn: "2026-11-03" }
      const refusals = [
        yield* Effect.exit(agent.executeAction("book", { ...changed, _approval_token: token })),
        // @ts-expect-error an extra argument does not compile; it is refused here as a changed call
        yield* Effect.exit(agent.executeAction("book", { ...args, extra: "x", _approval_token: token })),
        yield* Effect.exit(agent.executeAction("cancel", { ...args, _approval_token: token })),
        yield* Effect.exit(
          Effect.provideService(
            other.executeAction("book", { ...args, _approval_token: token }),
            ApprovalStore.ApprovalStore,
            agent.approvals
          )
        )
      ].map((exit) => approvalError(exit).check)
      assert.deepStrictEqual(refusals, ["arguments", "arguments", "action", "agent"])
      assert.strictEqual(yield* Ref.get(booked), 0)
      assert.strictEqual(
        yield* agent.executeAction("book", { ...args, _approval_token: token }),
        "booked h-42 from 2026-11-02"
      )
    })
  )

  it.effect("the digest is of the raw arguments: key order does not matter, a converted form does", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const token = yield* approvedToken(agent, { checkIn: "2026-11-02", hotelId: "h-42" })
      assert.strictEqual(
        yield* agent.executeAction("book", { ...args, _approval_token: token }),
        "booked h-42 from 2026-11-02"
      )
      const numeric = yield* Agent.make({ id: "n", roles: [makeTravel(booked)] })
      // @ts-expect-error a number for a string field does not compile; at run time it is converted
      const asString = approvalError(yield* Effect.exit(numeric.executeAction("book", { hotelId: 42, checkIn: "x" })))
      yield* numeric.approvals.approve(asString.pendingTokenId!, "alice")
      const exit = yield* Effect.exit(
        numeric.executeAction("book", { hotelId: "42", checkIn: "x", _approval_token: asString.pendingTokenId! })
      )
      assert.strictEqual(approvalError(exit).check, "arguments")
    })
  )

  it.effect("an expired token is refused (TestClock past the action's ttl)", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const token = yield* approvedToken(agent)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(
        approvalError(yield* Effect.exit(agent.executeAction("book", { ...args, _approval_token: token }))).check,
        "expired"
      )
      const fresh = yield* approvedToken(agent)
      yield* TestClock.adjust("9 minutes")
      assert.strictEqual(
        yield* agent.executeAction("book", { ...args, _approval_token: fresh }),
        "booked h-42 from 2026-11-02"
      )
      assert.strictEqual(yield* Ref.get(booked), 1)
    })
  )

  it.effect("100 concurrent calls with one approved token: exactly one runs", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const token = yield* approvedToken(agent)
      const exits = yield* Effect.forEach(
        Array.from({ length: 100 }),
        () => Effect.exit(agent.executeAction("book", { ...args, _approval_token: token })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(exits.filter(Exit.isSuccess).length, 1)
      assert.deepStrictEqual(
        [...new Set(exits.filter(Exit.isFailure).map((exit) => approvalError(exit).check))],
        ["used"]
      )
      assert.strictEqual(yield* Ref.get(booked), 1)
    })
  )

  it.effect("the reserved parameter is removed before the before hook sees the arguments", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const seen = yield* Ref.make<ReadonlyArray<unknown>>([])
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked, seen)] })
      const token = yield* approvedToken(agent)
      yield* agent.executeAction("book", { ...args, _approval_token: token })
      yield* agent.executeAction("nights", { n: 2, _approval_token: "ignored without a policy" })
      assert.deepStrictEqual(yield* Ref.get(seen), [args, { n: 2 }])
    })
  )

  it.effect("ActionRequest.approvalToken carries the token; the response reports a refusal", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const refused = yield* agent.execute({ action: "book", params: args })
      assert.isFalse(refused.success)
      const pending = refused.success ? "" : (refused.error as ApprovalRequired).pendingTokenId!
      yield* agent.approvals.approve(pending, "alice")
      const response = yield* agent.execute({ action: "book", params: args, approvalToken: pending })
      assert.deepStrictEqual([response.success, response.value], [true, "booked h-42 from 2026-11-02"])
    })
  )

  it.effect("an ApprovalStore provided to the call is used instead of the agent's own", () =>
    Effect.gen(function* () {
      const booked = yield* Ref.make(0)
      const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
      const shared = ApprovalStore.makeMemory()
      const exit = yield* Effect.exit(
        Effect.provideService(agent.executeAction("book", args), ApprovalStore.ApprovalStore, shared)
      )
      const pending = approvalError(exit).pendingTokenId!
      assert.isTrue(Option.isSome(yield* shared.get(pending)))
      assert.isTrue(Option.isNone(yield* agent.approvals.get(pending)))
    })
  )

  it.effect("mcpTool actions bind the tool: a token for one tool is refused for another", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: identity("fx"),
        actions: {
          currency: Action.mcpTool({ description: "Currency tools", server: "http://127.0.0.1:1/mcp" }).pipe(
            Action.requireApproval({ reason: "Moves money" })
          )
        }
      })
      const agent = yield* Agent.make({ id: "fx-agent", roles: [role] })
      const params = { tool: "convert", arguments: { amount: 10, from: "EUR", to: "USD" } }
      const pending = approvalError(yield* Effect.exit(agent.executeAction("currency", params))).pendingTokenId!
      const token = Option.getOrThrow(yield* agent.approvals.get(pending))
      assert.deepStrictEqual(token.binding, {
        agentId: "fx-agent",
        action: "currency",
        tool: "convert",
        argumentsDigest: ApprovalStore.digest(params)
      })
      yield* agent.approvals.approve(pending, "alice")
      const otherTool = yield* Effect.exit(
        agent.executeAction("currency", { ...params, tool: "transfer", _approval_token: pending })
      )
      assert.strictEqual(approvalError(otherTool).check, "action")
      const passed = yield* Effect.exit(agent.executeAction("currency", { ...params, _approval_token: pending }))
      const afterApproval = Option.getOrThrow(Exit.findErrorOption(passed)) as { _tag: string }
      assert.notStrictEqual(afterApproval._tag, "ApprovalRequired", "the approval step passed; the run step decides")
    }).pipe(Effect.provide(InMemoryMcp.layer({})))
  )

  it.effect("a durable store: a token approved before a restart runs the action after it, once", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "rolecraft-approval-"))
      const durable = ApprovalStore.layerSqlite({ filename: join(dir, "approvals.db") })
      const booked = yield* Ref.make(0)
      const role = makeTravel(booked)
      const token = yield* Effect.scoped(
        Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "planner", roles: [role] })
          const pending = approvalError(yield* Effect.exit(agent.executeAction("book", args))).pendingTokenId!
          yield* agent.approvals.approve(pending, "alice")
          return pending
        }).pipe(Effect.provide(durable))
      )
      const afterRestart = yield* Effect.scoped(
        Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "planner", roles: [role] })
          const first = yield* agent.executeAction("book", { ...args, _approval_token: token })
          const replay = yield* Effect.exit(agent.executeAction("book", { ...args, _approval_token: token }))
          return [first, approvalError(replay).check]
        }).pipe(Effect.provide(durable))
      )
      assert.deepStrictEqual(afterRestart, ["booked h-42 from 2026-11-02", "used"])
      assert.strictEqual(yield* Ref.get(booked), 1)
      rmSync(dir, { recursive: true })
    })
  )

  describe("the approval step at the store boundary", () => {
    /** A store counting what it stores, with the production rules. */
    const counting = (storage: ApprovalStore.Storage = ApprovalStore.memoryStorage()) => {
      const inserted: Array<ApprovalStore.Token> = []
      const store = ApprovalStore.make({
        ...storage,
        insert: (token) =>
          Effect.andThen(
            Effect.sync(() => inserted.push(token)),
            storage.insert(token)
          )
      })
      return { store, inserted }
    }

    it.effect("refusals of one call repeated (no token, forged tokens, at once) share one pending token (C59)", () =>
      Effect.gen(function* () {
        const booked = yield* Ref.make(0)
        const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
        const { store, inserted } = counting()
        const using = Effect.provideService(ApprovalStore.ApprovalStore, store)
        const call = (i: number) =>
          Effect.exit(
            using(agent.executeAction("book", i % 2 === 0 ? args : { ...args, _approval_token: `forged-${i}` }))
          )
        const one = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          call
        )
        const atOnce = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          call,
          {
            concurrency: "unbounded"
          }
        )
        const refusals = [...one, ...atOnce].map(approvalError)
        assert.deepStrictEqual(new Set(refusals.map((refusal) => refusal.check)), new Set(["missing", "unknown"]))
        assert.strictEqual(new Set(refusals.map((refusal) => refusal.pendingTokenId)).size, 1)
        assert.strictEqual(inserted.length, 1)
        // Another call (other arguments) is asked for with a token of its own.
        const other = approvalError(
          yield* Effect.exit(using(agent.executeAction("book", { ...args, hotelId: "h-43" })))
        )
        assert.notStrictEqual(other.pendingTokenId, refusals[0]?.pendingTokenId)
        assert.strictEqual(inserted.length, 2)
        assert.strictEqual(yield* Ref.get(booked), 0)
      }).pipe(
        Effect.provideServiceEffect(
          ApprovalStore.ApprovalStore,
          Effect.sync(() => counting().store)
        )
      )
    )

    const stores: ReadonlyArray<readonly [string, () => ApprovalStore.Storage]> = [
      ["memory", ApprovalStore.memoryStorage],
      ["sqlite", () => ApprovalStore.sqliteStorage(new DatabaseSync(":memory:"))]
    ]
    for (const [name, storage] of stores) {
      it.effect(
        `${name}: an MCP tool name the store cannot hold is VALIDATION naming the field, not a defect (C52)`,
        () =>
          Effect.gen(function* () {
            const role = Role.make({
              identity: identity("fx"),
              actions: {
                currency: Action.mcpTool({ description: "Currency tools", server: "http://127.0.0.1:1/mcp" }).pipe(
                  Action.requireApproval({ reason: "Moves money" })
                )
              }
            })
            const agent = yield* Agent.make({ id: "fx-agent", roles: [role] })
            for (const tool of ["con\u0000vert", "con\uD800vert"]) {
              const exit = yield* Effect.exit(
                agent
                  .executeAction("currency", { tool, arguments: { amount: 10 } })
                  .pipe(Effect.provideService(ApprovalStore.ApprovalStore, ApprovalStore.make(storage())))
              )
              assert.isFalse(Exit.hasDies(exit))
              const error = Option.getOrThrow(Exit.findErrorOption(exit)) as {
                readonly _tag: string
                readonly category: string
                readonly issues?: ReadonlyArray<{ readonly path: string }>
              }
              assert.deepStrictEqual(
                [error._tag, error.category, error.issues?.map((issue) => issue.path)],
                ["ValidationError", "VALIDATION", ["tool"]]
              )
            }
          }).pipe(Effect.provide(InMemoryMcp.layer({})))
      )
    }

    it.effect("a store that cannot be reached is TRANSIENT for the call; a row that does not decode, EXECUTION", () =>
      Effect.gen(function* () {
        const booked = yield* Ref.make(0)
        const agent = yield* Agent.make({ id: "planner", roles: [makeTravel(booked)] })
        const database = new DatabaseSync(":memory:")
        const store = ApprovalStore.make(ApprovalStore.sqliteStorage(database))
        const using = Effect.provideService(ApprovalStore.ApprovalStore, store)
        const pending = approvalError(yield* Effect.exit(using(agent.executeAction("book", args)))).pendingTokenId!
        yield* store.approve(pending, "alice")
        database.prepare("UPDATE rolecraft_approval_tokens SET status = 'bogus'").run()
        const corrupt = Option.getOrThrow(
          Exit.findErrorOption(
            yield* Effect.exit(using(agent.executeAction("book", { ...args, _approval_token: pending })))
          )
        ) as { readonly _tag: string; readonly category: string; readonly message: string }
        assert.deepStrictEqual([corrupt._tag, corrupt.category], ["ExecutionFailure", "EXECUTION"])
        assert.include(corrupt.message, "the approval store (SQLite): the stored token row")
        database.close()
        const down = Option.getOrThrow(
          Exit.findErrorOption(yield* Effect.exit(using(agent.executeAction("book", args))))
        ) as { readonly _tag: string; readonly category: string; readonly retryable: boolean; readonly message: string }
        assert.deepStrictEqual([down._tag, down.category, down.retryable], ["TransientFailure", "TRANSIENT", true])
        assert.include(down.message, "the approval store (SQLite) could not")
        assert.strictEqual(yield* Ref.get(booked), 0)
      })
    )
  })
})
